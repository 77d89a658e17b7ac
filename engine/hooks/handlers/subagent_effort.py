"""subagent_effort: pre_tool on a subagent tool (`tools`: tool kinds, task;
the agent's YAML names its subagent tools and the input field naming their
model) asking for an expensive model (`expensive_models`) while the
profile's effort is one of `efforts`: a warning in the model's context, or
with `action: ask` the agent asks the user first (an ask decision, the
warning as the reason); an agent that takes no ask decision (Codex,
Copilot) gets the warning."""

from .base import Handler, HandlerSpec
from .part import Part
from .samples import pick


class SubagentEffortSpec(HandlerSpec):
    tools: tuple[str, ...]
    expensive_models: tuple[str, ...]
    efforts: tuple[str, ...]
    action: str
    template: str


class SubagentEffort(Handler):
    Spec = SubagentEffortSpec
    settings = {"effort": ()}
    variables = {"template": {"effort", "model", "tool"}}
    samples = pick("effort", "model", "tool")

    def model(self, ctx):
        field = ctx.event.agent.tools("task").get("model")
        model = ctx.event.tool_input.get(field) if field else None
        return model if isinstance(model, str) else ""

    def due(self, ctx):
        if ctx.event.tool_kind not in self.spec.tools or ctx.settings["effort"] not in self.spec.efforts:
            return False
        model = self.model(ctx).lower()
        return any(m.lower() in model for m in self.spec.expensive_models)

    def parts(self, ctx):
        from ..banner import render_cached

        text = render_cached(self.spec.template, ctx.settings["templates"], effort=ctx.settings["effort"],
                             model=self.model(ctx), tool=ctx.event.tool).strip("\n")
        if not text:
            return []
        if self.spec.action == "ask" and ctx.event.agent.takes_decision("ask"):
            return [Part(self.name, tool_decision={"decision": "ask", "reason": text})]
        return [Part(self.name, text)]
