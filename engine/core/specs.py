"""Typed, frozen specs of the compile-time kinds, built once from their schema.

A transform, a message step and a detector each read their parameters from
a spec: a frozen dataclass whose fields are the properties the schema gives
that kind (the branch of the `oneOf`, the `then` of the `if`, that the
document takes), filled with the schema's defaults (engine/core/defaults.py)
and built when the profile or pipeline compiles.  No kind declares its
fields again: `build` makes the class from the schema (one per kind, kept
for the process).  A property the document leaves out and whose schema has
no default is None.  Lists become tuples, a mapping with declared
properties becomes a nested spec, any other mapping stays a dict.

A spec pickles as its class name, its field names and its values, so a
compiled object that keeps one survives the compiled-profile cache
(engine/core/cache.py) without its class being importable by name.
"""

from dataclasses import fields, make_dataclass

from . import defaults

_CLASSES: dict = {}
_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "array": tuple, "object": dict}


def build(kind, pointer, data):
    """The frozen spec of `data`: a valid mapping found at `pointer` in a
    document of `kind` (schemas/KIND.schema.json), its defaults filled in."""
    root = defaults.schema(kind)
    node = defaults.at(root, pointer)
    return make(node, defaults.fill(node, data, root), root)


def make(node, value, root, name=None):
    """The spec of an already filled mapping `value` described by `node`."""
    props = defaults.properties(node, value, root)
    names = tuple(k for k in dict.fromkeys([*props, *value]) if k.isidentifier())
    label = name or _label(value)
    cls = spec_class(label, names, {k: _type(props.get(k, {})) for k in names})
    return cls(*(_convert(props.get(k, {}), value.get(k), root, _nested(label, k)) for k in names))


def _label(value):
    kind = value.get("detector") or value.get("kind")  # a detector document is of kind `detector`
    return f"{str(kind).title().replace('_', '')}Spec" if isinstance(kind, str) else "Spec"


def _closed(node):
    return bool(node.get("properties")) and not isinstance(node.get("additionalProperties"), dict)


def _type(node):
    kind = node.get("type")
    if isinstance(kind, str) and kind in _TYPES:
        return object if kind == "object" and _closed(node) else _TYPES[kind]
    return object


def _convert(node, value, root, name):
    if isinstance(value, dict) and _closed(defaults.resolve(node, root)):
        return make(node, value, root, name)
    if isinstance(value, list):
        items = defaults.resolve(node.get("items") or {}, root)
        return tuple(make(items, v, root, name) if isinstance(v, dict) and _closed(items) else v for v in value)
    return value


def _nested(label, key):
    """The class name of a nested spec: WordsSpec's `rules` -> WordsRulesSpec."""
    return label[: -len("Spec")] + "".join(p.title() for p in key.split("_")) + "Spec"


def spec_class(name, names, types=None):
    """The frozen dataclass `name` with these fields (one per name and fields)."""
    key = (name, names)
    cls = _CLASSES.get(key)
    if cls is None:
        cls = _CLASSES[key] = make_dataclass(name, [(n, (types or {}).get(n, object)) for n in names], frozen=True,
                                             namespace={"__reduce__": _reduce})
        cls.__module__ = __name__
    return cls


def _reduce(spec):
    return _restore, (type(spec).__name__, tuple(f.name for f in fields(spec)), tuple(getattr(spec, f.name) for f in fields(spec)))


def _restore(name, names, values):
    return spec_class(name, names)(*values)
