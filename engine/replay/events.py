"""The hook events a recorded session's agent sent, rebuilt from its
transcript, each with the transcript as it stood when the event fired.

Yields (event, offset): `event` is the JSON object the agent would have
written to the hook's stdin, `offset` the byte length of the transcript's
prefix that existed at that moment (a replayer writes that prefix to the
event's `transcript_path` first).  The order is the agent's:

- SessionStart (startup) before the first line;
- UserPromptSubmit for a typed prompt, before its line is written; Stop
  before the next prompt and at the end (the turn had ended);
- PreToolUse for each tool_use block, once its assistant line is written;
  PostToolUse (with the line's `toolUseResult` as `tool_response`) or
  PostToolUseFailure (`is_error`, with the result's text as `error`) before
  its tool_result line is written;
- at a compact_boundary: PreCompact (its trigger) before it, SessionStart
  (compact) after the compaction's summary line;
- SessionEnd at the end.

Side-chain (subagent) lines send no events of the main session: a subagent
is a session of its own.  Lines that are not JSON objects are skipped, and
so is a tool_result whose tool_use was never seen.  Nothing is executed.
"""

import json


def _text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""


def _typed_prompt(rec):
    """The prompt text of a line the user typed, or None."""
    if rec.get("type") != "user" or rec.get("isMeta") or rec.get("isCompactSummary") or rec.get("toolUseResult"):
        return None
    content = (rec.get("message") or {}).get("content") if isinstance(rec.get("message"), dict) else None
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        if not any(isinstance(b, dict) and b.get("type") == "text" for b in content):
            return None
    elif not isinstance(content, str):
        return None
    return _text(content)


def events(path, cwd=None, session_id=None, transcript_path=None, skipped=None):
    """(event, offset) pairs; `cwd`, `session_id` and `transcript_path`
    replace the recorded ones (a replay runs in a folder of this machine).
    The transcript is read one bounded line at a time (engine/core/
    transcript.py); (line number, bytes) of each line too long to hold is
    added to the list `skipped`: it sends no event."""
    from engine.core.transcript import lines

    tools = {}  # tool_use id -> (name, input)
    base = {}
    offset = 0
    started = prompted = False

    def event(name, **fields):
        ev = {"session_id": session_id or base.get("session_id") or "replay",
              "transcript_path": transcript_path or str(path), "cwd": cwd or base.get("cwd") or "",
              "hook_event_name": name}
        if base.get("permission_mode"):
            ev["permission_mode"] = base["permission_mode"]
        ev.update(fields)
        return ev

    with open(path, "rb") as fh:
        for lineno, (start, offset, raw) in enumerate(lines(fh), 1):
            if raw is None:
                if skipped is not None:
                    skipped.append((lineno, offset - start))
                continue
            try:
                rec = json.loads(raw)
            except (ValueError, RecursionError):
                continue
            if not isinstance(rec, dict):
                continue
            if not base and isinstance(rec.get("sessionId"), str):
                base["session_id"] = rec["sessionId"]
            if isinstance(rec.get("cwd"), str):
                base.setdefault("cwd", rec["cwd"])
            if isinstance(rec.get("permissionMode"), str):
                base["permission_mode"] = rec["permissionMode"]
            if not started:
                started = True
                yield event("SessionStart", source="startup"), start
            if rec.get("isSidechain") is True:
                continue
            kind = rec.get("type")
            if kind == "system" and rec.get("subtype") == "compact_boundary":
                meta = rec.get("compactMetadata") if isinstance(rec.get("compactMetadata"), dict) else {}
                yield event("PreCompact", trigger=meta.get("trigger") or "auto", custom_instructions=""), start
                continue
            if kind == "user" and rec.get("isCompactSummary"):
                yield event("SessionStart", source="compact"), offset
                continue
            prompt = _typed_prompt(rec)
            if prompt is not None:
                if prompted:
                    yield event("Stop", stop_hook_active=False), start
                prompted = True
                yield event("UserPromptSubmit", prompt=prompt), start
                continue
            message = rec.get("message") if isinstance(rec.get("message"), dict) else {}
            content = message.get("content")
            if not isinstance(content, list):
                continue
            if kind == "assistant":
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                        tools[block["id"]] = (block.get("name"), block.get("input"))
                        yield event("PreToolUse", tool_name=block.get("name"), tool_input=block.get("input"),
                                    tool_use_id=block["id"]), offset
            elif kind == "user":
                for block in content:
                    if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                        continue
                    tid = block.get("tool_use_id")
                    known = tools.pop(tid, None) if isinstance(tid, str) else None  # a list is no id
                    if known is None:
                        continue
                    name, tool_input = known
                    fields = dict(tool_name=name, tool_input=tool_input, tool_use_id=block.get("tool_use_id"))
                    if block.get("is_error") is True:
                        yield event("PostToolUseFailure", error=_text(block.get("content")), **fields), start
                    else:
                        response = rec.get("toolUseResult", _text(block.get("content")))
                        yield event("PostToolUse", tool_response=response, **fields), start
    if started:
        if prompted:
            yield event("Stop", stop_hook_active=False), offset
        yield event("SessionEnd", reason="other"), offset
