"""A neutral event (events.py) written as the agent would have sent it to
its hooks, from the agent's declaration (pipelines/agents/NAME.yaml),
written by the seam's engine.agents.event.payload_for:
- the event's name: the agent's name of the neutral kind (`events:`); an
  event the agent does not send is none (None); a failed tool call is a
  post_tool for an agent with no event of its own for failures;
- each neutral field at its `payload:` path (a dotted path makes nested
  objects);
- a session_start's source in the agent's words (`session_sources:`);
- a tool as the hooks name it: a transcript's own name and input fields
  become the hooks' (`tools.<kind>.hook_name`, `transcript_fields`);
- a tool's output in the agent's shape: as the transcript kept it when it
  did, else the text the model read, under the shell tool's `output.text`
  path (the whole output when that path is empty), or as `stdout`.
"""

# Fields of a neutral event that are not payload fields.
INTERNAL = ("kind", "output_text")


def build(agent, event):
    """(the agent's event name, its payload), or None for an event the agent does not send."""
    kind = event["kind"]
    if kind == "tool_failure" and not agent.agent_events(kind):
        event = dict(event, kind="post_tool")
        event.pop("error", None)
        kind = "post_tool"
    elif kind == "tool_failure":
        event = {k: v for k, v in event.items() if k != "tool_output"}
    names = agent.agent_events(kind)
    if not names:
        return None
    if kind == "session_start" and not _source(agent, event.get("source")):
        return None  # a start the agent does not announce (Gemini, Copilot: none after a compaction)
    from engine.agents.event import payload_for

    name, payload = payload_for(agent, kind, _fields(agent, event))
    return name, _ordered(agent, payload)


def _fields(agent, event):
    out = _as_hooks_name_it(agent, **{k: v for k, v in event.items() if k not in INTERNAL})
    if event["kind"] == "post_tool" and out.get("tool_output") is None:
        out["tool_output"] = _output(agent, event.get("output_text") or "")
    return out


def _as_hooks_name_it(agent, tool=None, tool_input=None, **fields):
    """The neutral fields with a transcript's tool call as the hooks get it."""
    if tool is not None:
        from engine.session.agent import hook_call

        tool, tool_input = hook_call(agent, tool, tool_input)
    return dict(fields, tool=tool, tool_input=tool_input)


def _source(agent, neutral):
    """The agent's word for a neutral session source, or None."""
    for theirs, ours in (agent.data.get("session_sources") or {}).items():
        if ours == neutral:
            return theirs
    return None


def _output(agent, text):
    """A tool output of the agent's shape made from the text the model read."""
    spec = agent.tools("shell").get("output") or {}
    if "text" in spec:
        return text if not spec["text"] else _nested(spec["text"], text)
    return {spec.get("stdout") or "stdout": text, spec.get("stderr") or "stderr": ""}


def _nested(path, value):
    out = value
    for key in reversed(path.split(".")):
        out = {key: out}
    return out


def _ordered(agent, payload):
    """The payload with the session's fields first, as the agents send them."""
    spec = agent.data["payload"]
    first = [spec.get(f) for f in ("session", "transcript", "cwd")] + [agent.data.get("event_key")]
    first = [f if isinstance(f, str) else (f or {}).get("path") for f in first]
    head = {k: payload[k] for k in first if k and k in payload}
    return {**head, **{k: v for k, v in payload.items() if k not in head}}
