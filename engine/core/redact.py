"""The one redactor: what the engine writes never holds a secret.

Built from protect categories (by default `secrets`, protect/secrets.yaml:
gitleaks' rule set and the engine's own rules, engine/text/secretrules.py),
it answers two questions for every writer of the engine: does this text
hold a secret (`found_in`: the content cache then keeps nothing), and what
is it with each secret replaced (`redact`: tool memory, cache metadata, hook
log, session report).  A finding's secret is replaced (the group named
`secret` when its rule has one), so `DB_PASSWORD=[REDACTED]` and
`postgres://app:[REDACTED]@db` stay readable.  A category's plain
`patterns` count as rules without keywords.

The categories are read from the built-in protect folder only: a project
cannot weaken what is redacted.  What the rules need of them (no
description, no example, the schema's defaults filled in) is kept as
plain JSON in the engine's cache (checked against the digests of the YAML
files and of their schema), so a hook that records a failure reads no
YAML; a rule's pattern is compiled only when a text holds one of its
keywords.  bench/redact_speed.py measures it on 10 MB.
"""

import os

DEFAULT_CATEGORY = "secrets"
_MEMO: dict = {}


class RedactError(Exception):
    """No pattern to redact with: the caller writes nothing rather than risk a secret."""


def _protect_file(category):
    from engine.base.paths import builtin_root_str

    # a category is a name (protect.schema.json), never a path out of the folder
    if not category or not all(c.isascii() and (c.isalnum() or c in "_-") for c in category):
        raise RedactError(f"{category!r} is not a protect category name; nothing is written")
    return os.path.join(builtin_root_str(), "protect", f"{category}.yaml")


def sources(categories):
    """{rules, allow, replacement} of these built-in protect categories; the
    replacement is the first one a category names."""
    from . import cache

    key = ("redact-rules", *categories)
    value = cache.load_plain(key)
    if value is None:
        value, files = _load(categories)
        cache.store_plain(key, value, [(f, cache.file_digest(f)) for f in files])  # never raises (atomic_write)
    return value


def _load(categories):
    """The built-in files as they are (`engine validate` and the test suite
    check them against the schema; a log line should not import jsonschema),
    their rules and allow-lists filled with the schema's defaults: the
    schema is a source of the cached copy too."""
    from engine.base.textio import read_text

    from . import protectsource
    from .schema import file
    from .yamlload import load_text

    rules, allow, replacement, files = [], [], None, [file("protect")]
    for category in categories:
        path = _protect_file(category)
        files.append(path)
        data = load_text(read_text(path), path, builtin=True).data
        ignorecase = not data.get("case_sensitive", False)
        rules.extend(protectsource.rule({"id": f"{category}[{i}]", "pattern": p, "ignorecase": ignorecase})
                     for i, p in enumerate(data.get("patterns") or ()))
        rules.extend(protectsource.rule(r) for r in data.get("rules") or ())
        allow.extend(protectsource.allow_list(a) for a in data.get("allow") or ())
        if replacement is None and isinstance(data.get("redaction"), str):
            replacement = data["redaction"]
    return {"rules": rules, "allow": allow, "replacement": replacement}, files


class Redactor:
    def __init__(self, rules, replacement, allow=()):
        """`rules`: rule specs (engine/text/secretrules.py); `allow`: the allow-lists of them all."""
        from engine.text.secretrules import RuleSet

        if not rules:
            raise RedactError("no secret pattern to redact with; nothing is written")
        self.replacement = replacement
        self._rules = RuleSet(rules, allow)

    def found_in(self, text):
        """True when text (str, or bytes read as UTF-8) holds a secret."""
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", "surrogateescape")
        return next(self._rules.findings(text), None) is not None

    def spans(self, text):
        """The secrets' spans, sorted, overlapping ones merged."""
        found = sorted((s, e) for _, _, s, e, _ in self._rules.findings(text))
        merged = []
        for s, e in found:
            if merged and s <= merged[-1][1]:
                if e > merged[-1][1]:
                    merged[-1] = (merged[-1][0], e)
            else:
                merged.append((s, e))
        return merged

    def redact(self, text):
        if not text:
            return text
        spans = self.spans(text)
        if not spans:
            return text
        out, pos = [], 0
        for s, e in spans:
            out.append(text[pos:s])
            out.append(self.replacement)
            pos = e
        out.append(text[pos:])
        return "".join(out)

    __call__ = redact


def redactor(categories=(DEFAULT_CATEGORY,), replacement=None):
    """The Redactor of these built-in categories (one per process), replacing
    with `replacement`, else the category's own `redaction`."""
    categories = tuple(categories)
    key = (categories, replacement)
    r = _MEMO.get(key)
    if r is None:
        value = sources(categories)
        if replacement is None:
            replacement = value["replacement"]
        if replacement is None:
            raise RedactError(f"protect categories {', '.join(categories)} name no `redaction`; nothing is written")
        r = _MEMO[key] = Redactor(value["rules"], replacement, value["allow"])
    return r


def redact(text):
    """`text` with the default category's matches replaced (logs, reports)."""
    return redactor().redact(text)
