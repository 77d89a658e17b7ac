"""A stand-in of the OpenAI Responses API (`POST /v1/responses`, server-sent
events), as Codex CLI and Copilot CLI call it with a custom provider.

Each answer is one response: response.created, per output item
output_item.added / (text or arguments delta) / output_item.done, and
response.completed carrying the whole `output` and a `usage` (Copilot reads
the output from response.completed only; Codex from the item events).

The shell tool is found in the request's own tool list, so one script serves
both agents: see SHELL_TOOLS.
"""

import json

from .standin import MAIN, SIDE, SUMMARY, Call, Custom, Say, Shell, StandIn, sse

# The shell tool each agent declares, and how its arguments carry a command
# (name -> function of the command). The first one the request lists wins.
SHELL_TOOLS = {
    "exec_command": lambda c: {"cmd": c},  # Codex (unified exec)
    "shell_command": lambda c: {"command": c},  # Codex (shell_command)
    "shell": lambda c: {"command": ["bash", "-lc", c]},  # Codex (older shell)
    "bash": lambda c: {"command": c, "description": "run the command", "mode": "sync"},  # Copilot
}
# Words of the last user message when an agent asks for a compaction summary
# (Codex 0.169.0, Copilot 1.0.102). Not "<summary>": Copilot's first request
# after a compaction quotes the summary in <summary> tags.
SUMMARY_MARKS = ("You are performing a CONTEXT CHECKPOINT COMPACTION", "respond only with the summary text")


def tool_names(body):
    """The names of the tools a request declares (function tools and others)."""
    out = []
    for t in body.get("tools") or []:
        if isinstance(t, dict):
            out.append(t.get("name") or (t.get("function") or {}).get("name") or t.get("type"))
    return out


def last_user_text(body):
    """The text of the request's last user-role input item."""
    for item in reversed(body.get("input") or []):
        if isinstance(item, dict) and item.get("role") == "user":
            return "\n".join(_item_texts(item))
    return ""


def _item_texts(item):
    content = item.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part["text"]


class ResponsesAPI(StandIn):
    """The Responses API stand-in: a request with tools is a main-loop turn,
    a request whose last user text asks for a summary is a compaction."""

    def kind(self, req):
        if req.method != "POST" or not req.path.split("?")[0].rstrip("/").endswith("/responses"):
            return None
        body = req.body if isinstance(req.body, dict) else {}
        if any(m in last_user_text(body) for m in SUMMARY_MARKS) or req.path.split("?")[0].endswith("/compact"):
            return SUMMARY
        return MAIN if body.get("tools") else SIDE

    def other(self, req):
        if req.path.split("?")[0].rstrip("/").endswith("/models"):
            return 200, "application/json", json.dumps({"object": "list", "data": []}).encode()
        return 200, "application/json", b"{}"

    def answer(self, req, turn, n):
        body = req.body if isinstance(req.body, dict) else {}
        item = self.item(body, turn, n)
        model = body.get("model", "test-model")
        resp = {"id": f"resp_{n:04d}", "object": "response", "created_at": 1764000000 + n, "model": model,
                "status": "in_progress", "output": []}
        events = [sse({"type": "response.created", "response": resp, "sequence_number": 0}, "response.created")]
        events += _item_events(item)
        tokens = self.input_tokens(req)
        usage = {"input_tokens": tokens, "output_tokens": 10, "total_tokens": tokens + 10,
                 "input_tokens_details": {"cached_tokens": self.cached_tokens(req)}, "output_tokens_details": {"reasoning_tokens": 0}}
        done = dict(resp, status="completed", output=[item], usage=usage)
        events.append(sse({"type": "response.completed", "response": done}, "response.completed"))
        return 200, "text/event-stream", b"".join(events)

    @staticmethod
    def item(body, turn, n):
        """The output item that carries `turn`."""
        if isinstance(turn, Say):
            return {"type": "message", "id": f"msg_{n:04d}", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": turn.text, "annotations": []}]}
        if isinstance(turn, Custom):
            return {"type": "custom_tool_call", "id": f"ctc_{n:04d}", "call_id": f"call_{n:04d}", "name": turn.name,
                    "input": turn.input, "status": "completed"}
        if isinstance(turn, Shell):
            names = tool_names(body)
            name = next((t for t in SHELL_TOOLS if t in names), None)
            if name is None:
                raise AssertionError(f"no shell tool known among the request's tools {names}")
            turn = Call(name, SHELL_TOOLS[name](turn.command))
        item = {"type": "function_call", "id": f"fc_{n:04d}", "call_id": f"call_{n:04d}", "name": turn.name,
                "arguments": json.dumps(turn.args), "status": "completed"}
        namespace = _namespace_of(body, turn.name)
        if namespace:  # a tool listed inside a namespace is called by both names (Codex's multi_agent_v1)
            item["namespace"] = namespace
        return item


def _namespace_of(body, name):
    """The name of the namespace tool of the request that lists tool `name`, or None."""
    for tool in body.get("tools") or ():
        if isinstance(tool, dict) and tool.get("type") == "namespace" and any(
                isinstance(t, dict) and t.get("name") == name for t in tool.get("tools") or ()):
            return tool.get("name")
    return None


def _item_events(item):
    added = dict(item, status="in_progress")
    if item["type"] == "message":
        added["content"] = []
    if item["type"] == "custom_tool_call":
        added["input"] = ""  # it comes in the deltas
    out = [sse({"type": "response.output_item.added", "output_index": 0, "item": added},
               "response.output_item.added")]
    if item["type"] == "message":
        text = item["content"][0]["text"]
        out.append(sse({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
                        "content_index": 0, "delta": text}, "response.output_text.delta"))
    elif item["type"] == "custom_tool_call":
        out.append(sse({"type": "response.custom_tool_call_input.delta", "item_id": item["id"], "output_index": 0,
                        "delta": item["input"]}, "response.custom_tool_call_input.delta"))
    else:
        out.append(sse({"type": "response.function_call_arguments.delta", "item_id": item["id"], "output_index": 0,
                        "delta": item["arguments"]}, "response.function_call_arguments.delta"))
    out.append(sse({"type": "response.output_item.done", "output_index": 0, "item": item},
                   "response.output_item.done"))
    return out


# ---------------------------------------------------------------- reading requests


def input_texts(body):
    """(role or type, text) of every input item a request carries: messages
    by role, tool outputs as ("function_call_output", output), in order."""
    out = []
    if isinstance(body.get("instructions"), str):
        out.append(("instructions", body["instructions"]))
    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            out.append((item["type"], output if isinstance(output, str) else json.dumps(output)))
        elif "role" in item:
            out.extend((item["role"], t) for t in _item_texts(item))
    return out


def request_text(body):
    """Everything the model reads in one request, joined by newlines."""
    return "\n".join(t for _, t in input_texts(body))


def tool_outputs(body):
    """The output text of every tool call in a request's input, in order."""
    return [t for kind, t in input_texts(body) if kind in ("function_call_output", "custom_tool_call_output")]
