"""The hook events a recorded session's agent sent, rebuilt from its
transcript's records (engine/agents/records.py, from the agent's own
reader), each with the transcript as it stood when the event fired.

`neutral_events` yields (event, offset): `event` is a neutral event, a dict
with `kind` (session_start, prompt, pre_tool ...) and the neutral payload
fields (`payload:` of an agent's YAML: session, transcript, cwd, prompt,
tool ...); payload.py writes it as the agent would, and `events` yields
(the agent's payload, offset) for the events the agent sends.  `offset` is
the byte length of the transcript's prefix that existed at that moment (a
replayer writes that prefix to the event's transcript first).  The order
is the agent's:

- session_start (startup) before the first line;
- prompt for a prompt, before its line is written; stop before the next
  prompt and at the end (the turn had ended);
- before_model before each main-chain response (the request it answers;
  its line not written yet), once per response id;
- pre_tool for each tool call, once its line is written, then, for a call
  of a tool that starts a subagent (the agent's `task` tools: Claude Code's
  Task, Copilot's task, Codex's spawn_agent), subagent_start with the
  call's id as the subagent's; post_tool (with
  the tool's output as the agent's hooks get it) or, for a call the agent
  reported failed (`ToolResult.call_failed`), tool_failure (with the
  result's text as `error`) before its result's line is written;
- at a compaction: pre_compact (auto) before its line, then post_compact
  and session_start (compact) once its summary is written; an agent that
  compacts in the background (a CompactionStart record: Copilot) sends
  pre_compact before the start's line instead, whether the compaction
  completes or not;
- at a resume (the agent run again on the session, where its reader
  says so): stop (when a prompt came), session_end, then session_start
  (resume), before the resume's line;
- session_end at the end.

Side-chain (subagent) records send no events of the main session: a
subagent is a session of its own.  A tool result whose call was never seen
sends none.  Nothing is executed.  payload.py drops the events an agent
does not send.
"""


class _Session:
    """What the transcript says of the session so far: its id and folder
    (the first named), its permission mode (the latest)."""

    def __init__(self, cwd, session_id, transcript_path, path):
        self.given = {"cwd": cwd, "session": session_id, "transcript": transcript_path or str(path)}
        self.seen = {}
        self.mode = None  # the latest permission mode

    def note(self, rec):
        if rec.id and "session" not in self.seen:
            self.seen["session"] = rec.id
        if rec.cwd and "cwd" not in self.seen:
            self.seen["cwd"] = rec.cwd
        if rec.mode:
            self.mode = rec.mode

    def event(self, kind, **fields):
        mode = dict(permission_mode=self.mode) if self.mode else {}
        return dict(kind=kind, session=self.given["session"] or self.seen.get("session") or "replay",
                    transcript=self.given["transcript"], cwd=self.given["cwd"] or self.seen.get("cwd") or "",
                    **mode, **fields)


def events(path, cwd=None, session_id=None, transcript_path=None, skipped=None, agent=None):
    """(payload, offset) pairs: each event as the agent (an Agent, a name,
    or None: the one the file's lines show) would have sent it to its hooks;
    the arguments as for `neutral_events`."""
    from engine.session.agent import for_transcript

    from .payload import build

    agent = agent if agent is not None and not isinstance(agent, str) else for_transcript(path, agent)
    reader = agent.data["transcript"]["reader"]
    for event, offset in neutral_events(path, reader, cwd, session_id, transcript_path, skipped, starts_subagent(agent)):
        built = build(agent, event)
        if built is not None:
            yield built[1], offset


def starts_subagent(agent):
    """Whether a tool call of `agent` (its name as the transcript has it)
    starts a subagent: one of its `task` tools."""
    return lambda tool: agent.tool_kind(tool) == "task"


def neutral_events(path, reader="claude", cwd=None, session_id=None, transcript_path=None, skipped=None,
                   subagent_tool=None):
    """(event, offset) pairs of the transcript at `path` read by `reader`
    (a transcript reader's name); `cwd`, `session_id` and `transcript_path`
    replace the recorded ones (a replay runs in a folder of this machine).
    The transcript is read one bounded line at a time; (line number, bytes)
    of each line too long to hold is added to the list `skipped`: it sends
    no event.  `subagent_tool(name)`: whether a call of that tool starts a
    subagent (starts_subagent); without it none does."""
    from engine.agents.transcripts import spans

    session = _Session(cwd, session_id, transcript_path, path)
    state = {"tools": {}, "started": False, "prompted": False, "compacting": set(), "answered": set(),
             "subagent_tool": subagent_tool or (lambda tool: False)}
    end = 0
    with open(path, "rb") as fh:
        for start, end, recs in spans(reader, fh, skipped):
            if recs is None:
                continue
            for rec in recs:
                if rec.kind == "session":
                    session.note(rec)
            if not state["started"]:
                state["started"] = True
                yield session.event("session_start", source="startup"), start
            for rec in recs:
                if not rec.sidechain:
                    yield from _of_record(rec, session, state, start, end)
    if state["started"]:
        if state["prompted"]:
            yield session.event("stop", stop_active=False), end
        yield session.event("session_end", reason="other"), end


def _of_record(rec, session, state, start, end):
    """The events one main-chain record sends, with their offsets."""
    kind = rec.kind
    if kind == "resume":
        if state["prompted"]:
            yield session.event("stop", stop_active=False), start
        state["prompted"] = False
        yield session.event("session_end", reason="other"), start
        yield session.event("session_start", source="resume"), start
    elif kind == "compaction_start":
        state["compacting"].add(rec.id)
        yield session.event("pre_compact", trigger="auto", custom_instructions=""), start
    elif kind == "compaction":
        if rec.id not in state["compacting"]:
            yield session.event("pre_compact", trigger=rec.trigger or "auto", custom_instructions=""), start
        state["compacting"].discard(rec.id)
    elif kind == "summary":
        yield session.event("post_compact", trigger="auto"), end
        yield session.event("session_start", source="compact"), end
    elif kind == "prompt" and (rec.text or not rec.images):
        if state["prompted"]:
            yield session.event("stop", stop_active=False), start
        state["prompted"] = True
        yield session.event("prompt", prompt=rec.text), start
    elif kind == "usage" and not rec.synthetic and (rec.response is None or rec.response not in state["answered"]):
        state["answered"].add(rec.response)
        # the request this response answers, its messages not rebuilt (the hooks read none but to give them back)
        yield session.event("before_model", request_messages=[]), start
    elif kind == "tool_call" and rec.id:
        state["tools"][rec.id] = rec
        yield session.event("pre_tool", tool=rec.tool, tool_input=rec.input, tool_use_id=rec.id), end
        if state["subagent_tool"](rec.tool):
            yield session.event("subagent_start", subagent=rec.id), end
    elif kind == "tool_result":
        call = state["tools"].pop(rec.id, None)
        if call is None:
            return
        fields = dict(tool=call.tool, tool_input=call.input, tool_use_id=rec.id)
        if rec.call_failed:
            yield session.event("tool_failure", error=rec.text, output_text=rec.text, tool_output=rec.output,
                                **fields), start
        else:
            yield session.event("post_tool", tool_output=rec.output, output_text=rec.text, **fields), start
