"""What a handler kind declares once, and the checks that follow from it.

A kind (one module of this package, named in KINDS of __init__.py) is a
subclass of Handler.  Its class attributes say:

- `events`: the neutral events it may sit on (engine/agents/spec.py);
- `answers`: for a kind whose only effect is an answer, the kinds of agent
  answer (keys of an agent YAML's `answers`) that answer goes through: at
  an event where the agent takes none of them, the dispatcher does not run
  it (its work would be dropped); empty for a kind that always runs;
- `settings`: the hooks settings groups it reads, each with the keys the
  group must hold after extends (hooks.memory ...);
- `variables`: each template key it renders (dotted: `templates.low`) and
  the variables that template may use;
- `samples`: a sample value of each of those variables, for the trial
  render `engine validate` makes;
- `Spec`: the type of its spec, a frozen record (engine/base/record.py)
  whose annotations name the handler keys it reads (properties of
  `$defs/handler` in schemas/profile.schema.json).  The profile's compile
  step fills in the schema's defaults (engine/hooks/compiled.py), so a
  field is what the profile says or the schema's default, None where the
  schema has none; no kind names a default of its own.

`engine validate` (hooks/check.py) loops over the profile's handlers and
asks each kind's `check`: the declared part here, a kind's own checks in
its override.  This module is on every event's path: it imports only the
agent seam's declarations and the record type.
"""

from engine.agents.spec import NEUTRAL_EVENTS
from engine.base.record import Record


class HandlerSpec(Record):
    """What every handler's spec holds."""

    name: str
    kind: str
    enabled: bool


class Handler:
    """A handler kind: a handler is built per event from its profile spec;
    `due(ctx)` is cheap, `parts(ctx)` gives the Part objects (part.py) the
    dispatcher merges into the event's answer."""

    events: tuple[str, ...] = NEUTRAL_EVENTS
    answers: tuple[str, ...] = ()
    settings: dict[str, tuple[str, ...]] = {}
    variables: dict[str, set[str]] = {}
    samples: dict[str, object] = {}
    Spec: type[HandlerSpec] = HandlerSpec

    def __init__(self, spec, settings, registry):
        self.spec = self.Spec(spec)
        self.name = self.spec.name
        self.hooks = settings
        self.registry = registry

    @classmethod
    def compile_spec(cls, spec, handler_schema):
        """The handler's spec as the hook reads it, made when the profile
        compiles from the spec with its defaults filled in (plain data: the
        hooks settings are cached as JSON).  `handler_schema(key)` is the
        schema of a handler key.  A kind whose field needs working out
        once overrides this."""
        return spec

    @classmethod
    def acts_for(cls, agent, event, spec):
        """Can a handler of this kind (its profile `spec`, a dict) do
        anything at `event` for `agent`?  One that cannot is not run there
        (dispatch), and install writes no hook for an event where no handler
        can (an entry to trust and a process for nothing).  By default: its
        kind's `answers`, where it declares any, are taken there."""
        return not cls.answers or any(agent.answers_at(what, event) for what in cls.answers)

    def due(self, ctx):
        return True

    def parts(self, ctx):
        return []

    @classmethod
    def check(cls, resolved, h, names, err):
        """Problems of one handler `h` of this kind in the resolved profile:
        `err(message, *path)` makes an error pointing at the handler (or at
        one of its keys); `names` maps every handler name to its spec."""
        return check_declared(cls, resolved.hooks, h, err)


def check_declared(cls, hooks, h, err):
    """The settings groups a kind reads are there with their keys, and its
    templates parse, use only its variables and render with its samples."""
    errors = []
    for group, keys in cls.settings.items():
        if group not in hooks:
            errors.append(err(f"kind {h['kind']} reads hooks.{group}; set it here or extend a profile that does"))
            continue
        missing = [k for k in keys if k not in hooks[group]]
        if missing:
            errors.append(err(f"hooks.{group} lacks {', '.join(missing)}"))
    from ..banner import check, trial

    for key, allowed in cls.variables.items():
        source = _get(h, key)
        if not isinstance(source, str):
            continue
        problems = check(source, allowed)
        if not problems and "templates" in hooks:
            failed = trial(source, hooks, **{k: cls.samples[k] for k in allowed})
            problems = [(1, failed)] if failed else []
        for line, msg in problems:
            errors.append(err(f"{key} (line {line} of the template): {msg}", *key.split(".")))
    return errors


def _get(h, key):
    node = h
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node
