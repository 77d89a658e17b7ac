"""reinject: run named refresh handlers at once when the event matches (after
a compaction: SessionStart with source `compact`)."""


class Reinject:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]
        self.registry = registry

    def due(self, ctx):
        when = self.spec.get("when", {})
        sources = when.get("source")
        return not sources or ctx.event.get("source") in sources

    def targets(self):
        return [self.registry[n] for n in self.spec["handlers"]]

    def parts(self, ctx):
        """Each target's part on its own: the dispatcher fits them under the
        cap and defers what does not fit."""
        out = []
        for h in self.targets():
            try:
                out.extend(h.parts(ctx))
            except Exception as exc:  # one broken target must not silence the others
                ctx.log(f"handler {h.name} (run by {self.name}) failed: {type(exc).__name__}: {exc}")
        return out
