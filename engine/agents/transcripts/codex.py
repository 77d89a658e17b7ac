"""Codex CLI's rollout JSONL ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl;
measured with 0.169.0, tests/support/AGENTS-MEASURED.md, and the sample in
tests/data/transcripts/codex/).

Lines are `{timestamp, ordinal, type, payload}`:
- `session_meta`: `cli_version` (the agent's version), `id`, `cwd`; a
  spawned subagent's rollout names its parent (`parent_thread_id`);
- `turn_context`: the `model`, `cwd`; `event_msg` `token_count`:
  `info.model_context_window`; `event_msg` `error` / `stream_error`: a
  failed model call;
- `token_usage_record`: one response's `usage` (`input_tokens` counts the
  cached ones too) under `response_id`;
- `response_item`: what was sent: `message` (each content item's kind in
  `internal_chat_message_metadata_passthrough.content_item_kinds`:
  `user.text` a prompt, `hooks.additional_context` what a hook added,
  `agents_md.instructions` the AGENTS.md files; without them, by role:
  user the prompt or the AGENTS.md message, developer a hook's),
  `function_call` / `custom_tool_call` (the call: name and JSON
  arguments) and `function_call_output` / `custom_tool_call_output` (the
  output the model read: a header, `Process exited with code N`, then
  `Output:` and what the command printed, which is what PostToolUse hooks
  receive);
- `compacted`: a compaction (the summary replaces the history); the agent
  then sends its instructions again (`world_state` with `agents_md`).
"""

from engine.base.fastjson import loads

from ..records import (
    ApiError,
    Compaction,
    Delivered,
    Prompt,
    Session,
    Summary,
    ToolCall,
    ToolResult,
    Usage,
    Version,
    Window,
    clamp,
    tokens,
    usage_figures,
)

# A response's `token_usage_record` follows its output items (its function_call lines):
# the request was sent before them.
USAGE_AFTER_OUTPUT = True
MARKS = {
    "version": (b'"session_meta"',),
    "session": (b'"session_meta"', b'"turn_context"'),
    "usage": (b'"token_usage_record"',),
    "window": (b'"token_count"', b'"turn_context"'),
    "tool_call": (b'"function_call"', b'"custom_tool_call"'),
    "tool_result": (b'_call_output"',),
    "prompt": (b'"message"',),
    "delivered": (b'"message"', b'"world_state"'),
    "compaction": (b'"compacted"',),
    "summary": (b'"compacted"',),
    "api_error": (b"error",),
}
INSTRUCTIONS = "# AGENTS.md instructions for "
EXIT = "Process exited with code "
OUTPUT = "\nOutput:\n"
LINE_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "token_usage_record", "compacted",
              "world_state")
ITEM_KINDS = {"user.text": "prompt", "hooks.additional_context": "hook", "agents_md.instructions": "instructions"}
ERRORS = ("error", "stream_error")


def looks_like(obj):
    return obj.get("type") in LINE_TYPES and isinstance(obj.get("payload"), dict)


def project_key(cwd):
    return cwd


def records_of(obj, seen=None):
    """The records of one line (`seen`: unused, the format needs no memory of earlier lines)."""
    kind, payload = obj.get("type"), obj.get("payload")
    if not isinstance(payload, dict):
        return []
    handler = _BY_TYPE.get(kind)
    out = handler(payload, obj) if handler is not None else []
    time = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    for rec in out:
        rec.time = time
    return out


def _text(value):
    return value if isinstance(value, str) else None


def _meta(payload, obj):
    out = []
    if isinstance(payload.get("cli_version"), str):
        out.append(Version(payload["cli_version"]))
    sid = _text(payload.get("id")) or _text(payload.get("session_id"))
    if sid or _text(payload.get("cwd")):
        out.append(Session(sid, _text(payload.get("cwd")), parent=_text(payload.get("parent_thread_id"))))
    return out


def _turn(payload, obj):
    out = [Window(model=payload["model"])] if isinstance(payload.get("model"), str) else []
    if _text(payload.get("cwd")):
        out.append(Session(cwd=payload["cwd"], mode=_text(payload.get("approval_policy"))))
    return out


def _event(payload, obj):
    kind = payload.get("type")
    if kind == "token_count":
        info = payload.get("info")
        window = info.get("model_context_window") if isinstance(info, dict) else None
        return [Window(tokens=clamp(window))] if window else []
    if kind in ERRORS:
        return [ApiError(_text(payload.get("message")) or "")]
    return []


def _usage(payload, obj):
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        return []
    figures = usage_figures(usage.get("input_tokens"), usage.get("cached_input_tokens"))
    if figures is None:  # a figure that is no number: the usage is left out
        return []
    total_in, cached = figures
    response = payload.get("response_id") if isinstance(payload.get("response_id"), str) else None
    return [Usage(input=max(0, total_in - cached), output=tokens(usage.get("output_tokens")) or 0, cache_read=cached,
                  cache_write=tokens(usage.get("cache_write_input_tokens")) or 0, response=response,
                  context=total_in)]


def _world(payload, obj):
    state = payload.get("state")
    agents = state.get("agents_md") if isinstance(state, dict) else None
    if isinstance(agents, dict) and isinstance(agents.get("text"), str):
        return [Delivered("instructions", texts=[agents["text"]])]
    return []


def _compacted(payload, obj):
    return [Compaction(str(obj.get("ordinal", ""))), Summary(_text(payload.get("message")) or "")]


def _item(payload, obj):
    t = payload.get("type")
    if t == "message":
        return _message(payload)
    if t in ("function_call", "custom_tool_call"):
        args = payload.get("arguments") if t == "function_call" else payload.get("input")
        parsed = _json(args) if isinstance(args, str) else args
        if not isinstance(parsed, dict):
            parsed = {"input": args} if isinstance(args, str) else {}
        return [ToolCall(str(payload.get("call_id") or ""), str(payload.get("name") or ""), parsed)]
    if t in ("function_call_output", "custom_tool_call_output"):
        text = output_text(payload.get("output"))
        return [ToolResult(str(payload.get("call_id") or ""), text, is_error=_failed(text), output=printed(text))]
    return []


def _message(item):
    role = item.get("role")
    if role not in ("user", "developer"):
        return []
    content = [c for c in item.get("content") or () if isinstance(c, dict) and isinstance(c.get("text"), str)]
    meta = item.get("internal_chat_message_metadata_passthrough")
    kinds = meta.get("content_item_kinds") if isinstance(meta, dict) else None
    if isinstance(kinds, list) and len(kinds) == len(item.get("content") or ()):
        return _by_kinds(item.get("content"), kinds)
    texts = [c["text"] for c in content]
    if not texts:
        return []
    if role == "developer":
        return [Delivered("hook", texts=texts)]
    text = "\n".join(texts)
    if text.startswith(INSTRUCTIONS):
        return [Delivered("instructions", texts=[text])]
    if text.startswith("<environment_context>"):
        return []
    return [Prompt(text)]


def _by_kinds(content, kinds):
    """The records of a message whose every content item names its kind."""
    out, prompt = [], []
    for part, kind in zip(content, kinds):
        text = part.get("text") if isinstance(part, dict) else None
        what = ITEM_KINDS.get(kind) if isinstance(kind, str) else None
        if not isinstance(text, str) or what is None:
            continue
        if what == "prompt":
            prompt.append(text)
        else:
            out.append(Delivered(what, texts=[text]))
    if prompt:
        out.append(Prompt("\n".join(prompt)))
    return out


def output_text(output):
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and isinstance(output.get("output"), str):
        return output["output"]
    if isinstance(output, list):
        return "\n".join(c.get("text") for c in output if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def printed(text):
    """What the command printed (the part after the output's header), as
    PostToolUse hooks receive it; the text itself when it has no header."""
    at = text.find(OUTPUT)
    return text[at + len(OUTPUT):] if at >= 0 and EXIT in text[:at] else text


def _failed(text):
    """The output's header (before `Output:`) says the command exited non-zero."""
    end = text.find(OUTPUT)
    head = text[:end] if end >= 0 else text
    at = head.find(EXIT)
    if at < 0:
        return False
    code = head[at + len(EXIT):].split("\n", 1)[0].strip()
    return code.isdigit() and code != "0"


def _json(text):
    try:
        return loads(text)
    except (ValueError, RecursionError):
        return None


_BY_TYPE = {
    "session_meta": _meta,
    "turn_context": _turn,
    "event_msg": _event,
    "token_usage_record": _usage,
    "world_state": _world,
    "compacted": _compacted,
    "response_item": _item,
}
