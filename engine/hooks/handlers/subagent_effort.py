"""subagent_effort: PreToolUse on the subagent tool (`tools`: Task, Agent)
asking for an expensive model (`expensive_models`, matched in the input's
`model`) while the profile's effort is one of `efforts`: a warning in the
model's context, or with `action: ask` the agent asks the user first
(permissionDecision ask, the warning as the reason)."""

from .part import Part


class SubagentEffort:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]

    def model(self, ctx):
        tool_input = ctx.event.get("tool_input")
        model = tool_input.get("model") if isinstance(tool_input, dict) else None
        return model if isinstance(model, str) else ""

    def due(self, ctx):
        if ctx.event.get("tool_name") not in self.spec["tools"] or ctx.settings["effort"] not in self.spec["efforts"]:
            return False
        model = self.model(ctx).lower()
        return any(m.lower() in model for m in self.spec["expensive_models"])

    def parts(self, ctx):
        from ..banner import render_cached

        text = render_cached(self.spec["template"], ctx.settings["templates"], effort=ctx.settings["effort"],
                             model=self.model(ctx), tool=ctx.event.get("tool_name")).strip("\n")
        if not text:
            return []
        if self.spec["action"] == "ask":
            return [Part(self.name, tool_decision={"permissionDecision": "ask", "permissionDecisionReason": text})]
        return [Part(self.name, text)]
