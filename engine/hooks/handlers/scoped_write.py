"""scoped_on_write: before a write of a file a path-scoped rule covers,
deliver that rule (pre_tool added context), once per epoch, to agents that
do not load it themselves on a write.

An agent loads a scoped rule on a read of a matching file, and on a write
only where its YAML says so (`scoped_on_write_since` of the instruction
source: Claude Code from 2.1.328; claude-code#23478, #63142 before): a
session that creates src/new.py never sees the rule for src/**/*.py.  The
version is the one reader's; a rule already in view in this epoch (delivered
by the agent or the engine) is not delivered again (engine/hooks/inview.py).
A subagent's write gets the rule too, but it is not recorded as in view:
the main context did not receive it."""

from .base import Handler, HandlerSpec


class ScopedOnWriteSpec(HandlerSpec):
    handlers: tuple[str, ...]
    tools: tuple[str, ...]


class ScopedOnWrite(Handler):
    Spec = ScopedOnWriteSpec

    def _path(self, ctx):
        if ctx.name != "pre_tool" or ctx.event.tool_kind not in self.spec.tools:
            return None
        from ..pathscope import relative

        for path in ctx.event.file_paths(self.spec.tools):
            rel = relative(path, ctx.cwd)
            if rel:
                return rel
        return None

    def due(self, ctx):
        if not ctx.settings.get("in_view") or self._path(ctx) is None:
            return False
        from ..inview import loads_scoped_on_write

        return not loads_scoped_on_write(ctx)

    def parts(self, ctx):
        rel = self._path(ctx)
        ctx.scoped_for = rel
        ctx.touched_extra = tuple(ctx.touched_extra) + (rel,)
        ctx.touched_override = None
        from ..delivery import KEY

        out = []
        try:
            for h in (self.registry[n] for n in self.spec.handlers):
                try:
                    for part in h.parts(ctx):
                        # a scoped delivery is not the target's cadence: keep only what says it is in
                        # view, and in a subagent not even that (the main model does not get it)
                        marks = {k: v for k, v in (part.marks or {}).items() if k.startswith(KEY)}
                        part.marks = {} if ctx.event.subagent else marks
                        part.name = self.name
                        out.append(part)
                except Exception as exc:  # one broken target must not silence the others
                    ctx.log(f"handler {h.name} (run by {self.name}) failed: {type(exc).__name__}: {exc}")
        finally:
            ctx.scoped_for = None
        return out
