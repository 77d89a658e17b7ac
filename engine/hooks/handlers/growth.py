"""growth_refresh: run refresh handlers between prompts once the context
grew by their `every_tokens` since a rule was last in view.

An agentic session runs hundreds of tool calls on one prompt: a cadence
counted at UserPromptSubmit never fires there.  This handler sits on
PostToolUse and asks each target refresh whether its growth cadence is
due (one stat on the quiet path, engine/hooks/inview.growth_due); the
target then delivers only the rules that went that far back."""


class GrowthRefresh:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]
        self.registry = registry

    def targets(self):
        return [self.registry[n] for n in self.spec["handlers"]]

    def due(self, ctx):
        return any(getattr(h, "every_tokens", 0) and h.grown(ctx) for h in self.targets())

    def parts(self, ctx):
        out = []
        for h in self.targets():
            try:
                if getattr(h, "every_tokens", 0) and h.grown(ctx):
                    out.extend(h.parts(ctx))
            except Exception as exc:  # one broken target must not silence the others
                ctx.log(f"handler {h.name} (run by {self.name}) failed: {type(exc).__name__}: {exc}")
        return out
