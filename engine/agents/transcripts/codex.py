"""Codex CLI's rollout JSONL ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl;
measured with 0.169.0, tests/support/AGENTS-MEASURED.md).

Lines are `{timestamp, ordinal, type, payload}`:
- `session_meta`: `cli_version` (the agent's version);
- `turn_context`: the `model`; `event_msg` `token_count`: `info.model_context_window`;
- `token_usage_record`: one response's `usage` (`input_tokens` counts the
  cached ones too) under `response_id`;
- `response_item`: what was sent: `message` (role user: the prompt, or the
  AGENTS.md instructions the agent sends as one user message; role
  developer: what hooks added), `function_call` / `custom_tool_call` (the
  call: name and JSON arguments) and `function_call_output` /
  `custom_tool_call_output` (the output the model read);
- `compacted`: a compaction (the summary replaces the history); the agent
  then sends its instructions again (`world_state` with `agents_md`).
"""

from engine.base.fastjson import loads

from ..records import Compaction, Delivered, Prompt, ToolCall, ToolResult, Usage, Version, Window, clamp

MARKS = {
    "version": (b'"session_meta"',),
    "usage": (b'"token_usage_record"',),
    "window": (b'"token_count"', b'"turn_context"'),
    "tool_call": (b'"function_call"', b'"custom_tool_call"'),
    "tool_result": (b'_call_output"',),
    "prompt": (b'"message"',),
    "delivered": (b'"message"', b'"world_state"'),
    "compaction": (b'"compacted"',),
}
INSTRUCTIONS = "# AGENTS.md instructions for "
EXIT = "Process exited with code "


def records_of(obj):
    kind, payload = obj.get("type"), obj.get("payload")
    if not isinstance(payload, dict):
        return []
    if kind == "session_meta" and isinstance(payload.get("cli_version"), str):
        return [Version(payload["cli_version"])]
    if kind == "turn_context" and isinstance(payload.get("model"), str):
        return [Window(model=payload["model"])]
    if kind == "event_msg" and payload.get("type") == "token_count":
        info = payload.get("info")
        window = info.get("model_context_window") if isinstance(info, dict) else None
        return [Window(tokens=clamp(window))] if window else []
    if kind == "token_usage_record":
        return _usage(payload)
    if kind == "world_state":
        state = payload.get("state")
        agents = state.get("agents_md") if isinstance(state, dict) else None
        if isinstance(agents, dict) and isinstance(agents.get("text"), str):
            return [Delivered("instructions", texts=[agents["text"]])]
        return []
    if kind == "compacted":
        return [Compaction(str(obj.get("ordinal", "")))]
    if kind == "response_item":
        return _item(payload)
    return []


def _usage(payload):
    usage = payload.get("usage")
    if not isinstance(usage, dict):
        return []
    cached = clamp(usage.get("cached_input_tokens"))
    total_in = clamp(usage.get("input_tokens"))
    return [Usage(input=max(0, total_in - cached), output=clamp(usage.get("output_tokens")), cache_read=cached,
                  cache_write=clamp(usage.get("cache_write_input_tokens")), response=payload.get("response_id"),
                  context=total_in)]


def _item(item):
    t = item.get("type")
    if t == "message":
        return _message(item)
    if t in ("function_call", "custom_tool_call"):
        args = item.get("arguments") if t == "function_call" else item.get("input")
        parsed = _json(args) if isinstance(args, str) else args
        if not isinstance(parsed, dict):
            parsed = {"input": args} if isinstance(args, str) else {}
        return [ToolCall(str(item.get("call_id") or ""), str(item.get("name") or ""), parsed)]
    if t in ("function_call_output", "custom_tool_call_output"):
        text = output_text(item.get("output"))
        return [ToolResult(str(item.get("call_id") or ""), text, is_error=_failed(text))]
    return []


def _message(item):
    texts = [c.get("text") for c in item.get("content") or () if isinstance(c, dict) and isinstance(c.get("text"), str)]
    if not texts:
        return []
    role = item.get("role")
    if role == "developer":
        return [Delivered("hook", texts=texts)]
    if role == "user":
        text = "\n".join(texts)
        if text.startswith(INSTRUCTIONS):
            return [Delivered("instructions", texts=[text])]
        if text.startswith("<environment_context>"):
            return []
        return [Prompt(text)]
    return []


def output_text(output):
    if isinstance(output, str):
        return output
    if isinstance(output, dict) and isinstance(output.get("output"), str):
        return output["output"]
    if isinstance(output, list):
        return "\n".join(c.get("text") for c in output if isinstance(c, dict) and isinstance(c.get("text"), str))
    return ""


def _failed(text):
    """A shell output's exit status line says it failed."""
    at = text.find(EXIT)
    if at < 0:
        return False
    code = text[at + len(EXIT):].split("\n", 1)[0].strip()
    return code.isdigit() and code != "0"


def _json(text):
    try:
        return loads(text)
    except (ValueError, RecursionError):
        return None
