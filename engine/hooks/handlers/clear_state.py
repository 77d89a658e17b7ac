"""clear_state: forget the session (SessionEnd), all but what the engine
delivered into its context (engine/hooks/delivery.py): a session the agent
resumes (`--resume`, `claude -c`) brings its transcript back into the
context, deliveries included, and the ids there mean something only with
their records.  Those expire with the state (hooks.state.ttl_hours)."""

from .base import Handler


class ClearState(Handler):
    def due(self, ctx):
        return True

    def run(self, ctx):
        if ctx.state is None:
            return None, None
        from ..delivery import KEY

        kept = {k: v for k, v in ctx.state.get().items() if isinstance(k, str) and k.startswith(KEY) and v}
        ctx.state.clear()
        if kept:
            ctx.state.update(kept)
        return None, None

    def parts(self, ctx):
        self.run(ctx)
        return []
