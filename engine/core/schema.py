"""Check a YAML document against the JSON Schema of its kind (schemas/)."""

import json
from functools import lru_cache

from engine.base.errors import suggest
from engine.base.paths import builtin_dir

KINDS = ("profile", "level", "protect", "dictionary", "golden", "meaning", "settings", "report", "messages", "detector",
         "message_cases", "content_cache", "pricing", "replay_report", "agent", "kind_cases")


def file(kind):
    """The path of the JSON Schema of a document kind (schemas/KIND.schema.json)."""
    return str(builtin_dir("schemas") / f"{kind}.schema.json")


@lru_cache(maxsize=None)
def document(kind):
    """The JSON Schema of a document kind, as data: read without jsonschema
    (a hook that fills its defaults in checks nothing)."""
    with open(file(kind), encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=None)
def _validator(kind):
    import jsonschema

    schema = document(kind)
    # The schemas ship with the engine and are checked against their
    # metaschema by the tests (test_validate.py), not on every run.
    return jsonschema.validators.validator_for(schema)(schema)


def _leaf_errors(error):
    """The errors worth showing for one schema error.

    For oneOf/anyOf, the branch meant is the one whose type and `kind` fit
    the instance (a mapping given where a list or a mapping is allowed is
    judged as the mapping form; a regex transform is judged as a regex
    transform); its own errors are then shown, recursively.
    """
    if error.validator not in ("oneOf", "anyOf") or not error.context:
        return [error]
    branches = {}
    for e in error.context:
        branches.setdefault(e.relative_schema_path[0], []).append(e)

    def misfit(errs):
        for e in errs:
            rel = list(e.relative_path)
            if not rel and e.validator == "type":
                return True
            if rel == ["kind"] and e.validator in ("const", "enum"):
                return True
        return False

    fitting = [errs for errs in branches.values() if not misfit(errs)]
    if not fitting:
        return [error]  # nothing fits: the instance has the wrong type altogether
    out = []
    for e in min(fitting, key=len):
        out.extend(_leaf_errors(e))
    return out


def _describe(doc, error):
    path = tuple(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(k for k in error.instance if k not in allowed)
        out = []
        for key in extra:
            hint = suggest(key, allowed) or (f"; allowed keys: {', '.join(sorted(allowed))}" if allowed else "")
            out.append(doc.error(f"unknown key {key!r}{hint}", path + (key,), key=True))
        return out
    if error.validator == "required":
        return [doc.error(error.message.replace("is a required property", "is required here; add it"), path)]
    if error.validator == "const" and path and path[-1] == "kind":
        return [doc.error(f"kind must be {error.validator_value!r} for this document", path)]
    if error.validator == "enum" and isinstance(error.instance, str):
        choices = [str(c) for c in error.validator_value]
        hint = suggest(error.instance, choices) or f"; use one of {', '.join(choices)}"
        where = "/".join(str(p) for p in path) or "document"
        return [doc.error(f"{where}: unknown value {error.instance!r}{hint}", path)]
    where = "/".join(str(p) for p in path) or "document"
    message = error.message
    unknown = _unknown_kind(doc, error, path)
    if unknown is not None:
        return [unknown]
    if error.validator in ("oneOf", "anyOf"):
        names = {"object": "mapping", "array": "list"}
        kinds = sorted({names.get(s.get("type"), s.get("type")) for s in error.validator_value if isinstance(s.get("type"), str)})
        message = f"{error.instance!r} has the wrong form" + (f"; expected a {' or a '.join(kinds)}" if kinds else "")
    return [doc.error(f"{where}: {message}", path)]


def _unknown_kind(doc, error, path):
    """A mapping whose `kind` none of the branches takes (a transform, a
    handler, a step: each branch is one kind): that kind named, with the
    known ones, instead of 'has the wrong form'; None otherwise."""
    if error.validator not in ("oneOf", "anyOf") or not isinstance(error.instance, dict):
        return None
    known = []
    for branch in error.validator_value:
        spec = branch.get("properties", {}).get("kind", {}) if isinstance(branch, dict) else {}
        if "const" not in spec and "enum" not in spec:
            return None  # a branch not told by its kind: the kind alone does not say which was meant
        known += [spec["const"]] if "const" in spec else list(spec["enum"])
    kind = error.instance.get("kind")
    if not isinstance(kind, str) or kind in known:
        return None
    hint = suggest(kind, known)
    where = "/".join(str(p) for p in path + ("kind",))
    return doc.error(f"{where}: unknown kind {kind!r}; the kinds here: {', '.join(sorted(known))}{hint}",
                     path + ("kind",))


def check(doc, kind=None):
    """Return a list of UserError for doc; empty when it is valid."""
    data = doc.data
    if not isinstance(data, dict):
        return [doc.error(f"expected a mapping with a 'kind:' key (one of {', '.join(KINDS)})")]
    if kind is None and "kind" not in data:
        return [doc.error(f"`kind:` is missing; add a first line saying what this file is: `kind: profile` "
                          f"(or {', '.join(KINDS[1:])})")]
    if kind is not None and data.get("kind", kind) != kind:
        # A document of another kind, named where this one goes (a profile as
        # --style): one line, not every key of this kind it lacks or has too many.
        return [doc.error(f"expected a {kind} document here, found kind {data['kind']!r}", ("kind",))]
    kind = kind or data.get("kind")
    if kind not in KINDS:
        return [doc.error(f"unknown kind {data.get('kind')!r}{suggest(data.get('kind'), KINDS)}; "
                          f"kind is one of {', '.join(KINDS)}", ("kind",))]
    errors = []
    for err in _validator(kind).iter_errors(data):
        for leaf in _leaf_errors(err):
            errors.extend(_describe(doc, leaf))
    errors.sort(key=lambda e: (e.line or 0, e.col or 0))
    return errors


def load_checked(path, builtin, kind, problems):
    """The `kind` document at `path` (said as the user wrote it), else the
    built-in file `builtin`: valid against its schema, then without
    `problems(doc)` (what the schema cannot say: patterns, templates);
    ValidationErrors, every one at its place, when it is not usable.  A
    pass of the built-in file is remembered while it and its schema stay
    as they are: it is checked once, not at every load."""
    from engine.base.errors import ValidationErrors, given

    from .yamlload import load_file

    if path is not None:
        given(path)
    doc = load_file(path or builtin)
    if path is None and _passed_before(kind, builtin):
        return doc
    errors = check(doc, kind) or problems(doc)
    if errors:
        raise ValidationErrors(errors)
    if path is None:
        _remember_passed(kind, builtin)
    return doc


def _passed_key(kind, builtin):
    return ("checked-builtin", kind, str(builtin))


def _passed_before(kind, builtin):
    """Whether the built-in `kind` document passed its checks as it is now,
    against its schema as it is now (remembered in the cache, with the
    engine's code in the key): the templates a session report style checks
    cost a hook's context monitor 0.1 s on each event that reads it."""
    from . import cache

    return cache.load_plain(_passed_key(kind, builtin)) == "ok"


def _remember_passed(kind, builtin):
    from . import cache

    sources = [str(builtin), file(kind)]
    cache.store_plain(_passed_key(kind, builtin), "ok", [(src, cache.file_digest(src)) for src in sources])


# Files of this process found valid, as read (see yamlload._PARSED).
_VALID: set = set()


def require_valid(doc, kind=None):
    key = (doc.source, kind) if doc.source else None
    if key in _VALID:
        return doc
    errors = check(doc, kind)
    if not errors and key:
        _VALID.add(key)
    if errors:
        from engine.base.errors import ValidationErrors

        raise ValidationErrors(errors)
    return doc
