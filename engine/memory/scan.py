"""Tool errors in a transcript: tool_result blocks flagged `is_error: true`
or that start with the agent's error wrapper (`hooks.memory.error_wrappers`,
`<tool_use_error>`), with the name and input of the tool_use they answer.
The wrapper anywhere else in a result is the result's text (a README that
quotes it), not a failure.  Reads the last `max_bytes` of the file; only
lines that can hold an error result are parsed, and tool_use lines only
when they name a failed call.  A line that is not JSON (a file cut
mid-write) is skipped."""

import json

from engine.core.transcript import reversed_lines

# How the agent flags a failed result (its interface: the tool_result block's field).
ERROR_FLAGS = (b'"is_error":true', b'"is_error": true')


def _blocks(rec):
    message = rec.get("message") if isinstance(rec, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _load(raw):
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


def _result_text(block):
    from .record import _text

    return _text(block.get("content")) or "tool error"


def failed_result(block, wrappers):
    """True for a tool_result the agent marked failed: `is_error`, or its
    text starting with one of the agent's error wrappers."""
    if block.get("is_error") is True:
        return True
    from .record import _text

    return _text(block.get("content"), 4096).lstrip().startswith(tuple(wrappers))


def transcript_failures(path, max_bytes, wrappers=()):
    """[{id, tool, input, error}] of the failed calls, oldest first."""
    lines = list(reversed_lines(path, max_bytes))
    lines.reverse()
    marks = ERROR_FLAGS + tuple(w.encode() for w in wrappers)
    failed = {}
    for raw in lines:
        if b"tool_result" not in raw or not any(m in raw for m in marks):
            continue
        for b in _blocks(_load(raw)):
            if b.get("type") != "tool_result" or not isinstance(b.get("tool_use_id"), str):
                continue
            if failed_result(b, wrappers):
                failed[b["tool_use_id"]] = _result_text(b)
    if not failed:
        return []
    uses = {}
    for raw in lines:
        if b'"tool_use"' not in raw or not any(i.encode() in raw for i in failed):
            continue
        for b in _blocks(_load(raw)):
            if b.get("type") == "tool_use" and b.get("id") in failed:
                uses[b["id"]] = (b.get("name"), b.get("input"))
    out = []
    for tid, text in failed.items():
        name, tool_input = uses.get(tid, (None, None))
        if isinstance(name, str) and name:  # its call is outside the tail read: unknown tool, skipped
            out.append({"id": tid, "tool": name, "input": tool_input, "error": text})
    return out
