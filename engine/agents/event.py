"""One hook event in the engine's own words.

The agent's payload is read through its declaration (spec.Agent): the
neutral event kind, and each neutral field at the path the agent keeps it
(`payload:` in its YAML; a field the agent encodes as a JSON string is
decoded).  Handlers read only these attributes, never the payload.
"""

from engine.base.fastjson import loads


def _at(data, path):
    """The value at a dotted path of nested mappings, or None."""
    for key in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


class Event:
    """A neutral event: `kind` (session_start, prompt, pre_tool ...) and the
    fields handlers read, each None when the agent did not send it."""

    def __init__(self, agent, payload, agent_event=None, environ=None):
        self.agent = agent
        self.payload = payload
        if agent_event is None:
            key = agent.data.get("event_key")
            agent_event = payload.get(key) if key else None
        self.agent_event = agent_event if isinstance(agent_event, str) else ""
        self.kind = agent.neutral(self.agent_event) or ""
        self._cache = {}
        self.root_session = ""  # the session a parent subagent belongs to (engine/hooks/lineage.py)
        self._environ = environ
        if self.kind == "stop" and self.subagent:
            # A subagent's own end, where the agent reports it as a stop that
            # carries the subagent's id (Copilot's agentStop inside a task):
            # the session goes on.
            self.kind = "subagent_stop"

    def field(self, name):
        """A neutral payload field, decoded as the agent's YAML says."""
        if name in self._cache:
            return self._cache[name]
        spec = self.agent.data["payload"].get(name)
        value = None
        if isinstance(spec, str):
            value = _at(self.payload, spec)
        elif isinstance(spec, dict):
            value = _at(self.payload, spec["path"])
            if spec.get("json") and isinstance(value, str):
                try:
                    value = loads(value)
                except (ValueError, RecursionError):
                    pass  # kept as the text it is
        self._cache[name] = value
        return value

    def _text(self, name):
        value = self.field(name)
        return value if isinstance(value, str) else ""

    # ---------------------------------------------------------- the session

    @property
    def session(self):
        """The session's id; for the event of a subagent that the agent gives
        an id of its own, its parent's (`parent_session`), whose state,
        transcript and records the subagent shares as in Claude Code; the
        session a parent subagent belongs to, once known (`root_session`:
        engine/hooks/lineage.py)."""
        return self.root_session or self._text("parent_session") or self._text("session")

    @property
    def transcript(self):
        return self._path("transcript")

    @property
    def cwd(self):
        """The event's folder; "" (none said: the hook's own folder is
        used) for a value no path can be."""
        return self._path("cwd")

    @cwd.setter
    def cwd(self, value):
        self._cache["cwd"] = value

    def _path(self, name):
        """A payload field that names a path, or "" when it holds a NUL,
        which no path holds (every file call would fail on it)."""
        value = self._text(name)
        return "" if "\0" in value else value

    @property
    def model(self):
        return self._text("model")

    @property
    def subagent(self):
        """True inside a subagent (its events carry the subagent's id)."""
        return bool(self.field("subagent"))

    @property
    def permission_mode(self):
        return self._text("permission_mode")

    # ------------------------------------------------------- event specific

    @property
    def prompt(self):
        return self._text("prompt")

    @property
    def source(self):
        """session_start's source in the engine's words (startup, resume, clear, compact)."""
        raw = self._text("source")
        return self.agent.data.get("session_sources", {}).get(raw, raw)

    @property
    def trigger(self):
        return self._text("trigger")

    @property
    def custom_instructions(self):
        return self._text("custom_instructions")

    @property
    def stop_active(self):
        return bool(self.field("stop_active"))

    # ---------------------------------------------------------------- tools

    @property
    def tool(self):
        """The agent's name of the tool called."""
        return self._text("tool")

    @property
    def tool_kind(self):
        """What the tool does: shell, read, write, search, task; None for
        others.  A shell command that stands for another kind's call (its
        YAML's `from_shell`: Codex's patch through the shell) is that kind."""
        kind = self.agent.tool_kind(self.tool) if self.tool else None
        if kind == "shell":
            return self.agent.shell_kind(self.agent.shell_command(self.tool_input)) or kind
        return kind

    @property
    def tool_input(self):
        value = self.field("tool_input")
        return value if isinstance(value, dict) else {}

    @property
    def tool_use_id(self):
        return self._text("tool_use_id")

    @property
    def error(self):
        return self._text("error")

    @property
    def command(self):
        """The shell command of a shell tool call, else None."""
        if self.tool_kind != "shell":
            return None
        value = _at(self.tool_input, self.agent.tools("shell")["command"])
        return value if isinstance(value, str) else None

    def file_paths(self, kinds=("read", "write", "search")):
        """The file or folder paths a file tool call names, as given."""
        kind = self.tool_kind
        if kind not in kinds:
            return []
        agent = self.agent
        if agent.tool_kind(self.tool) == "shell":  # a call through the shell: the paths its command names
            return agent.text_paths(kind, agent.shell_command(self.tool_input))
        out = []
        for field in agent.tools(kind).get("path", ()):
            value = _at(self.tool_input, field)
            if isinstance(value, str) and value:
                out.append(value)
        return out + [p for text in agent.input_texts(kind, self.tool_input) for p in agent.text_paths(kind, text)]

    @property
    def tool_output(self):
        """The tool's output as the agent sent it (its own shape)."""
        return self.field("tool_output")

    def output_streams(self):
        """(stdout, stderr) of a shell call's output, or (text, "") for an
        agent whose output is one text; None when there is none."""
        raw = self.tool_output
        shape = self.agent.tools("shell").get("output") or {}
        if isinstance(raw, dict):
            if "stdout" in shape:
                out, err = _at(raw, shape["stdout"]), _at(raw, shape.get("stderr", ""))
                return (out if isinstance(out, str) else "", err if isinstance(err, str) else "")
            if "text" in shape:
                text = _at(raw, shape["text"])
                return (text, "") if isinstance(text, str) else None
            return None
        if isinstance(raw, str):
            return raw, ""
        return None

    def exit_code(self):
        """The exit status a shell call's output text reports, per the
        agent's `failure.exit_pattern` (its last match in the text's tail),
        or None where the agent's text reports none."""
        failure = self.agent.data["failure"]
        pattern = failure.get("exit_pattern")
        streams = self.output_streams() if pattern and self.tool_kind == "shell" else None
        if not streams:
            return None
        tail = streams[0][-failure["exit_tail_chars"]:]
        literal = failure.get("exit_literal")  # every match holds it (agent table): without it, no re
        if literal and literal not in tail:
            return None
        code = _last_exit_digits(pattern, failure.get("exit_digits"), tail)
        return int(code) if code and code.isascii() and code.isdigit() else None

    def exit_status(self):
        """What a stub says of a shell call's exit status: the output's own
        field for it (`tools.shell.output.status`, an interpretation, or
        `exit_code`), else the status its text reports (exit_code), else
        what an output that states none means for this agent
        (`failure.exit_unsaid`: "0" where a failed call shows otherwise,
        else words saying it is not known)."""
        raw, shape = self.tool_output, self.agent.tools("shell").get("output") or {}
        for field in (shape.get("status"), shape.get("exit_code")):
            value = _at(raw, field) if isinstance(raw, dict) and field else None
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
                return str(value)
        code = self.exit_code()
        return str(code) if code is not None else self.agent.data["failure"]["exit_unsaid"]



def payload_for(agent, kind, fields, environ=None):
    """(the agent's event name, a payload as the agent would send it) for a
    neutral event `kind` with neutral `fields` (session, cwd, prompt, tool,
    tool_input, tool_output, transcript, source ...): what replay, previews
    and checks feed the hooks.  A source is written in the agent's words."""
    names = agent.agent_events(kind)
    if not names:
        raise KeyError(f"{agent.name} sends no {kind} event")
    payload = {}
    key = agent.data.get("event_key")
    if key:
        payload[key] = names[0]
    for name, value in fields.items():
        spec = agent.data["payload"].get(name)
        if spec is None or value is None:
            continue
        path = spec if isinstance(spec, str) else spec["path"]
        if name == "source":
            theirs = [k for k, v in agent.data.get("session_sources", {}).items() if v == value]
            value = theirs[0] if theirs else value
        _put(payload, path, value)
    return names[0], payload


def _put(data, path, value):
    keys = path.split(".")
    for key in keys[:-1]:
        data = data.setdefault(key, {})
    data[keys[-1]] = value


def make(agent, kind, **fields):
    """A neutral Event of `agent` built from neutral fields (see payload_for)."""
    name, payload = payload_for(agent, kind, fields)
    return Event(agent, payload, agent_event=name)


def as_event(value, agent=None):
    """`value` as a neutral Event: an Event as it is, a payload (a dict) as
    the default agent's (or `agent`'s, by name) payload, so callers written
    for Claude Code's payloads keep working."""
    if isinstance(value, Event):
        return value
    from . import DEFAULT_AGENT, table

    return Event(table.get(agent or DEFAULT_AGENT), value if isinstance(value, dict) else {})


def _last_exit_digits(pattern, taken_apart, tail):
    """Group 1 of the exit pattern's last match in `tail`: by str.find where
    the agent table took the pattern apart (regexlit.digits_between), else
    by re."""
    if taken_apart:
        from engine.base.regexlit import last_digits

        return last_digits(tail, *taken_apart)
    import re

    found = None
    for found in re.finditer(pattern, tail):
        pass
    return found.group(1) if found else None
