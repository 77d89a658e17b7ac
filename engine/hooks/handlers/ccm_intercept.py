"""ccm_intercept (PreToolUse): large Bash output through the content cache,
too-large whole-file Reads denied with a note (engine/ccm/intercept.py says
the mechanism and why).  Settings: pipelines/settings/content_cache.yaml."""

from .part import Part


class CcmIntercept:
    def __init__(self, spec, settings, registry):
        self.name = spec["name"]
        import sys

        if "yaml" in sys.modules:
            # This process has just compiled the profile (it read YAML): cache
            # the content-cache settings now too, so a tool event never reads YAML.
            from ...ccm import config

            try:
                config.load()
            except Exception:  # noqa: BLE001 - said by the event that needs them
                pass

    def due(self, ctx):
        return ctx.event.get("tool_name") in ("Bash", "Read") and not ctx.event.get("agent_id")

    def parts(self, ctx):
        from ...ccm import config
        from ...ccm.intercept import decide

        decision = decide(ctx.event, config.load())
        return [Part(self.name, tool_decision=decision)] if decision else []
