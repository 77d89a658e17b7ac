"""What one event looks like to the handlers: the event, its session state,
the turn, the profile's hooks settings and the log.  Reads the transcript's
context size only when a handler asks for it."""


class Context:
    """One event as handlers see it."""

    def __init__(self, event, state, turn, profile_ref, settings, log, chosen=None):
        self.event = event
        self.state = state
        self.turn = turn
        self.profile_ref = profile_ref
        self._chosen = chosen  # the profile's Choice (engine/core/profile.py), made by the dispatcher
        self.settings = settings  # the profile's hooks settings
        self.log = log
        self._usage = False  # not read yet
        self._snapshot = None
        self._said_shape = False  # the session id's shape was judged (transcript)
        self.touched_override = None  # engine refresh preview: the files given, without a transcript
        self.touched_extra = ()  # engine refresh preview --touched beside --transcript
        self._fill = False
        self.nothing_found = []  # (handler, places): said in one log line (say_nothing_found)
        self.found_something = False  # a refresh handler had files (or said why it left them out)
        # What is in view (engine/hooks/inview.py), filled as a refresh narrows its files:
        self._inview = None  # the transcript's InView, read once per event (inview.ctx_inview)
        self.scoped_for = None  # a touched path whose scoped rules a PreToolUse delivers (handlers/scoped_write.py)
        self.in_view_held = []  # rule files held back: the model has them already (engine replay counts them)
        # rule files a cadence passed on as gone far back though in view in this epoch:
        # one that cannot fit is not named to be read again (the model has it: refresh.py)
        self.in_view_far = set()
        self.in_view_skipped = 0  # how many files were held back when none was left to deliver
        self.in_view_next_due = None  # tokens of context at which the growth cadence is due next (cadence.py)
        self.compacted_unannounced = False  # the context shrank, and the agent sends no start event after a compaction
        self.compaction_running = False  # a compaction began beside the turn: what its summary will take goes in now
        self.compacted_checked = None  # cadence.compacted_before_this_request's answer, once worked out
        # Characters of this event's answer that earlier parts took where a
        # part cannot wait for the next event (a subagent's start: reinject.py).
        self.room_taken = 0
        # Refresh handlers that gave their part at this event: a handler runs
        # once an event, though a pending round's reinject and the growth
        # cadence may both name it (refresh.py).
        self.refreshed = set()
        # A context monitor told the user the fill at this event: a second one
        # (the Stop's audit and its monitor crossing 70% together) says it
        # again in other words; it records its thresholds and stays quiet.
        self.fill_told = False

    def say_nothing_found(self):
        """One log line for the handlers that found no file to inject, so a
        user wondering where a refresh went finds out without a line each."""
        if self.nothing_found and not self.found_something:
            said = "; ".join(f"{name} (no files in {', '.join(where) or 'no place'})" for name, where in self.nothing_found)
            self.log(f"nothing to inject: {said}")

    @property
    def chosen(self):
        """The Choice of the event's profile: the dispatcher's, else chosen
        now from the profile reference and the event's folder."""
        if self._chosen is None:
            from engine.core.profile import choice

            self._chosen = choice(self.profile_ref, self.cwd or None)
        return self._chosen

    @property
    def name(self):
        """The event in the engine's words (prompt, post_tool ...)."""
        return self.event.kind

    @property
    def opens_a_subagent(self):
        """The event starts a subagent's context: a context of its own, which
        holds what the agent loads itself and nothing the main one was
        given; nothing was touched in it yet, and nothing given to it is
        recorded as the main context's.  Its subagent_start, or, for an
        agent that sends none or whose start may reach no hook
        (`subagent_first_call` of its YAML: Codex CLI), the subagent's first
        tool call (no `subagent:<id>` mark in the session's state yet)."""
        kind = self.event.kind
        if kind == "subagent_start":
            return True
        if kind != "pre_tool" or not self.event.subagent:
            return False
        if self.agent.agent_events("subagent_start") and not self.agent.data["subagent_first_call"]:
            return False
        return not self.snapshot().get(self.subagent_mark())

    def subagent_mark(self):
        """The session state's mark of the event's subagent, once its context was opened."""
        return f"subagent:{self.event.field('subagent')}"

    @property
    def cwd(self):
        return self.event.cwd

    @property
    def agent(self):
        return self.event.agent

    def snapshot(self):
        if self._snapshot is None:
            self._snapshot = self.state.get() if self.state is not None else {}
        return self._snapshot

    def usage(self):
        """(tokens, model, since) of the latest main-chain response, or None
        (hooks/fill.py: `since` is where that response starts in the
        transcript); read once per event."""
        if self._usage is False:
            self._usage = None
            path = self.transcript()
            if path:  # no transcript, no reader to import
                from ..fill import last_usage

                self._usage = last_usage(path, self.settings["transcript"]["max_tail_bytes"], self.agent)
        return self._usage

    def transcript(self):
        """The session's transcript: as the event names it, else where the
        agent keeps a session's (`transcript.session_path` of its YAML)."""
        path = self.event.transcript
        if not path and self.event.session:
            where = self.agent.data["transcript"].get("session_path")
            if where:
                path = self._session_transcript(where)
        return path

    def _session_transcript(self, where):
        """`where` with the session's id as its folder, or "" when the id is
        not of the shape the agent's ids have (`transcript.session_shape`):
        the features that read the transcript go without it at this event,
        and the hook log says so once per session."""
        session = self.event.session
        folder = self.agent.session_component(session)
        if folder is not None:
            return self.agent.expand(where.replace("{session}", folder))
        if not self._said_shape:
            self._said_shape = True
            from ..notes import first_time

            if first_time("session-notes", session, "shape", self.settings["state"]["ttl_hours"] * 3600):
                shown = session if len(session) <= 80 else session[:80] + "..."
                self.log(f"session id {shown!r} is not of the shape {self.agent.name}'s ids have (transcript."
                         f"session_shape in pipelines/agents/{self.agent.name}.yaml): no transcript is looked "
                         "for under it; what reads the transcript goes without it")
        return ""

    def context_tokens(self):
        usage = self.usage()
        return None if usage is None else usage[0]

    def touched(self, scope):
        """Project-relative files the session's tool calls named (path-scoped
        rules, pathscope.py); read from the transcript once per event."""
        if self.touched_override is None and self.opens_a_subagent:
            return []  # the transcript's touches are the main context's
        if self.touched_override is None:
            from ..pathscope import touched_in_transcript

            found = touched_in_transcript(self.transcript(), self.cwd, scope, self.agent)
            self.touched_override = list(dict.fromkeys(found + list(self.touched_extra)))
        return self.touched_override

    def fill(self):
        """(percent, tokens, window) of the context per the transcript, or
        None (hooks/fill.py)."""
        if self._fill is False:
            from ..fill import fill_of

            self._fill = fill_of(self.agent, self.usage())
        return self._fill
