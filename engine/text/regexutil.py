"""Helpers for user-written regular expressions (the `regex` module).

Patterns from several YAML entries are joined into one alternation so that a
text is scanned once.  To keep each pattern meaning what it meant alone:
- leading global flags such as `(?i)` become scoped `(?i:...)`;
- named groups get a per-entry prefix, so two entries may both say `(?P<f>...)`;
- numbered back-references are refused (their numbers shift when joined).
"""

import regex

_LEADING_FLAGS = regex.compile(r"^\(\?([aiLmsux]+)\)")
_NAMED_GROUP = regex.compile(r"(?<!\\)\(\?P?<([A-Za-z_]\w*)>")
_NAMED_BACKREF = regex.compile(r"(?<!\\)\(\?P=([A-Za-z_]\w*)\)")
_GLOBAL_FLAGS = regex.compile(r"(?<!\\)\(\?[aiLmsux]+\)")
_NUMBERED_BACKREF = regex.compile(r"(?<!\\)\\[1-9]")


class PatternError(ValueError):
    pass


def scoped(pattern):
    m = _LEADING_FLAGS.match(pattern)
    if m:
        return f"(?{m.group(1)}:{pattern[m.end():]})"
    return pattern


def check(pattern):
    """Compile one pattern on its own; raise PatternError with a readable reason."""
    if _NUMBERED_BACKREF.search(pattern):
        raise PatternError("numbered back-references (\\1) are not allowed; name the group: (?P<name>...) and (?P=name)")
    try:
        regex.compile(scoped(pattern), regex.V0)
    except regex.error as exc:
        raise PatternError(f"invalid regular expression: {exc}") from None
    if _GLOBAL_FLAGS.search(_LEADING_FLAGS.sub("", pattern)):
        raise PatternError("inline flags like (?i) are allowed only at the start; use a scoped group (?i:...) elsewhere")


def anchored(pattern):
    """The pattern for `match()` at one position, unable to look ahead for
    its literal text.  The `regex` module searches the rest of the text for a
    literal that every match needs ("able" in `\\s+able\\s+to`) before it
    tries the match, so a `match()` called at every word of a text costs the
    whole rest of the text each time (quadratic).  A second branch that can
    never match leaves no literal every match needs, and so no search."""
    return f"(?:{pattern}|(?!))"


def prefixed(pattern, prefix):
    """The pattern with its named groups renamed to prefix + name."""
    pattern = _NAMED_GROUP.sub(lambda m: m.group(0).replace(m.group(1), prefix + m.group(1)), pattern)
    return _NAMED_BACKREF.sub(lambda m: f"(?P={prefix}{m.group(1)})", pattern)
