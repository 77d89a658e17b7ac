"""Gemini CLI's chat JSONL (~/.gemini/tmp/<project>/chats/session-*.jsonl;
measured with 0.61.0, tests/support/AGENTS-MEASURED.md, and the sample in
tests/data/transcripts/gemini/).

A header line (`sessionId`, `projectHash` = sha256 of the project's folder,
`startTime`; written again when a session is resumed), `{"$set": ...}`
patches, and message lines `{id, timestamp, type: user|gemini, content,
tokens, model, toolCalls}`.  A message line may be written again under the
same `id` as it completes (the last one holds its tool calls): usage is
de-duplicated by id by its readers, as a Claude response's.  `tokens.input`
is the prompt's size (cached tokens included).  What hooks added arrives
inside the prompt, or inside a tool's function response, wrapped in
`<hook_context>`; a tool result's output is inside the function response
(`response.output`, or `response.error` for a failure; the shell's output
ends with an `Exit Code: N` line when N is not 0).

A compression has no record of its own: a `$set` of `messages` rewrites the
history.  A resumed session's `$set` restores the history (as long as it
was, some messages split in two under new ids); a compression's is shorter
and brings messages the file never had (the summary): read forwards, that
is a compaction.  It keeps the first message, then the summary and its
reply, then the newest turns written again under new ids: what hooks added
to those is still in the context (a kept delivery).
"""

from engine.base.digest import sha256

from ..records import (
    Compaction,
    Delivered,
    Prompt,
    Resume,
    Session,
    Summary,
    ToolCall,
    ToolResult,
    Usage,
    tokens,
    usage_figures,
)

# A message line carries its tokens with its tool calls: no usage is written after them.
USAGE_AFTER_OUTPUT = False
# A compression is a `$set` of a history shorter than the one before it:
# read a tail forwards (transcripts.tail), not a line alone.
READS_ON = True
MARKS = {
    "session": (b'"projectHash"',),
    "resume": (b'"projectHash"',),
    "usage": (b'"tokens"',),
    "tool_call": (b'"toolCalls"',),
    "tool_result": (b'"functionResponse"',),
    "prompt": (b'"user"',),
    "delivered": (b"<hook_context>",),
    "compaction": (b'"$set"',),
    "summary": (b'"$set"',),
}
# A compression's (and a resume's) history patch begins so (as Gemini
# writes it, and as a file written again with spaces); every other patch
# names one field (lastUpdated, sessionId...): what a hook tests before it
# reads the epochs (transcripts.compaction_written_after).
EPOCH_MARKS = (b'{"$set":{"messages":', b'{"$set": {"messages":')
HOOK_OPEN, HOOK_CLOSE = "<hook_context>", "</hook_context>"
EXIT = "\nExit Code: "


def looks_like(obj):
    """The header (a session id and the project's hash, no line type), a
    patch, or a message line (no Claude `message` envelope)."""
    if "type" not in obj:
        return isinstance(obj.get("sessionId"), str) and "projectHash" in obj or isinstance(obj.get("$set"), dict)
    return obj.get("type") in ("user", "gemini") and "message" not in obj and "content" in obj


def project_key(cwd):
    """The header's projectHash of a project folder."""
    return sha256(cwd.encode("utf-8", "surrogatepass")).hexdigest()


def records_of(obj, seen=None):
    """The records of one line; `seen` (a dict kept over a forward reading)
    tells a compression from a resumed session's history."""
    kind = obj.get("type")
    if kind == "gemini":
        out = _model(obj)
    elif kind == "user":
        out = _user(obj)
    elif kind is None:
        out = _header(obj, seen) + _patch(obj, seen)
    else:
        out = []
    if seen is not None and isinstance(obj.get("id"), str):
        seen.setdefault("ids", set()).add(obj["id"])
        seen["answered"] = seen.get("answered") or kind == "gemini"
    time = obj.get("timestamp") or obj.get("startTime")
    for rec in out:
        rec.time = time if isinstance(time, str) else None
    return out


def _header(obj, seen):
    """The session; a header on any line but the file's first is a resume
    (Gemini writes the header again when a session is resumed)."""
    if not isinstance(obj.get("sessionId"), str) or "projectHash" not in obj:
        return []
    project = obj.get("projectHash") if isinstance(obj.get("projectHash"), str) else None
    out = [Session(obj["sessionId"], project=project)]
    if seen is not None and seen.get("first_line") is False:
        out.append(Resume())
    return out


def _patch(obj, seen):
    patch = obj.get("$set")
    messages = patch.get("messages") if isinstance(patch, dict) else None
    if seen is None or not isinstance(messages, list):
        return []
    ids = {m.get("id") for m in messages if isinstance(m, dict) and isinstance(m.get("id"), str)}
    known = seen.setdefault("ids", set())
    new, shorter = ids - known, len(messages) < len(known)
    known |= ids
    # after the model answered in this file, a history shorter than the one
    # it had, with messages it never had (a resume restores a longer one)
    if not (seen.get("answered") and new and shorter):
        return []
    written = [m for m in messages if isinstance(m, dict) and m.get("id") in new]
    summary = next((m for m in written if m.get("type") == "user"), {})
    texts = [p["text"] for p in summary.get("content") or () if isinstance(p, dict) and isinstance(p.get("text"), str)]
    prompts, delivered = _kept(written)
    return [Compaction(sorted(new)[0][:8], kept_prompts=prompts), Summary("\n".join(texts)), *delivered]


def _kept(written):
    """What a compression keeps after its summary (the newest turns, written
    again under new ids; measured with 0.61.0): how many prompts they hold
    after the summary's reply (where they begin), and what hooks added to
    them, still in the context, so in view in the epoch it begins."""
    prompts, delivered, replied = 0, [], False
    for m in written:
        if m.get("type") == "gemini":
            replied = True
        elif m.get("type") == "user":
            recs = _user(m)
            delivered += [Delivered("hook", texts=r.texts, kept=True) for r in recs if r.kind == "delivered"]
            if replied and any(r.kind == "prompt" for r in recs):
                prompts += 1
    return prompts, delivered


def _model(obj):
    out = []
    counts = obj.get("tokens")
    figures = usage_figures(counts.get("input"), counts.get("cached")) if isinstance(counts, dict) else None
    if figures is not None:  # a figure that is no number: the usage is left out
        total_in, cached = figures
        output = (tokens(counts.get("output")) or 0) + (tokens(counts.get("thoughts")) or 0)
        out.append(Usage(input=max(0, total_in - cached), output=output, cache_read=cached,
                         model=obj.get("model") if isinstance(obj.get("model"), str) else None,
                         response=obj.get("id") if isinstance(obj.get("id"), str) else None, context=total_in))
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
            out.extend(_result(response))
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
            failed = _exit_code(text) not in (None, "0")
    out = [ToolResult(str(response.get("id") or ""), text, is_error=failed)]
    hooks = hook_texts(text)
    if hooks:  # AfterTool's context, inside the function response
        out.append(Delivered("hook", texts=hooks))
    return out


def _exit_code(text):
    at = text.rfind(EXIT)
    if at < 0:
        return None
    code = text[at + len(EXIT):].split("\n", 1)[0].strip()
    return code if code.isdigit() else None


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
