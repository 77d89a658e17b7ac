"""Handler kinds: the small registry the profile's `hooks.events` composes.

One module per kind, its class a subclass of base.Handler that declares
the events it takes, the settings it reads, its template variables with
their samples, and its checks; this file only maps a YAML `kind:` to its
class, and imports a kind's module when a profile uses it, so an event's hot
path loads only the kinds it runs.  A handler has `due(ctx)` (cheap, imports
nothing heavy) and `parts(ctx)`: the Part objects (part.py) the dispatcher
merges into the event's answer.  A new kind: its module (with its Spec: the
handler keys it reads), its line in KINDS, its branch in
schemas/profile.schema.json (a key's default there, nowhere else) and a
fixture (tests/kinds/).
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
    "ccm_output": ("ccm_output", "CcmOutput"),
    "ccm_pin": ("ccm_pin", "CcmPin"),
    "tool_memory_record": ("tool_memory_record", "ToolMemoryRecord"),
    "tool_memory_scan": ("tool_memory_scan", "ToolMemoryScan"),
    "tool_memory_banner": ("tool_memory_banner", "ToolMemoryBanner"),
    "context_monitor": ("context_monitor", "ContextMonitor"),
    "effort_guidance": ("effort_guidance", "EffortGuidance"),
    "subagent_effort": ("subagent_effort", "SubagentEffort"),
    "compact_instructions": ("compact_instructions", "CompactInstructions"),
    "growth_refresh": ("growth", "GrowthRefresh"),
    "scoped_on_write": ("scoped_write", "ScopedOnWrite"),
}


def kind_class(kind):
    module, cls = KINDS[kind]
    # __import__ rather than importlib: the importlib package is one more
    # import on every event's path.
    return getattr(__import__(f"{__name__}.{module}", fromlist=[cls]), cls)


def events_of(hooks):
    """The profile's handler lists by neutral event name, in the profile's
    order: a profile may name an event in the engine's words (prompt,
    post_tool ...) or as Claude Code names it (UserPromptSubmit,
    PostToolUse ...); both lists of one event are joined, in order."""
    from engine.agents.table import neutral_name

    out = {}
    for key, specs in hooks["events"].items():
        name = neutral_name(key)
        if name is not None:
            out.setdefault(name, []).extend(specs)
    return out


class _Registry(dict):
    """Handlers by name, each built the first time it is asked for: an
    event builds its own handlers (and the ones a reinject names), not the
    whole profile's, so it imports only their modules."""

    def __init__(self, hooks):
        super().__init__()
        self.hooks = hooks
        self.specs = {}
        for specs in events_of(hooks).values():
            for spec in specs:
                if spec["enabled"] is not False:
                    self.specs[spec["name"]] = spec

    def __missing__(self, name):
        spec = self.specs[name]  # KeyError for a name no handler has, as before
        h = self[name] = kind_class(spec["kind"])(spec, self.hooks, self)
        return h

    def build_all(self):
        for name in self.specs:
            self[name]
        return self


class _ByEvent(dict):
    """The ordered handler list of each event, built when first asked for."""

    def __init__(self, hooks, registry):
        super().__init__()
        self.events = {event: [s["name"] for s in specs if s["enabled"] is not False]
                       for event, specs in events_of(hooks).items()}
        self.registry = registry

    def __missing__(self, event):
        names = self.events[event]
        handlers = self[event] = [self.registry[n] for n in names]
        return handlers

    def get(self, event, default=None):
        return self[event] if event in self.events else default


def build(hooks, event=None):
    """All handlers by name, and the ordered handler list per event.  With
    `event`, only what that event runs is built (the hook's path); without,
    everything (preview, validation)."""
    registry = _Registry(hooks)
    by_event = _ByEvent(hooks, registry)
    if event is None:
        registry.build_all()
        for e in by_event.events:
            by_event[e]
    return registry, by_event


__all__ = ["Context", "Part", "KINDS", "build", "events_of", "kind_class"]
