"""scoped_on_write: before a Write or Edit of a file a path-scoped rule
covers, deliver that rule (PreToolUse additionalContext), once per epoch,
to agents that do not load it themselves on a write.

Agents before hooks.in_view.scoped_on_write_since load a scoped rule only
when a matching file is read (claude-code#23478, #63142): a session that
creates src/new.py never sees the rule for src/**/*.py.  The version is the
transcript's; a rule already in view in this epoch (delivered by the agent
or the engine) is not delivered again (engine/hooks/inview.py)."""


class ScopedOnWrite:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]
        self.registry = registry

    def _path(self, ctx):
        if ctx.name != "PreToolUse" or ctx.event.get("tool_name") not in self.spec["tools"]:
            return None
        inp = ctx.event.get("tool_input")
        if not isinstance(inp, dict):
            return None
        from ..pathscope import relative

        for field in self.spec["input_fields"]:
            rel = relative(inp.get(field), ctx.cwd)
            if rel:
                return rel
        return None

    def due(self, ctx):
        conf = ctx.settings.get("in_view")
        if not conf or self._path(ctx) is None:
            return False
        from ..inview import agent_version, at_least

        return not at_least(agent_version(ctx), conf["scoped_on_write_since"])

    def parts(self, ctx):
        rel = self._path(ctx)
        ctx.scoped_for = rel
        ctx.touched_extra = tuple(ctx.touched_extra) + (rel,)
        ctx.touched_override = None
        from ..delivery import KEY

        out = []
        try:
            for h in (self.registry[n] for n in self.spec["handlers"]):
                try:
                    for part in h.parts(ctx):
                        # a scoped delivery is not the target's cadence: keep only what says it is in view
                        marks = {k: v for k, v in (part.marks or {}).items() if k.startswith(KEY)}
                        part.marks = marks
                        part.name = self.name
                        out.append(part)
                except Exception as exc:  # one broken target must not silence the others
                    ctx.log(f"handler {h.name} (run by {self.name}) failed: {type(exc).__name__}: {exc}")
        finally:
            ctx.scoped_for = None
        return out
