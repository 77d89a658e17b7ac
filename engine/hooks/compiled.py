"""The hooks settings as a hook reads them, made once when the profile
compiles (registered in engine/core/checks.py COMPILERS).

From the resolved profile's `hooks` (extends merged, the trust boundary
applied): every default of schemas/profile.schema.json filled in
(engine/core/defaults.py), in the settings and in each handler, there for
the keys its kind reads (its Spec: handlers/base.py), each handler's spec
as its kind wants it (Handler.compile_spec), and the profile's name
in `source_line` (the event and the handler are filled in per injection,
engine/hooks/source.py).  The result is plain data, cached as JSON beside
the compiled profile (engine/core/profile.py): a hook builds each
handler's frozen spec from it (handlers/base.py) without a default of its
own to look up.
"""

from engine.core.defaults import fill, resolve, schema


def with_defaults(spec):
    """One handler's spec with the schema's defaults filled in (the checks of
    engine validate read handlers as the hook will)."""
    root = schema("profile")
    return fill(root["$defs"]["handler"], spec, root)


def compile_hooks(resolved):
    return compiled(resolved.hooks, resolved.name)


def compiled(given, profile_name):
    """`given` (a profile's resolved hooks settings) as the hook reads them."""
    root = schema("profile")
    hooks = fill(root["properties"]["hooks"], given, root)
    handler = root["$defs"]["handler"]["properties"]

    def handler_schema(key):
        return resolve(handler[key], root)

    from .handlers import KINDS, kind_class
    from .handlers.base import Handler

    for event, specs in hooks["events"].items():
        for i, (spec, own) in enumerate(zip(specs, given["events"][event])):
            # a handler switched off may be left incomplete: no kind of its own
            cls = kind_class(spec["kind"]) if spec.get("kind") in KINDS else Handler
            # what the profile says, and the defaults of the keys its kind reads (its Spec)
            spec = {k: v for k, v in spec.items() if k in own or k in cls.Spec.FIELDS}
            specs[i] = cls.compile_spec(spec, handler_schema)
    if hooks["source_line"]:
        hooks["source_line"] = hooks["source_line"].replace("{profile}", profile_name)
    memory = hooks.get("memory")
    if isinstance(memory, dict) and "error_patterns" in memory:  # what a line must hold to match one: no re on a quiet call
        from engine.base.regexlit import required_literals

        memory["error_literals"] = required_literals(memory["error_patterns"])
    return hooks
