"""effort_guidance: inject the guidance written for the profile's effort
(`hooks.effort`: low, medium or high).  An empty template (high, by
default) injects nothing.  The guidance states the policy; it names models
only when the profile asks, with `model_advice` (a line per effort, after
the policy).  `templates_of` names another effort_guidance handler whose
templates and advice it gives: one policy, wherever it is given.

It gives the policy at the sources in `when.source` (at session_start: a
start, and the start after a compaction of an agent that sends one: Claude
Code, Codex CLI), or at every event it sits on when `when` names none.
With `when: {after_compaction: true}` it gives it only after a compaction
of an agent that sends no start after it, by the event it sits on:

- pre_compact, for an agent that compacts beside the turn and sends no
  start after it (Copilot CLI: `transcript.compacts_in_background`): the
  summary will take what the start gave, so the policy is due again at the
  next event that adds context to the session, which the summary keeps;
- before_model, for an agent that compacts with no event after it but the
  next request's (Gemini CLI): given to that request (the agent's
  `answers.request_context`), and due again at the next event that adds
  context, for good; unless a turn the compaction kept holds it already
  (Gemini keeps the newest turns after its summary);
- any other event (post_tool, tool_failure, prompt): only while due again
  as above, never inside a subagent (its context is not the one
  compacted).  One state read on the quiet path."""

from .base import Handler, HandlerSpec
from .part import Part
from .samples import pick

AGAIN = "effort:again"  # state key: a compaction took the policy, the next event that adds context gives it
AHEAD = 1  # ... a compaction beside the turn: its summary will take what is in view now
AFTER = 2  # ... a compaction done: the turns it kept may hold the policy


class EffortGuidanceSpec(HandlerSpec):
    when: dict
    templates: dict
    model_advice: dict
    templates_of: str


class EffortGuidance(Handler):
    Spec = EffortGuidanceSpec
    settings = {"effort": ()}
    variables = {f"{key}.{e}": {"effort", "source", "effort_keyword"} for key in ("templates", "model_advice")
                 for e in ("low", "medium", "high")}
    samples = pick("effort", "source", "effort_keyword")

    @classmethod
    def check(cls, resolved, h, names, err):
        """The handler `templates_of` names is an effort_guidance handler with
        templates of its own."""
        errors = super().check(resolved, h, names, err)
        source = h.get("templates_of")
        if source and ((names.get(source) or {}).get("kind") != "effort_guidance" or "templates" not in names[source]):
            errors.append(err(f"templates_of names {source!r}, which is no effort_guidance handler of this profile "
                              "with templates of its own", "templates_of"))
        return errors

    @classmethod
    def acts_for(cls, agent, event, spec):
        """With `when: {after_compaction: true}`, only for an agent that sends
        no start after its compaction (at pre_compact: one that compacts
        beside the turn)."""
        when = (spec["when"] if "when" in spec else None) or {}
        if not when.get("after_compaction"):
            return True
        from ..cadence import acts_on_unannounced_compaction

        return acts_on_unannounced_compaction(agent, event)

    def due(self, ctx):
        if not self.template(ctx):
            return False
        if self.spec.when.get("after_compaction"):
            return self._due_after_compaction(ctx)
        sources = self.spec.when.get("source")
        return not sources or ctx.event.source in sources

    def _due_after_compaction(self, ctx):
        """`when: {after_compaction: true}`: only after a compaction of an
        agent that sends no start after it (this module's docstring)."""
        if ctx.name == "session_start" or ctx.event.subagent:
            return False
        if ctx.name == "pre_compact":
            from ..cadence import compacts_in_background

            if compacts_in_background(ctx.agent):
                _again(ctx, AHEAD)
            return False
        if ctx.name == "before_model":
            from ..cadence import compacted_before_this_request

            return compacted_before_this_request(ctx)
        return bool(ctx.snapshot().get(AGAIN))

    def _source(self):
        """(templates, model_advice) this handler gives."""
        if self.spec.templates_of:
            other = self.registry.specs[self.spec.templates_of]
            return other["templates"], other["model_advice"]
        return self.spec.templates, self.spec.model_advice

    def template(self, ctx):
        return self._source()[0][ctx.settings["effort"]]

    def parts(self, ctx):
        text = self._text(ctx)
        held = bool(text) and self._held(ctx, text)
        if self.spec.when.get("after_compaction"):
            # before_model gives to one request: the next event gives it for good; any other, for good now
            _again(ctx, AFTER if ctx.name == "before_model" and not held else "")
        return [Part(self.name, text)] if text and not held else []

    def _held(self, ctx, text):
        """Whether the model holds the policy already: a resumed run that
        keeps what the start added, or a turn a compaction kept."""
        if not self.spec.when.get("after_compaction"):
            return ctx.event.source == "resume" and _resume_keeps_the_start(ctx) and _in_view(ctx, text)
        if ctx.name == "before_model" or ctx.snapshot().get(AGAIN) == AFTER:
            return _in_view(ctx, text)
        return False

    def _text(self, ctx):
        from ..banner import render_cached

        # the agent's own word for its deepest reasoning, where it has one (its YAML)
        values = dict(effort=ctx.settings["effort"], source=ctx.event.source,
                      effort_keyword=ctx.agent.data.get("effort_keyword") or "")
        text = render_cached(self.template(ctx), ctx.settings["templates"], **values).strip("\n")
        advice = self._source()[1][ctx.settings["effort"]]
        if text and advice:
            advice = render_cached(advice, ctx.settings["templates"], **values).strip("\n")
            text = f"{text} {advice}" if advice else text
        return text


def _again(ctx, value):
    if ctx.state is not None:
        ctx.state.update({AGAIN: value})


def _resume_keeps_the_start(ctx):
    """Does a resumed run of this agent still hold what the session's start
    added (its YAML's `transcript.resumed`: session_start not named, kept
    once, as Codex CLI's and Claude Code's are)?"""
    from ..inview import resumed_copies

    return bool(resumed_copies(ctx.agent, "session_start"))


def _in_view(ctx, text):
    """Is the same guidance in the transcript since its latest compaction
    (a turn the compaction kept included: the reader gives its hook output
    before the compaction, newest first)?"""
    path = ctx.transcript()
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
