"""Claude Code's session JSONL (facts: DESIGN.md "Transcripts").

- every line may carry `version`, `timestamp`, `sessionId`, `cwd` and
  `permissionMode`; `isSidechain` marks a subagent's line;
- `assistant` lines hold `message.usage` (one response spans several lines
  sharing `message.id`, each repeating it; its `cache_creation` splits the
  cache writes by lifetime, 5-minute or 1-hour) and `tool_use` blocks; the model
  `<synthetic>` marks records the agent wrote itself (API errors); the
  model asked for is the line's `requestedModel` (2.1.332), which holds a
  tag `message.model` lacks (`claude-opus-4-6[1m]`: the long window);
- `user` lines hold the prompt (a string, or text and image blocks) or
  `tool_result` blocks (`is_error`; content a string or a list of blocks;
  an error wrapper at the text's start is the consumers' to read, from
  their YAML), with the tool's own output shape
  (what its hooks receive) in the line's `toolUseResult`; `isMeta` lines
  and the compaction's summary (`isCompactSummary`) are not prompts;
- a `system` line of subtype `compact_boundary` opens a new epoch, one of
  subtype `api_error` is a failed model call the agent retries; a
  `<synthetic>` assistant line with `isApiErrorMessage` is the failure it
  showed (2.1.56);
- 2.1.328 and later write `attachment` lines: `instructions` (files the agent
  loaded), `nested_memory` (a path-scoped rule), `hook_additional_context`
  (what hooks added); older versions put a hook's output inside a user
  line's text (an `isMeta` line, or one of WRAPPERS) or a system line's.
"""

from ..records import ApiError, Compaction, Delivered, Prompt, Session, Summary, ToolCall, ToolResult, Usage, Version, tokens, usage_figures

# Each line of a response carries its usage: none is written after its output.
USAGE_AFTER_OUTPUT = False
MARKS = {
    "version": (b'"version"',),
    "session": (b'"sessionId"',),
    "usage": (b'"assistant"',),
    "tool_call": (b'"tool_use"',),
    "tool_result": (b'"tool_result"',),
    "prompt": (b'"user"',),
    "compaction": (b"compact_boundary",),
    "summary": (b'"isCompactSummary"',),
    "delivered": (b'"attachment"', b'"isMeta"', b"hook"),
    "api_error": (b"api_error",),
}
SYNTHETIC = "<synthetic>"
# Where versions before attachment lines put a hook's output.
WRAPPERS = ("<user-prompt-submit-hook>", "<system-reminder>", "hook additional context")
# Line types of this format (a file's first lines: summary, snapshot, queue, or a message).
TYPES = ("user", "assistant", "system", "summary", "attachment", "progress", "file-history-snapshot",
         "queue-operation")


def looks_like(obj):
    """A line of this format: one of its line types, and none of the other
    formats' envelopes (Codex's payload, Copilot's data)."""
    return obj.get("type") in TYPES and "payload" not in obj and "data" not in obj


def project_key(cwd):
    return cwd


def records_of(obj, seen=None):
    """The records of one line (`seen`: unused, the format needs no memory of earlier lines)."""
    out = []
    version = obj.get("version")
    if isinstance(version, str):
        out.append(Version(version))
    session = _session(obj)
    if session is not None:
        out.append(session)
    kind = obj.get("type")
    if kind == "assistant":
        _assistant(obj, out)
    elif kind == "user":
        _user(obj, out)
    elif kind == "system":
        _system(obj, out)
    elif kind == "attachment":
        _attachment(obj.get("attachment"), out)
    side = bool(obj.get("isSidechain"))
    time = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    for rec in out:
        rec.sidechain, rec.time = side, time
    return out


def _text_field(obj, key):
    value = obj.get(key)
    return value if isinstance(value, str) else None


def _session(obj):
    sid, cwd, mode = _text_field(obj, "sessionId"), _text_field(obj, "cwd"), _text_field(obj, "permissionMode")
    if sid is None and cwd is None and mode is None and not isinstance(obj.get("timestamp"), str):
        return None
    return Session(sid, cwd, mode=mode)


def _assistant(obj, out):
    msg = obj.get("message")
    if not isinstance(msg, dict):
        return
    usage = msg.get("usage")
    figures = usage_figures(usage.get("input_tokens"), usage.get("cache_read_input_tokens"),
                            usage.get("cache_creation_input_tokens")) if isinstance(usage, dict) else None
    if figures is not None:  # a figure that is no number: the usage is left out
        model = _model(obj, msg)
        response = next((i for i in (msg.get("id"), obj.get("requestId")) if isinstance(i, str) and i), None)
        out.append(Usage(input=figures[0], output=tokens(usage.get("output_tokens")) or 0, cache_read=figures[1],
                         cache_write=figures[2], model=model, response=response, synthetic=model == SYNTHETIC,
                         cache_write_1h=_one_hour(usage)))
    content = msg.get("content")
    if obj.get("isApiErrorMessage") is True:  # the failure the agent showed once its retries ran out
        texts = [b.get("text") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        out.append(ApiError(next((t for t in texts if isinstance(t, str)), "")))
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                # a call without an id still names its files (path-scoped rules); nothing answers it
                tid = block.get("id")
                out.append(ToolCall(tid if isinstance(tid, str) else "", block["name"], block.get("input")))


def _model(obj, msg):
    """The response's model, with the tag the agent asked for it with
    (`requestedModel` claude-opus-4-6[1m] where message.model says
    claude-opus-4-6); another requested model (an alias, a fallback's) is
    not the one that answered."""
    model = msg.get("model") if isinstance(msg.get("model"), str) else None
    requested = obj.get("requestedModel")
    if model and isinstance(requested, str) and requested.startswith(model + "["):
        return requested
    return model


def _one_hour(usage):
    """The cache writes of the 1-hour lifetime (`cache_creation`, 2.0.x and
    later: `ephemeral_1h_input_tokens`; the rest are 5-minute ones)."""
    split = usage.get("cache_creation")
    return (tokens(split.get("ephemeral_1h_input_tokens")) or 0) if isinstance(split, dict) else 0


def _user(obj, out):
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    texts, results, images = _blocks(content, obj, out)
    meta = obj.get("isMeta") is True
    for text in texts:
        if meta or any(w in text for w in WRAPPERS):
            out.append(Delivered("hook", texts=[text], via="text"))
    if obj.get("isCompactSummary") is True:
        out.append(Summary("\n".join(texts)))
    if results or meta or obj.get("isCompactSummary") or "toolUseResult" in obj:
        return
    if texts or images:
        out.append(Prompt("\n".join(texts), images=images))


def _blocks(content, obj, out):
    """(texts, tool results, images) of a user line's content; its tool
    results appended to `out`."""
    if isinstance(content, str):
        return [content], 0, 0
    if not isinstance(content, list):
        return [], 0, 0
    texts, results, images = [], 0, 0
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "tool_result":
            results += 1
            out.append(_result(block, obj))
        elif kind == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif kind == "image":
            images += 1
    return texts, results, images


def _result(block, obj):
    parts, images = result_parts(block.get("content"))
    tid = block.get("tool_use_id")
    error = block.get("is_error") is True
    output = obj.get("toolUseResult")
    return ToolResult(tid if isinstance(tid, str) else "", "\n".join(parts), is_error=error, image=images,
                      output=output, size=sum(len(p.encode("utf-8", "replace")) for p in parts), parts=parts)


def result_parts(content):
    """(texts, how many images) of a tool_result's content: the string, or
    its text blocks one by one (joined by newlines they are its text; their
    bytes summed, its size: the joins are not what the model read)."""
    if isinstance(content, str):
        return [content], 0
    parts, images = [], 0
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "image":
                    images += 1
    return parts, images


def _system(obj, out):
    sub = obj.get("subtype")
    if sub == "compact_boundary":
        meta = obj.get("compactMetadata") if isinstance(obj.get("compactMetadata"), dict) else {}
        pre = meta.get("preTokens")
        trigger = meta.get("trigger") if isinstance(meta.get("trigger"), str) else None
        out.append(Compaction(str(obj.get("uuid") or "")[:8],
                              tokens(pre) if isinstance(pre, int) and not isinstance(pre, bool) else None, trigger))
    elif sub == "api_error":
        out.append(ApiError(_text_field(obj, "content") or ""))
    content = obj.get("content")
    if isinstance(content, str) and any(w in content for w in WRAPPERS):
        out.append(Delivered("hook", texts=[content], via="text"))


def _attachment(att, out):
    if not isinstance(att, dict):
        return
    kind = att.get("type")
    if kind == "instructions":
        paths = [f.get("path") for f in att.get("files") or () if isinstance(f, dict) and isinstance(f.get("path"), str)]
        out.append(Delivered("instructions", paths))
    elif kind == "nested_memory" and isinstance(att.get("path"), str):
        content = att.get("content")
        raw = content.get("rawContent") if isinstance(content, dict) else None
        # the raw text (2.1.328 on): a rule edited since is not in view as it is now
        out.append(Delivered("scoped", [att["path"]], texts=[raw] if isinstance(raw, str) else ()))
    elif kind == "hook_additional_context":
        content = att.get("content")
        texts = content if isinstance(content, list) else [content]
        out.append(Delivered("hook", texts=[t for t in texts if isinstance(t, str)]))
