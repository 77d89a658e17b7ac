"""clear_state: forget the session (SessionEnd)."""


class ClearState:
    def __init__(self, spec, settings, registry):
        self.name = spec["name"]

    def due(self, ctx):
        return True

    def run(self, ctx):
        if ctx.state is not None:
            ctx.state.clear()
        return None, None

    def parts(self, ctx):
        self.run(ctx)
        return []
