"""growth_refresh: run refresh handlers between prompts once the context
grew by their `every_tokens` since a rule was last in view.

An agentic session runs hundreds of tool calls on one prompt: a cadence
counted at UserPromptSubmit never fires there.  This handler sits on
PostToolUse and asks each target refresh whether its growth cadence is
due (one stat on the quiet path, engine/hooks/cadence.growth_due); the
target then delivers only the rules that went that far back."""


class GrowthRefresh:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]
        self.registry = registry

    def targets(self):
        return [self.registry[n] for n in self.spec["handlers"]]

    def _live(self, h, ctx):
        return getattr(h, "every_tokens", 0) and _has_files(h.spec, ctx.cwd) and h.grown(ctx)

    def due(self, ctx):
        return any(self._live(h, ctx) for h in self.targets())

    def parts(self, ctx):
        out = []
        for h in self.targets():
            try:
                if self._live(h, ctx):
                    out.extend(h.parts(ctx))
            except Exception as exc:  # one broken target must not silence the others
                ctx.log(f"handler {h.name} (run by {self.name}) failed: {type(exc).__name__}: {exc}")
        return out


def _has_files(spec, cwd):
    """True when a target has any rule file to deliver (a listing, no read):
    without one, the quiet path never loads the refresh's machinery."""
    import os

    from ..sources import _matches, expand

    for src in spec.get("sources", ()):
        folder = expand(src["dir"], cwd)
        pattern = src.get("glob", "*.md")
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        if "/" in pattern or "**" in pattern or any(_matches(n, pattern) for n in names):
            return True
    return any(os.path.isfile(expand(f, cwd)) for f in spec.get("files", ()))
