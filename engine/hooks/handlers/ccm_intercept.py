"""ccm_intercept (pre_tool): large shell output through the content cache
for agents that cannot replace it after the call (ccm_output does there),
too-large whole-file reads denied with a note (engine/ccm/intercept.py says
the mechanism and why).  Settings: pipelines/settings/content_cache.yaml."""

from .base import Handler
from .part import Part


class CcmIntercept(Handler):
    events = ("pre_tool",)

    def __init__(self, spec, settings, registry):
        from . import events_of

        self.spec = self.Spec(spec)
        self.name = self.spec.name
        # With a ccm_output handler after tool calls, a shell output is
        # replaced after it ran wherever the agent takes that answer: no rewrite then.
        self.post_replaces = any(h.get("kind") == "ccm_output" and h["enabled"] is not False
                                 for h in events_of(settings).get("post_tool", ()))
        import sys

        if "yaml" in sys.modules:
            # This process has just compiled the profile (it read YAML): cache
            # the content-cache settings now too, so a tool event never reads YAML.
            from engine.ccm import config

            try:
                config.load()
            except Exception:  # noqa: BLE001 - said by the event that needs them
                pass

    def due(self, ctx):
        return ctx.event.tool_kind in ("shell", "read") and not ctx.event.subagent

    def parts(self, ctx):
        from engine.ccm import config
        from engine.ccm.intercept import decide

        decision = decide(ctx.event, config.load(), self.post_replaces, ctx.log)
        return [Part(self.name, tool_decision=decision)] if decision else []
