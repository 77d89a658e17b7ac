"""context_monitor: warn once per threshold (`thresholds`, percent) as the
context fill crosses it, per compaction epoch; a session below the first
threshold hears nothing.  When several are crossed at once, one warning names
the highest.  With `rearm`, thresholds the fill fell back below after a
compaction (a compaction line written since the warning, or the window of
another model) warn again on the next crossing; a context that shrinks
within an epoch (an agent's context editing) and grows back past them is
not warned again.  Shown to the user, once an
event: where two monitors cross at one event (the Stop's audit and its
monitor at 70%), the first speaks and the other only records its
thresholds.  To the model only with `to_model: true`, and then never at a
subagent's event: the fill
is the main chain's, so its warning waits for the main model's next event
(a subagent's PostToolUse would put it in the subagent's context instead,
and use up the threshold).

It runs at Stop and, because an agentic session may run hundreds of tool
calls and several auto-compactions between two Stops, at PostToolUse too.
There the fill is read only when it could have crossed something: the
transcript's size is one stat, and the context cannot have grown by more
tokens than the transcript grew in bytes divided by
`hooks.context.growth_bytes_per_token` since the response whose usage was
read began (fill.py: what was written after that is not in its figure, such
as the tool results of that response).  Nothing written since the last read
means nothing new; a transcript smaller than it was at the last read was
rewritten (a purge, an agent cutting its history short) and is read.
Once a threshold has been passed, any growth is read (a compaction may have
brought the fill back down).

The top consumers it names are the tool results the model read since the
last compaction, ranked by the session report's own function
(engine/session/report.in_context), so the two agree."""

import os

from ..told import WARNED, WARNED_AT, WARNED_WINDOW
from .base import Handler, HandlerSpec
from .part import Part
from .samples import pick

# The transcript's size where the response whose fill was read begins, that
# fill's tokens, and the transcript's size when it was read.
SEEN_SIZE, SEEN_TOKENS, READ_SIZE = "fill_seen_bytes:", "fill_seen_tokens:", "fill_read_bytes:"
SEEN_WINDOW = "fill_seen_window:"
# Where the response whose fill was last warned about begins, and its window
# (WARNED_AT, WARNED_WINDOW), and each threshold warned at (WARNED + the
# warnings' name + ":" + the threshold), are in ..told: kept in the session's
# file too while its state is in Redis.  The thresholds warned are armed
# again only after a compaction written since.


class ContextMonitorSpec(HandlerSpec):
    thresholds: tuple[float, ...]
    top: int
    to_model: bool
    rearm: bool
    template: str
    warnings: str | None


class ContextMonitor(Handler):
    Spec = ContextMonitorSpec
    settings = {"context": ("growth_bytes_per_token",)}
    variables = {"template": {"fill_pct", "tokens", "window", "threshold", "thresholds", "top", "total_tokens"}}
    samples = pick("fill_pct", "tokens", "window", "threshold", "thresholds", "top", "total_tokens")

    def __init__(self, spec, settings, registry):
        super().__init__(spec, settings, registry)
        self.warnings = self.spec.warnings or self.name  # monitors that share it warn once between them

    def _mark(self, t):
        return f"{WARNED}{self.warnings}:{t}"

    def due(self, ctx):
        # the main chain's fill, for the main model: not the subagent's to read
        return not ctx.event.stop_active and not (self.spec.to_model and ctx.event.subagent)

    def _size(self, ctx):
        path = ctx.transcript()
        try:
            return os.stat(path).st_size if isinstance(path, str) and path else None
        except (OSError, ValueError):
            return None

    def _worth_reading(self, ctx, size, thresholds, snap):
        """False when the fill cannot have crossed any threshold since it was
        last read (the PostToolUse fast path)."""
        if size is None:
            return False
        seen_size, seen_tokens = snap.get(SEEN_SIZE + self.warnings), snap.get(SEEN_TOKENS + self.warnings)
        read_size = snap.get(READ_SIZE + self.warnings)
        if not all(isinstance(v, int) for v in (seen_size, seen_tokens, read_size)):
            return True
        if size == read_size:
            return False
        if size < read_size:
            return True  # rewritten smaller (a purge, a history cut short): no base to count growth from
        if any(snap.get(self._mark(t)) for t in thresholds):
            return True  # past one already: a compaction may have brought it back
        # The smallest window this session may have: the one read last, or the
        # agent's regular one where that is smaller (the model may have changed
        # since: a 1,000,000-token window read last let a switch to a
        # 200,000-token model fill past 70% unread).
        seen_window = snap.get(SEEN_WINDOW + self.warnings)
        window = min(w for w in (seen_window, ctx.agent.smallest_window()) if isinstance(w, int) and w > 0)
        lowest = min(thresholds) * window / 100.0
        grown = max(0, size - seen_size) / ctx.settings["context"]["growth_bytes_per_token"]
        return seen_tokens + grown >= lowest

    def parts(self, ctx):
        thresholds = sorted(self.spec.thresholds)
        snap = ctx.snapshot()
        size = None
        if ctx.name != "stop":
            size = self._size(ctx)
            if not self._worth_reading(ctx, size, thresholds, snap):
                return []
        fill = ctx.fill()
        if fill is None:
            return []
        pct, tokens, window = fill
        marks = {}
        if size is not None and tokens > 0:
            # Right after a compaction the fill reads 0 while the system prompt
            # is still to come: no base then, the next event reads again.
            marks = {SEEN_SIZE + self.warnings: ctx.usage()[2], SEEN_TOKENS + self.warnings: tokens,
                     READ_SIZE + self.warnings: size, SEEN_WINDOW + self.warnings: window}
        fallen = [t for t in thresholds if pct < t and snap.get(self._mark(t))]
        if self.spec.rearm and fallen and self._new_epoch(ctx, snap, window):
            marks.update({self._mark(t): 0 for t in fallen})
        new = [t for t in thresholds if pct >= t and not snap.get(self._mark(t))]
        if not new:
            return [Part(self.name, marks=marks)] if marks else []
        marks.update({self._mark(t): 1 for t in thresholds if pct >= t})
        marks.update({WARNED_AT + self.warnings: ctx.usage()[2], WARNED_WINDOW + self.warnings: window})
        from ..banner import render

        top, total = self._consumers(ctx)
        text = render(self.spec.template, ctx.settings["templates"], fill_pct=int(pct), tokens=tokens,
                      window=window, threshold=max(new), thresholds=thresholds, top=top,
                      total_tokens=total).strip("\n")
        if not text:
            return [Part(self.name, marks=marks)]
        told, ctx.fill_told = ctx.fill_told, True
        return [Part(self.name, text if self.spec.to_model else None, marks=marks, user_message=None if told else text)]

    def _new_epoch(self, ctx, snap, window):
        """Did the fill fall below a threshold it was warned at because of a
        compaction since that warning (or another model's window)?  A
        context also shrinks without one (Claude Code 2.0.67 by 23,000
        tokens after a subagent's answer, on the shared session 21; its
        context editing clears old tool results and thinking): the fill
        climbing back past the threshold is the same epoch, already
        warned.  A line head of a compaction written after the warned
        response began says one happened (one backward read of line heads,
        only when the fill is below a threshold already warned)."""
        at = snap.get(WARNED_AT + self.warnings)
        if not isinstance(at, int) or snap.get(WARNED_WINDOW + self.warnings) != window:
            return True
        path = ctx.transcript()
        if not path:
            return True
        from engine.agents.transcripts import compaction_written_after

        try:
            return compaction_written_after(ctx.agent.data["transcript"]["reader"], path, at,
                                            ctx.settings["transcript"]["max_tail_bytes"])
        except (OSError, ValueError):
            return True

    def _consumers(self, ctx):
        """([{tool, tokens, bytes, calls, share}], total tokens) of the tool
        results in the context now; nothing when the transcript cannot be read."""
        path = ctx.transcript()
        if not path:
            return [], 0
        from engine.base.errors import UserError
        from engine.session.report import in_context

        try:
            rows, total_bytes, per_token = in_context(path, agent=ctx.agent.name)
        except (UserError, OSError) as exc:
            ctx.log(f"handler {self.name}: tool consumers not read ({exc})")
            return [], 0
        top = [{"tool": r["name"], "tokens": r["est_tokens"], "bytes": r["result_bytes"], "calls": r["calls"],
                "share": r["share"]} for r in rows[: self.spec.top]]
        return top, int(round(total_bytes / per_token))
