"""What one event looks like to the handlers: the event, its session state,
the turn, the profile's hooks settings and the log.  Reads the transcript's
context size only when a handler asks for it."""


class Context:
    """One event as handlers see it."""

    def __init__(self, event, state, turn, profile_ref, settings, log):
        self.event = event
        self.state = state
        self.turn = turn
        self.profile_ref = profile_ref
        self.settings = settings  # the profile's hooks settings
        self.log = log
        self._usage = False  # not read yet
        self._snapshot = None
        self.touched_override = None  # engine refresh preview: the files given, without a transcript
        self.touched_extra = ()  # engine refresh preview --touched beside --transcript
        self._fill = False

    @property
    def name(self):
        return self.event.get("hook_event_name", "")

    @property
    def cwd(self):
        return self.event.get("cwd") or ""

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
            path = self.event.get("transcript_path")
            if path and isinstance(path, str):  # no transcript, no reader to import
                from ..fill import last_usage

                self._usage = last_usage(path, self.settings["transcript"]["max_tail_bytes"])
        return self._usage

    def context_tokens(self):
        usage = self.usage()
        return None if usage is None else usage[0]

    def touched(self, scope):
        """Project-relative files the session's tool calls named (path-scoped
        rules, pathscope.py); read from the transcript once per event."""
        if self.touched_override is None:
            from ..pathscope import touched_in_transcript

            found = touched_in_transcript(self.event.get("transcript_path"), self.cwd, scope)
            self.touched_override = list(dict.fromkeys(found + list(self.touched_extra)))
        return self.touched_override

    def fill(self):
        """(percent, tokens, window) of the context per the transcript, or
        None (hooks/fill.py)."""
        if self._fill is False:
            from ..fill import fill_of

            self._fill = fill_of(self.usage(), self.settings["context"])
        return self._fill
