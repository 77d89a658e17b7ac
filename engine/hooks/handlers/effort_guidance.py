"""effort_guidance: at SessionStart (the sources in `when.source`), inject
the guidance written for the profile's effort (`hooks.effort`: low, medium
or high).  An empty template (high, by default) injects nothing.  The
guidance states the policy; it names models only when the profile asks, with
`model_advice` (a line per effort, after the policy)."""

from .part import Part


class EffortGuidance:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]

    def due(self, ctx):
        sources = self.spec.get("when", {}).get("source")
        return (not sources or ctx.event.source in sources) and bool(self.template(ctx))

    def template(self, ctx):
        return self.spec["templates"].get(ctx.settings["effort"], "")

    def parts(self, ctx):
        from ..banner import render_cached

        values = dict(effort=ctx.settings["effort"], source=ctx.event.source)
        text = render_cached(self.template(ctx), ctx.settings["templates"], **values).strip("\n")
        advice = self.spec.get("model_advice", {}).get(ctx.settings["effort"], "")
        if text and advice:
            advice = render_cached(advice, ctx.settings["templates"], **values).strip("\n")
            text = f"{text} {advice}" if advice else text
        return [Part(self.name, text)] if text else []
