"""subagent_effort: pre_tool on a subagent tool (`tools`: tool kinds, task;
the agent's YAML names its subagent tools and the input fields naming
their model and reasoning effort) asking, while the profile's effort is
one of `efforts`, for an expensive model (`expensive_models`) or for a
reasoning effort ranked above the profile's (`effort_order`, least to
most): a warning in the model's context, or with `action: ask` the agent
asks the user first (an ask decision, the warning as the reason); an
agent that takes no ask decision (Codex, Copilot) gets the warning."""

from .base import Handler, HandlerSpec
from .part import Part
from .samples import pick


class SubagentEffortSpec(HandlerSpec):
    tools: tuple[str, ...]
    expensive_models: tuple[str, ...]
    efforts: tuple[str, ...]
    effort_order: tuple[str, ...]
    action: str
    template: str


class SubagentEffort(Handler):
    Spec = SubagentEffortSpec
    settings = {"effort": ()}
    variables = {"template": {"effort", "model", "tool", "asked_effort", "expensive", "deeper"}}
    samples = pick("effort", "model", "tool", "asked_effort", "expensive", "deeper")

    def _asked(self, ctx, what):
        """The subagent's input field the agent's YAML names for `what` (model, effort), as text."""
        field = ctx.event.agent.tools("task").get(what)
        value = ctx.event.tool_input.get(field) if field else None
        return value if isinstance(value, str) else ""

    def model(self, ctx):
        return self._asked(ctx, "model")

    def expensive(self, ctx):
        model = self.model(ctx).lower()
        return bool(model) and any(m.lower() in model for m in self.spec.expensive_models)

    def deeper(self, ctx):
        """Whether the subagent asks for more reasoning than the profile's effort."""
        order = [e.lower() for e in self.spec.effort_order or ()]
        asked, policy = self._asked(ctx, "effort").lower(), ctx.settings["effort"]
        return asked in order and policy in order and order.index(asked) > order.index(policy)

    def due(self, ctx):
        if ctx.event.tool_kind not in self.spec.tools or ctx.settings["effort"] not in self.spec.efforts:
            return False
        return self.expensive(ctx) or self.deeper(ctx)

    def parts(self, ctx):
        from ..banner import render_cached

        text = render_cached(self.spec.template, ctx.settings["templates"], effort=ctx.settings["effort"],
                             model=self.model(ctx), tool=ctx.event.tool, asked_effort=self._asked(ctx, "effort"),
                             expensive=self.expensive(ctx), deeper=self.deeper(ctx)).strip("\n")
        if not text:
            return []
        if self.spec.action == "ask" and ctx.event.agent.takes_decision("ask"):
            return [Part(self.name, tool_decision={"decision": "ask", "reason": text})]
        return [Part(self.name, text)]
