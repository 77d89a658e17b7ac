"""Handler kinds: the small registry the profile's `hooks.events` composes.

One module per kind; this file only maps a YAML `kind:` to its class, and
imports a kind's module when a profile uses it, so an event's hot path
loads only the kinds it runs.  A handler has `due(ctx)` (cheap, imports
nothing heavy) and `parts(ctx)`: the Part objects (part.py) the dispatcher
merges into the event's answer.
"""

from .context import Context
from .part import Part

# kind -> (module, class)
KINDS = {
    "rule_refresh": ("refresh", "Refresh"),
    "file_refresh": ("refresh", "Refresh"),
    "reinject": ("reinject", "Reinject"),
    "clear_state": ("clear_state", "ClearState"),
    "ccm_intercept": ("ccm_intercept", "CcmIntercept"),
    "ccm_learn": ("ccm_learn", "CcmLearn"),
    "ccm_pin": ("ccm_pin", "CcmPin"),
    "tool_memory_record": ("tool_memory_record", "ToolMemoryRecord"),
    "tool_memory_scan": ("tool_memory_scan", "ToolMemoryScan"),
    "tool_memory_banner": ("tool_memory_banner", "ToolMemoryBanner"),
    "output_tally": ("output_tally", "OutputTally"),
    "context_audit": ("context_audit", "ContextAudit"),
    "context_monitor": ("context_monitor", "ContextMonitor"),
    "effort_guidance": ("effort_guidance", "EffortGuidance"),
    "subagent_effort": ("subagent_effort", "SubagentEffort"),
    "compact_instructions": ("compact_instructions", "CompactInstructions"),
}


def kind_class(kind):
    module, cls = KINDS[kind]
    # __import__ rather than importlib: the importlib package is one more
    # import on every event's path.
    return getattr(__import__(f"{__name__}.{module}", fromlist=[cls]), cls)


def build(hooks):
    """All handlers by name, and the ordered handler list per event."""
    registry, by_event = {}, {}
    for event, specs in hooks.get("events", {}).items():
        for spec in specs:
            if spec.get("enabled", True) is False:
                continue
            h = kind_class(spec["kind"])(spec, hooks, registry)
            registry[spec["name"]] = h
            by_event.setdefault(event, []).append(h)
    return registry, by_event


__all__ = ["Context", "Part", "KINDS", "build", "kind_class"]
