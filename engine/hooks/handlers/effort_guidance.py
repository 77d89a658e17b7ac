"""effort_guidance: at SessionStart (the sources in `when.source`), inject
the guidance written for the profile's effort (`hooks.effort`: low, medium
or high).  An empty template (high, by default) injects nothing.  The
guidance states the policy; it names models only when the profile asks, with
`model_advice` (a line per effort, after the policy)."""

from .base import Handler, HandlerSpec
from .part import Part
from .samples import pick


class EffortGuidanceSpec(HandlerSpec):
    when: dict
    templates: dict
    model_advice: dict


class EffortGuidance(Handler):
    Spec = EffortGuidanceSpec
    settings = {"effort": ()}
    variables = {f"{key}.{e}": {"effort", "source", "effort_keyword"} for key in ("templates", "model_advice")
                 for e in ("low", "medium", "high")}
    samples = pick("effort", "source", "effort_keyword")

    def due(self, ctx):
        sources = self.spec.when.get("source")
        return (not sources or ctx.event.source in sources) and bool(self.template(ctx))

    def template(self, ctx):
        return self.spec.templates[ctx.settings["effort"]]

    def parts(self, ctx):
        from ..banner import render_cached

        # the agent's own word for its deepest reasoning, where it has one (its YAML)
        values = dict(effort=ctx.settings["effort"], source=ctx.event.source,
                      effort_keyword=ctx.agent.data.get("effort_keyword") or "")
        text = render_cached(self.template(ctx), ctx.settings["templates"], **values).strip("\n")
        advice = self.spec.model_advice[ctx.settings["effort"]]
        if text and advice:
            advice = render_cached(advice, ctx.settings["templates"], **values).strip("\n")
            text = f"{text} {advice}" if advice else text
        return [Part(self.name, text)] if text and not _still_in_view(ctx, text) else []


def _still_in_view(ctx, text):
    """At a resume of an agent whose resumed run still holds what the
    session's start added (its YAML's `transcript.resumed`: session_start
    not named, kept once, as Codex CLI's and Claude Code's are): whether
    the same guidance is in its transcript since its latest compaction."""
    from ..inview import resumed_copies

    path = ctx.transcript() if ctx.event.source == "resume" and resumed_copies(ctx.agent, "session_start") else None
    if not path:
        return False
    from engine.agents.transcripts import tail

    try:
        for rec in tail(ctx.agent.data["transcript"]["reader"], path, ctx.settings["transcript"]["max_tail_bytes"],
                        kinds=("delivered", "compaction")):
            if rec.kind == "compaction":
                return False
            if any(isinstance(t, str) and text in t for t in rec.texts):
                return True
    except OSError:
        return False
    return False
