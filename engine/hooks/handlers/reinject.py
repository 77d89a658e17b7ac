"""reinject: run named refresh handlers at once when the event matches (after
a compaction: SessionStart with source `compact`; with `when: {pending:
true}`, at any event while a target still has rules to deliver from a
delivery its budget could not hold whole: engine/hooks/overflow.py)."""


class Reinject:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]
        self.registry = registry

    def due(self, ctx):
        when = self.spec.get("when", {})
        sources = when.get("source")
        if sources and ctx.event.source not in sources:
            return False
        return not when.get("pending") or bool(self._pending(ctx))

    def _pending(self, ctx):
        """Targets with rules left to deliver; never inside a subagent, whose
        context is not the one the earlier part went to."""
        if ctx.event.subagent:
            return []
        snap = ctx.snapshot()
        return [n for n in self.spec["handlers"] if snap.get(f"pending:{n}")]

    def targets(self, ctx=None):
        names = self._pending(ctx) if ctx is not None and self.spec.get("when", {}).get("pending") else self.spec["handlers"]
        return [self.registry[n] for n in names]

    def parts(self, ctx):
        """Each target's part on its own: the dispatcher fits them under the
        cap and defers what does not fit."""
        out = []
        for h in self.targets(ctx):
            try:
                out.extend(h.parts(ctx))
            except Exception as exc:  # one broken target must not silence the others
                ctx.log(f"handler {h.name} (run by {self.name}) failed: {type(exc).__name__}: {exc}")
        return out
