"""clear_state: forget the session (SessionEnd), all but what stays true
of its transcript: what the engine delivered into its context
(engine/hooks/delivery.py) and which failed calls are in the tool memory
(tool_memory_banner.MARK).  A session the agent resumes (`--resume`,
`claude -c`) brings its transcript back, deliveries and failures included:
the delivery ids mean something only with their records, and a failure
scanned again is not counted twice.  Gemini CLI fires SessionEnd twice at
an interactive session's end, the second after the first one's clear_state
(tests/support/AGENTS-MEASURED.md): its scan finds the marks.  What is
kept expires with the state (hooks.state.ttl_hours)."""

from .base import Handler


def survives(key):
    """Whether a state key outlives the session's end (kept here, and saved
    when a session_end handler sets it: the dispatcher)."""
    from ..delivery import KEY
    from .tool_memory_banner import MARK

    return isinstance(key, str) and key.startswith((KEY, MARK))


def kept_in_files(key):
    """Whether a state key set while the session's state is in Redis goes
    into its file as well (state.FallbackState.update): what outlives the
    session (survives), and what the session was told once (the thresholds
    a context monitor warned at, with where and in which window it warned;
    a fact the hook log was given: engine/hooks/told.py), which a session
    that leaves Redis must not be told again."""
    from ..told import PREFIXES

    return survives(key) or (isinstance(key, str) and key.startswith(PREFIXES))


class ClearState(Handler):
    def due(self, ctx):
        return True

    def run(self, ctx):
        if ctx.state is None:
            return None, None
        kept = {k: v for k, v in ctx.state.get().items() if survives(k) and v}
        ctx.state.clear()
        if kept:
            ctx.state.update(kept)
        return None, None

    def parts(self, ctx):
        self.run(ctx)
        return []
