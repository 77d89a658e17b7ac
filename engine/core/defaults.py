"""The defaults of a validated document, filled in from its JSON Schema.

A default is declared once: as `default:` on the key's node in schemas/
(or as a value of the built-in YAML, for settings merged through
`extends`).  jsonschema checks documents but fills nothing in; `fill` walks
the schema beside a valid document and puts each absent key's `default`
in, at every depth: in the mapping's own `properties`, in the branch of a
`oneOf`/`anyOf` the document takes (a transform of kind `words` gets the
defaults of the `words` branch), in `allOf` parts and in the `then` of an
`if` that holds.  It runs at compile time, once: what a kind reads at run
time is then complete, and no Python code names a default of its own
(tests/test_specs.py).

Only local references (`#/$defs/...`) are followed; the branch a document
takes is found by `fits`, a structural check (type, const, enum, required,
closed mappings) enough to tell apart the branches of a valid document.
"""

import copy


def schema(kind):
    """The JSON Schema of a document kind (schemas/KIND.schema.json), as data."""
    from .schema import document

    return document(kind)


def at(root, pointer):
    """The node of `root` at a JSON pointer ("" or "/properties/hooks")."""
    node = root
    for part in [p for p in pointer.split("/") if p]:
        node = node[int(part)] if isinstance(node, list) else node[part.replace("~1", "/").replace("~0", "~")]
    return node


def resolve(node, root):
    """A node with a local `$ref` replaced by what it names (its own keys win)."""
    if not isinstance(node, dict):
        return {}
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#"):
        return node
    return {**resolve(at(root, ref[1:]), root), **{k: v for k, v in node.items() if k != "$ref"}}


def filled(kind, document):
    """A copy of a valid `kind` document with its schema's defaults filled in
    (a user's settings or style file written before a key was added)."""
    return fill(schema(kind), document)


def fill(node, instance, root=None):
    """A copy of `instance` (valid against `node`) with every absent key that
    has a `default` set to it; `instance` itself is left as it is."""
    root = node if root is None else root
    out = copy.deepcopy(instance)
    _fill(node, out, root)
    return out


def _fill(node, value, root):
    for part in parts(node, value, root):
        if isinstance(value, dict):
            props = part.get("properties") or {}
            for key, child in props.items():
                child = resolve(child, root)
                if key not in value and "default" in child:
                    value[key] = copy.deepcopy(child["default"])
                if key in value:
                    _fill(child, value[key], root)
            extra = part.get("additionalProperties")
            if isinstance(extra, dict):
                for key in value:
                    if key not in props:
                        _fill(extra, value[key], root)
        elif isinstance(value, list) and isinstance(part.get("items"), dict):
            for item in value:
                _fill(part["items"], item, root)


def parts(node, value, root):
    """The schema nodes that describe `value` together: the node, its allOf
    parts, the oneOf/anyOf branch it takes, the `then` (or `else`) of its `if`."""
    node = resolve(node, root)
    out = [node]
    for sub in node.get("allOf", ()):
        out.extend(parts(sub, value, root))
    for key in ("oneOf", "anyOf"):
        branch = next((b for b in node.get(key, ()) if fits(b, value, root)), None)
        if branch is not None:
            out.extend(parts(branch, value, root))
    if "if" in node:
        then = node.get("then") if fits(node["if"], value, root) else node.get("else")
        if then is not None:
            out.extend(parts(then, value, root))
    return out


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is(value, kind):
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES.get(kind, object))


def fits(node, value, root):
    """True when `value` takes this branch (the checks that tell branches
    apart; a valid document needs no more)."""
    node = resolve(node, root)
    kind = node.get("type")
    if kind is not None and not any(_is(value, k) for k in (kind if isinstance(kind, list) else [kind])):
        return False
    if "const" in node and value != node["const"]:
        return False
    if "enum" in node and value not in node["enum"]:
        return False
    if isinstance(value, dict):
        props = node.get("properties") or {}
        if any(k not in value for k in node.get("required", ())):
            return False
        if node.get("additionalProperties") is False and any(k not in props for k in value):
            return False
        if any(k in value and not fits(child, value[k], root) for k, child in props.items()):
            return False
    if not all(fits(sub, value, root) for sub in node.get("allOf", ())):
        return False
    for key in ("oneOf", "anyOf"):
        if key in node and not any(fits(b, value, root) for b in node[key]):
            return False
    return True


def properties(node, value, root):
    """Every key the schema describes for `value` (a mapping), with the node
    that says the most about it: a later part (a branch, a `then`) refines
    an earlier one."""
    out = {}
    for part in parts(node, value, root):
        for key, child in (part.get("properties") or {}).items():
            out[key] = {**out.get(key, {}), **resolve(child, root)}
    return out


def defaults(node, root=None):
    """(dotted key path, default) of every `default` under node, for the checks
    that compare the schemas with what compiled documents hold."""
    root = node if root is None else root
    out = []

    def walk(n, path):
        if path.count(".") > 32:  # a schema that refers to itself: far enough
            return
        n = resolve(n, root)
        for key, child in (n.get("properties") or {}).items():
            child = resolve(child, root)
            if "default" in child:
                out.append((f"{path}{key}", child["default"]))
            walk(child, f"{path}{key}.")
        for key in ("allOf", "oneOf", "anyOf"):
            for sub in n.get(key, ()):
                walk(sub, path)
        for key in ("then", "else"):
            if key in n:
                walk(n[key], path)
        if isinstance(n.get("items"), dict):
            walk(n["items"], f"{path}[].")
        if isinstance(n.get("additionalProperties"), dict):
            walk(n["additionalProperties"], f"{path}*.")

    walk(node, "")
    return out
