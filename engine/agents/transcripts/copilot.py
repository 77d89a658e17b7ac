"""Copilot CLI's session events (~/.copilot/session-state/<id>/events.jsonl;
measured with 1.0.102, tests/support/AGENTS-MEASURED.md).

Lines are `{type, data, id, timestamp, parentId}`:
- `session.start`: `copilotVersion`, `selectedModel`;
- `user.message`: the prompt (`content`);
- `session.usage_record`: one model call's `usage` (`inputTokens`,
  `outputTokens`, `cacheReadTokens`, `cacheWriteTokens`, `maxPromptTokens`,
  `model`, `apiCallId`);
- `assistant.message`: `toolRequests` (`toolCallId`, `name`, `arguments`);
- `tool.execution_complete`: `result.content` is what the model read
  (`success` false for a failure);
- `hook.end`: a hook's `output` (its `additionalContext`);
- `session.compaction_complete` (documented): a compaction.
"""

from ..records import Compaction, Delivered, Prompt, ToolCall, ToolResult, Usage, Version, Window, clamp

MARKS = {
    "version": (b'"session.start"',),
    "window": (b'"session.start"',),
    "usage": (b'"session.usage_record"',),
    "tool_call": (b'"toolRequests"',),
    "tool_result": (b'"tool.execution_complete"',),
    "prompt": (b'"user.message"',),
    "delivered": (b'"hook.end"',),
    "compaction": (b"compaction",),
}


def records_of(obj):
    kind, data = obj.get("type"), obj.get("data")
    if not isinstance(data, dict) or not isinstance(kind, str):
        return []
    handler = _BY_TYPE.get(kind)
    if handler is not None:
        return handler(data)
    if kind.startswith("session.compaction") and kind.endswith("complete"):
        return [Compaction(str(obj.get("id") or ""))]
    return []


def _start(data):
    out = []
    if isinstance(data.get("copilotVersion"), str):
        out.append(Version(data["copilotVersion"]))
    if isinstance(data.get("selectedModel"), str):
        out.append(Window(model=data["selectedModel"]))
    return out


def _prompt(data):
    return [Prompt(data["content"])] if isinstance(data.get("content"), str) else []


def _usage(data):
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return []
    model = usage.get("model") if isinstance(usage.get("model"), str) else None
    # inputTokens counts the cached ones too (the Responses API's
    # input_tokens, which Copilot passes on): the context is inputTokens.
    total_in, cached = clamp(usage.get("inputTokens")), clamp(usage.get("cacheReadTokens"))
    rec = Usage(input=max(0, total_in - cached), output=clamp(usage.get("outputTokens")), cache_read=cached,
                cache_write=clamp(usage.get("cacheWriteTokens")), model=model, response=usage.get("apiCallId"),
                window=clamp(usage.get("maxPromptTokens")) or None, context=total_in)
    return [rec]


def _calls(data):
    out = []
    for req in data.get("toolRequests") or ():
        if isinstance(req, dict) and isinstance(req.get("name"), str):
            out.append(ToolCall(str(req.get("toolCallId") or ""), req["name"], req.get("arguments")))
    return out


def _result(data):
    result = data.get("result")
    text = result.get("content") if isinstance(result, dict) else None
    if not isinstance(text, str):
        text = ""
    return [ToolResult(str(data.get("toolCallId") or ""), text, is_error=data.get("success") is False)]


def _hook(data):
    output = data.get("output")
    text = output.get("additionalContext") if isinstance(output, dict) else None
    return [Delivered("hook", texts=[text])] if isinstance(text, str) and text else []


_BY_TYPE = {
    "session.start": _start,
    "user.message": _prompt,
    "session.usage_record": _usage,
    "assistant.message": _calls,
    "tool.execution_complete": _result,
    "hook.end": _hook,
}
