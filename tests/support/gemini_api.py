"""A stand-in of the Gemini API as Gemini CLI calls it with an API key:
`POST /v1beta/models/M:generateContent` (one JSON answer) and
`:streamGenerateContent?alt=sse` (server-sent `data:` lines), plus
`:countTokens`.

A request that declares tools is a main-loop turn; one whose system
instruction asks for a state snapshot is a compaction (Gemini CLI calls it
compression); any other (a JSON-schema side question such as "who speaks
next", a router's model choice) is answered from its schema without
consuming the script.
"""

import json

from .standin import MAIN, SIDE, SUMMARY, Say, Shell, StandIn, sse

SHELL_TOOL = "run_shell_command"
# Words of the system instruction Gemini CLI sends when it compresses the chat.
SUMMARY_MARKS = ("state_snapshot", "<state_snapshot>")


def _texts(parts):
    for p in parts or []:
        if isinstance(p, dict) and isinstance(p.get("text"), str):
            yield p["text"]


def system_text(body):
    si = body.get("systemInstruction") or body.get("system_instruction") or {}
    if isinstance(si, str):
        return si
    return "\n".join(_texts(si.get("parts")))


def sample(schema):
    """A small value that fits a JSON schema (a side question's answer):
    "user" where an enum allows it (the agent's turn ends), else the first."""
    schema = schema or {}
    kind = str(schema.get("type", "object")).lower()
    if schema.get("enum"):
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: sample(v) for k, v in props.items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    return "ok"


class GeminiAPI(StandIn):
    def kind(self, req):
        path = req.path.split("?")[0]
        if req.method != "POST" or not (path.endswith(":generateContent") or path.endswith(":streamGenerateContent")):
            return None
        body = req.body if isinstance(req.body, dict) else {}
        if any(m in system_text(body) for m in SUMMARY_MARKS):
            return SUMMARY
        config = body.get("generationConfig") or {}
        if config.get("responseMimeType") == "application/json" or config.get("responseJsonSchema"):
            return SIDE
        return MAIN if body.get("tools") else SIDE

    def other(self, req):
        if req.path.split("?")[0].endswith(":countTokens"):
            return 200, "application/json", json.dumps({"totalTokens": 1000}).encode()
        return 200, "application/json", b"{}"

    def next_turn(self, req):
        if req.kind == SIDE:
            config = (req.body or {}).get("generationConfig") or {}
            schema = config.get("responseJsonSchema") or config.get("responseSchema")
            if schema:
                return Say(json.dumps(sample(schema)))
        return super().next_turn(req)

    def usage(self, req):
        tokens = self.input_tokens(req)
        return {"promptTokenCount": tokens, "candidatesTokenCount": 10, "totalTokenCount": tokens + 10}

    def answer(self, req, turn, n):
        body = req.body if isinstance(req.body, dict) else {}
        if isinstance(turn, Say):
            part = {"text": turn.text}
        else:
            name, args = (SHELL_TOOL, {"command": turn.command}) if isinstance(turn, Shell) else (turn.name, turn.args)
            part = {"functionCall": {"name": name, "args": args}}
        chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": self.usage(req), "modelVersion": body.get("model", "gemini-test"),
                 "responseId": f"resp_{n:04d}"}
        if ":streamGenerateContent" in req.path:
            return 200, "text/event-stream", sse(chunk)
        return 200, "application/json", json.dumps(chunk).encode()


# ---------------------------------------------------------------- reading requests


def contents_texts(body):
    """(role or "functionResponse"/"functionCall", text) of everything a request
    carries: the system instruction, each text part, each function call and
    function response (as JSON), in order."""
    out = [("system", system_text(body))] if system_text(body) else []
    for c in body.get("contents") or []:
        for p in c.get("parts") or []:
            if not isinstance(p, dict):
                continue
            if "text" in p:
                out.append((c.get("role", ""), p["text"]))
            elif "functionResponse" in p:
                out.append(("functionResponse", json.dumps(p["functionResponse"].get("response"))))
            elif "functionCall" in p:
                out.append(("functionCall", json.dumps(p["functionCall"])))
    return out


def request_text(body):
    return "\n".join(t for _, t in contents_texts(body))


def tool_outputs(body):
    """The response of every function call in a request, as JSON text, in order."""
    return [t for kind, t in contents_texts(body) if kind == "functionResponse"]
