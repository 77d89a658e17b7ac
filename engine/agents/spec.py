"""One agent's declaration (pipelines/agents/NAME.yaml) as the hooks read it:
plain data from the compiled profile, with the lookups every layer needs.

Nothing here imports YAML: a hook reads the declaration from the compiled
profile's cached hooks settings (`hooks.agents`)."""

import os

NEUTRAL_EVENTS = ("session_start", "prompt", "pre_tool", "post_tool", "tool_failure", "stop", "subagent_stop",
                  "pre_compact", "post_compact", "session_end", "notification", "subagent_start",
                  "permission_request", "before_model", "after_model")


class Agent:
    """An agent declaration with lookups by neutral name."""

    __slots__ = ("data", "name", "_by_event", "_tool_kinds")

    def __init__(self, data):
        self.data = data
        self.name = data["name"]
        self._by_event = None
        self._tool_kinds = None

    # ---------------------------------------------------------------- events

    def neutral(self, agent_event):
        """The engine's name of one of the agent's events, or None."""
        return self.data["events"].get(agent_event)

    def agent_events(self, neutral):
        """The agent's names of one neutral event (usually one, or none)."""
        if self._by_event is None:
            by = {}
            for theirs, ours in self.data["events"].items():
                by.setdefault(ours, []).append(theirs)
            self._by_event = by
        return self._by_event.get(neutral, [])

    # ----------------------------------------------------------------- tools

    def tool_kind(self, tool):
        """shell, read, write, search, task ... for one of the agent's tool names; None for others."""
        if self._tool_kinds is None:
            kinds = {}
            for kind, spec in self.data.get("tools", {}).items():
                for name in spec["names"]:
                    kinds.setdefault(name, kind)
            self._tool_kinds = kinds
        return self._tool_kinds.get(tool)

    def tools(self, kind):
        """The declaration of one tool kind ({} when the agent has none)."""
        return self.data.get("tools", {}).get(kind) or {}

    def shell_kind(self, command):
        """The tool kind a shell command stands for (`from_shell` of a kind:
        Codex's `apply_patch <<'EOF'` is a write), or None: a command.  Its
        text is then read as that kind's (`paths_in`)."""
        if not isinstance(command, str):
            return None
        head = command.lstrip()
        for kind, spec in self.data.get("tools", {}).items():
            starts = spec["from_shell"]["starts"] if "from_shell" in spec else None
            if starts and head.startswith(starts) and head[len(starts):len(starts) + 1] in ("", " ", "\t", "\n"):
                return kind
        return None

    def text_paths(self, kind, text):
        """The paths a `kind` call's text names, as written (group 1 of each
        match of its `paths_in.pattern`): a patch's files."""
        import re

        spec = self.tools(kind)
        if "paths_in" not in spec or not isinstance(text, str):
            return []
        return [m.group(1) for m in re.finditer(spec["paths_in"]["pattern"], text, re.M)]

    def input_texts(self, kind, tool_input):
        """The texts of a `kind` call's input that `paths_in` reads."""
        spec = self.tools(kind)
        if "paths_in" not in spec or not isinstance(tool_input, dict):
            return []
        return [tool_input[f] for f in spec["paths_in"]["fields"] if isinstance(tool_input.get(f), str)]

    def shell_command(self, tool_input):
        """The command of a shell call's input, as the hooks or the
        transcript name its field (`command`, `transcript_fields`)."""
        spec = self.tools("shell")
        field = spec.get("command")
        value = tool_input.get(field) if field and isinstance(tool_input, dict) else None
        if value is None and isinstance(tool_input, dict) and "transcript_fields" in spec:
            value = next((tool_input.get(k) for k, v in spec["transcript_fields"].items() if v == field), None)
        return value if isinstance(value, str) else None

    def tool_names(self, *kinds):
        return [n for k in kinds for n in self.tools(k).get("names", ())]

    # -------------------------------------------------------------- context

    def model_window(self, model):
        """The context window `context` of the agent's YAML gives `model`
        (a name; None: the regular window): the long one for a model
        `long_window_models` names."""
        conf = self.data["context"]
        if model and any(m in model for m in conf["long_window_models"]):
            return conf.get("long_window_tokens") or conf["window_tokens"]
        return conf["window_tokens"]

    def smallest_window(self):
        """The regular window: the smallest one the agent's YAML gives a model."""
        return self.data["context"]["window_tokens"]

    # -------------------------------------------------------------- answers

    def answer(self, what):
        """The declaration of one answer kind, or None when the agent has no such answer."""
        return self.data.get("answers", {}).get(what)

    def answer_events(self, what):
        """The events at which the agent takes answer `what`: those its
        `events` names; none when the agent has no such answer.  An answer
        without `events` (a user_message) is taken wherever the agent shows
        it (answer.render), but no event is counted on for it."""
        spec = self.answer(what)
        return spec.get("events", ()) if spec is not None else ()

    def answers_at(self, what, neutral_event):
        return neutral_event in self.answer_events(what)

    def renders(self, what, neutral_event):
        """Whether an answer `what` given at this event reaches the agent:
        it has a template for it, at every event or at those its `events`
        names (answer.render)."""
        spec = self.answer(what)
        if spec is None or "template" not in spec:
            return False
        events = spec.get("events")
        return events is None or neutral_event in events

    def context_for_one_request(self, neutral_event):
        """Whether context given at this event reaches only the request about
        to be sent, not the session's history (answers.request_context where
        the event shows no other context: Gemini's BeforeModel)."""
        return not self.renders("context", neutral_event) and self.renders("request_context", neutral_event)

    def reads_context_at(self, neutral_event):
        """Whether the model reads context a hook adds at this event: into
        the session (answers.context) or into the one request about to be
        sent (context_for_one_request)."""
        return self.answers_at("context", neutral_event) or self.context_for_one_request(neutral_event)

    def takes_decision(self, decision):
        """Whether the agent takes this tool decision (allow, ask, deny): it
        has a decision answer, whose `decisions` name it (all, unsaid)."""
        spec = self.answer("decision")
        return spec is not None and ("decisions" not in spec or decision in spec["decisions"])

    # ---------------------------------------------------------------- places

    def home(self, environ=None):
        """The agent's own folder ({agent_home}): its variable, else the default."""
        env = environ if environ is not None else os.environ
        spec = self.data["home"]
        value = env.get(spec["env"]) if spec.get("env") else None
        if value and spec.get("resolved"):  # the agent's own name for it: links followed, absolute
            return os.path.realpath(os.path.expanduser(value))
        return os.path.expanduser(value or spec["default"])

    def session_component(self, session):
        """`session` (an id from the payload) when it may become a path
        component: it has the agent's transcript.session_shape, a shape
        `engine validate` keeps from taking '/', '..', a NUL or a line
        break (check.py).  None otherwise, and for an agent that declares
        no shape."""
        shape = self.data["transcript"].get("session_shape")
        if not shape or not isinstance(session, str):
            return None
        return session if has_shape(shape, session) else None

    def expand(self, template, project="", environ=None):
        """A declared path with {agent_home} and {project} filled in and ~ expanded."""
        text = template.replace("{agent_home}", self.home(environ)).replace("{project}", project or "")
        return os.path.expanduser(text)


def has_shape(shape, text):
    """Does `text` have a session_shape: at most max_length characters, its
    first of `first`, every later one of `rest`?  Sets, not a regular
    expression: a hook checks an id at every event, and `re` is an import
    its quiet path does not pay."""
    if not text or len(text) > shape["max_length"] or text[0] not in char_set(shape["first"]):
        return False
    rest = char_set(shape["rest"])
    return all(c in rest for c in text[1:])


def char_set(spec):
    """The characters a shape's set names: each character, X-Y a range of
    them ('A-Za-z0-9_-': letters, digits, '_' and '-'; a '-' first or last
    is itself)."""
    out, i = set(), 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            out.update(chr(c) for c in range(ord(spec[i]), ord(spec[i + 2]) + 1))
            i += 3
        else:
            out.add(spec[i])
            i += 1
    return frozenset(out)
