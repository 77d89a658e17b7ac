"""Gemini CLI's chat JSONL (~/.gemini/tmp/<project>/chats/session-*.jsonl;
measured with 0.61.0, tests/support/AGENTS-MEASURED.md).

A header line (`sessionId`, `startTime`), `{"$set": ...}` patches, and
message lines `{id, timestamp, type: user|gemini, content, tokens, model,
toolCalls}`.  A message line may be written again under the same `id` as it
completes (the last one holds its tool calls): usage is de-duplicated by id
by its readers, as a Claude response's.  `tokens.input` is the prompt's size
(cached tokens included).  What hooks added arrives inside the prompt
wrapped in `<hook_context>`; a tool result's output is inside the function
response (`response.output`, or `response.error` for a failure).
"""

from ..records import Compaction, Delivered, Prompt, ToolCall, ToolResult, Usage, clamp

MARKS = {
    "usage": (b'"tokens"',),
    "tool_call": (b'"toolCalls"',),
    "tool_result": (b'"functionResponse"',),
    "prompt": (b'"user"',),
    "delivered": (b"<hook_context>",),
    "compaction": (b'"compression"', b'"compressed"'),
}
HOOK_OPEN, HOOK_CLOSE = "<hook_context>", "</hook_context>"


def records_of(obj):
    kind = obj.get("type")
    if kind == "gemini":
        return _model(obj)
    if kind == "user":
        return _user(obj)
    if kind in ("compression", "compressed"):
        return [Compaction(str(obj.get("id") or ""))]
    return []


def _model(obj):
    out = []
    tokens = obj.get("tokens")
    if isinstance(tokens, dict):
        cached = clamp(tokens.get("cached"))
        total_in = clamp(tokens.get("input"))
        out.append(Usage(input=max(0, total_in - cached), output=clamp(tokens.get("output")) + clamp(tokens.get("thoughts")),
                         cache_read=cached, model=obj.get("model") if isinstance(obj.get("model"), str) else None,
                         response=obj.get("id"), context=total_in))
    for call in obj.get("toolCalls") or ():
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            out.append(ToolCall(str(call.get("id") or ""), call["name"], call.get("args")))
    return out


def _user(obj):
    out, texts = [], []
    for part in obj.get("content") or ():
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        response = part.get("functionResponse")
        if isinstance(response, dict):
            out.append(_result(response))
    text = "\n".join(texts)
    hooks = hook_texts(text)
    if hooks:
        out.append(Delivered("hook", texts=hooks))
    prompt = strip_hooks(text).strip()
    if prompt and not prompt.startswith("<session_context>"):
        out.append(Prompt(prompt))
    return out


def _result(response):
    body = response.get("response")
    text, failed = "", False
    if isinstance(body, dict):
        if isinstance(body.get("error"), str):
            text, failed = body["error"], True
        elif isinstance(body.get("output"), str):
            text = body["output"]
    return ToolResult(str(response.get("id") or ""), text, is_error=failed)


def hook_texts(text):
    """The texts hooks added, each as given (the agent escapes < and > in them)."""
    out, at = [], 0
    while True:
        start = text.find(HOOK_OPEN, at)
        if start < 0:
            return out
        end = text.find(HOOK_CLOSE, start)
        if end < 0:
            return out
        out.append(text[start + len(HOOK_OPEN):end])
        at = end + len(HOOK_CLOSE)


def strip_hooks(text):
    for piece in hook_texts(text):
        text = text.replace(HOOK_OPEN + piece + HOOK_CLOSE, "")
    return text
