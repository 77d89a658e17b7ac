"""context_monitor: at Stop, warn once per threshold (`thresholds`, percent)
as the context fill crosses it; a session below the first threshold hears
nothing.  When several are crossed at once, one warning names the highest.
With `rearm`, thresholds the fill fell back below (a compaction) warn again
on the next crossing.  Shown to the user; to the model only with
`to_model: true`."""

from .part import Part


class ContextMonitor:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]

    def _mark(self, t):
        return f"warned:{self.name}:{t}"

    def due(self, ctx):
        return not ctx.event.get("stop_hook_active")

    def parts(self, ctx):
        fill = ctx.fill()
        if fill is None:
            return []
        pct, tokens, window = fill
        snap = ctx.snapshot()
        thresholds = sorted(self.spec["thresholds"])
        marks = {}
        if self.spec["rearm"]:
            marks = {self._mark(t): 0 for t in thresholds if pct < t and snap.get(self._mark(t))}
        new = [t for t in thresholds if pct >= t and not snap.get(self._mark(t))]
        if not new:
            return [Part(self.name, marks=marks)] if marks else []
        marks.update({self._mark(t): 1 for t in thresholds if pct >= t})
        from ..banner import render
        from .output_tally import consumers

        top, total = consumers(snap, self.spec["top"])
        text = render(self.spec["template"], ctx.settings["templates"], fill_pct=int(pct), tokens=tokens,
                      window=window, threshold=max(new), thresholds=thresholds, top=top,
                      total_tokens=total).strip("\n")
        if not text:
            return [Part(self.name, marks=marks)]
        return [Part(self.name, text if self.spec["to_model"] else None, marks=marks, user_message=text)]
