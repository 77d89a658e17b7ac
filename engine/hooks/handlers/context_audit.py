"""context_audit: at Stop, once the context fill passes `threshold_pct`,
report the fill and the tools whose output filled it most (the session's
tally, output_tally.py), with a compact suggestion naming them.  Shown to
the user (systemMessage); added to the model's context too only with
`to_model: true`.  Once per crossing: the report is armed again when the
fill falls below the threshold (a compaction) if `rearm` is set."""

from .part import Part


class ContextAudit:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]
        self.mark = f"reported:{self.name}"

    def due(self, ctx):
        return not ctx.event.get("stop_hook_active")

    def parts(self, ctx):
        fill = ctx.fill()
        if fill is None:
            return []
        pct, tokens, window = fill
        reported = ctx.snapshot().get(self.mark)
        if pct < self.spec["threshold_pct"]:
            return [Part(self.name, marks={self.mark: 0})] if reported and self.spec["rearm"] else []
        if reported:
            return []
        from ..banner import render
        from .output_tally import consumers

        top, total = consumers(ctx.snapshot(), self.spec["top"])
        text = render(self.spec["template"], ctx.settings["templates"], fill_pct=int(pct), tokens=tokens,
                      window=window, threshold=self.spec["threshold_pct"], top=top, total_tokens=total).strip("\n")
        if not text:
            return [Part(self.name, marks={self.mark: 1})]
        return [Part(self.name, text if self.spec["to_model"] else None, marks={self.mark: 1}, user_message=text)]
