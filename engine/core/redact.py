"""The one redactor: what the engine writes never holds a secret.

Built from protect categories (by default `secrets`, protect/secrets.yaml),
it answers two questions for every writer of the engine: does this text hold
a secret (`found_in`: the content cache then keeps nothing), and what is it
with each secret replaced (`redact`: tool memory, cache metadata, hook log,
session report).  A match is replaced whole, or only its group named
`secret` when the pattern has one, so `DB_PASSWORD=[REDACTED]` and
`postgres://app:[REDACTED]@db` stay readable.

The categories are read from the built-in protect folder only: a project
cannot weaken what is redacted.  Their pattern sources are kept as plain
JSON in the engine's cache (checked against the YAML files' digests), so a
hook that records a failure reads no YAML.  Patterns run with the `regex`
module, the engine the protect mask uses: it finds a pattern's literal
(`AKIA`, `ghp_`) fast even behind an opening look-behind, so each pattern is
one pass and no pattern is rewritten for speed.  One alternation of all
patterns would lose that literal search (ten times slower).  10 MB take
about 0.35 s on a quiet 2-core machine (`bench/redact_speed.py`).
"""

import os

DEFAULT_CATEGORY = "secrets"
_MEMO = {}


class RedactError(Exception):
    """No pattern to redact with: the caller writes nothing rather than risk a secret."""


def _protect_file(category):
    from engine.base.paths import builtin_root_str

    # a category is a name (protect.schema.json), never a path out of the folder
    if not category or not all(c.isascii() and (c.isalnum() or c in "_-") for c in category):
        raise RedactError(f"{category!r} is not a protect category name; nothing is written")
    return os.path.join(builtin_root_str(), "protect", f"{category}.yaml")


def sources(categories):
    """[[pattern, ignorecase], ...] and the replacement named by the first
    category that names one, for these built-in protect categories."""
    from . import cache

    key = ("redact", *categories)
    value = cache.load_plain(key)
    if value is None:
        value, files = _load(categories)
        cache.store_plain(key, value, [(f, cache.file_digest(f)) for f in files])  # never raises (atomic_write)
    return value


def _load(categories):
    """The built-in files as they are (`engine validate` and the test suite
    check them against the schema; a log line should not import jsonschema)."""
    from engine.base.textio import read_text
    from .yamlload import load_text

    patterns, replacement, files = [], None, []
    for category in categories:
        path = _protect_file(category)
        files.append(path)
        doc = load_text(read_text(path), path)
        ignorecase = not doc.data.get("case_sensitive", False)
        patterns.extend([p, ignorecase] for p in doc.data.get("patterns") or ())
        if replacement is None and isinstance(doc.data.get("redaction"), str):
            replacement = doc.data["redaction"]
    return {"patterns": patterns, "replacement": replacement}, files


class Redactor:
    def __init__(self, patterns, replacement):
        """`patterns`: [[source, ignorecase], ...]."""
        import regex

        if not patterns:
            raise RedactError("no secret pattern to redact with; nothing is written")
        self.replacement = replacement
        self._patterns = []
        for source, ignorecase in patterns:
            compiled = regex.compile(source, regex.V0 | (regex.IGNORECASE if ignorecase else 0))
            self._patterns.append((compiled, "secret" in compiled.groupindex))

    def found_in(self, text):
        """True when text (str, or bytes read as UTF-8) holds a secret."""
        if isinstance(text, (bytes, bytearray)):
            text = bytes(text).decode("utf-8", "surrogateescape")
        return any(p.search(text) for p, _ in self._patterns)

    def spans(self, text):
        """The spans to replace, sorted, overlapping ones merged."""
        found = []
        for p, grouped in self._patterns:
            for m in p.finditer(text):
                s, e = m.span("secret") if grouped and m.start("secret") >= 0 else m.span()
                if e > s:
                    found.append((s, e))
        found.sort()
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
        r = _MEMO[key] = Redactor(value["patterns"], replacement)
    return r


def redact(text):
    """`text` with the default category's matches replaced (logs, reports)."""
    return redactor().redact(text)
