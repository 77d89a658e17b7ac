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


def check(pattern, lists=None):
    """Compile one pattern on its own (with the named word lists its
    `\\L<name>` may use); raise PatternError with a readable reason."""
    if _NUMBERED_BACKREF.search(pattern):
        raise PatternError("numbered back-references (\\1) are not allowed; name the group: (?P<name>...) and (?P=name)")
    try:
        regex.compile(scoped(pattern), regex.V0, ignore_unused=True, **(lists or {}))
    except regex.error as exc:
        hint = "; add the list under the dictionary's `lists:`" if "named list" in str(exc) else ""
        raise PatternError(f"invalid regular expression: {exc}{hint}") from None
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


# Characters that stand for themselves in a pattern outside a class (and are
# never a quantifier or an operator): what a required literal is made of.
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:/\"'=,;<>@!%&~` ")
_QUANTIFIERS = "?*+{"


class _Unsure(Exception):
    """A character class this reader cannot read for sure (nested, set operations)."""


def _outside_classes(pattern, i=0):
    """(index, character) of pattern from i on, escapes and character
    classes read over; raises _Unsure at a class it cannot read."""
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _skip_class(pattern, i)
            if i is None:
                raise _Unsure
            continue
        yield i, c
        i += 1


def _skip_group(pattern, i):
    """The index after the group opening at pattern[i] ('('); None when it
    is not closed or cannot be read."""
    depth = 0
    try:
        for j, c in _outside_classes(pattern, i):
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    return j + 1
    except _Unsure:
        pass
    return None


def _skip_class(pattern, i):
    """The index after the character class opening at pattern[i] ('[');
    None when a nested class or set operation makes that unsure."""
    j, n = i + 1, len(pattern)
    if j < n and pattern[j] == "^":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1  # a leading ']' is a member
    while j < n:
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            return None
        if c == "]":
            return j + 1
        j += 1
    return None


def _top_level_bar(pattern):
    """True when pattern has a '|' outside every group and class (or cannot be read)."""
    depth = 0
    try:
        for _, c in _outside_classes(pattern):
            if c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
            elif c == "|" and depth == 0:
                return True
    except _Unsure:
        return True
    return False


def after_look_behinds(pattern):
    """The index where pattern's first consuming item starts: after the
    look-behind groups it opens with (None when one cannot be read)."""
    i = 0
    while i is not None and pattern.startswith(("(?<!", "(?<="), i):
        i = _skip_group(pattern, i)
    return i


def required_prefix(pattern):
    """A literal text every match of the pattern starts with (after its
    leading look-behinds), or "" when the pattern does not say one plainly.

    Only for a pattern compiled as it is (no flags: a literal means the same
    code points to `str.find`).  When the text holds no such literal, the
    pattern cannot match, and a `str` search (memchr fast) answers that for
    a fraction of a regex pass: most secret formats (`glpat-`, `whsec_`,
    `-----BEGIN`) are absent from almost every text.  Read conservatively:
    any flag, top-level alternation or unusual construct gives ""."""
    if _GLOBAL_FLAGS.search(pattern) or _LEADING_FLAGS.match(pattern) or _top_level_bar(pattern):
        return ""
    i, n = after_look_behinds(pattern), len(pattern)
    if i is None:
        return ""
    out = []
    while i < n:
        c = pattern[i]
        if c in _PLAIN:
            step = 1
        elif c == "\\" and i + 1 < n and not pattern[i + 1].isalnum() and pattern[i + 1] not in " \n":
            c, step = pattern[i + 1], 2
        else:
            break
        if i + step < n and pattern[i + step] in _QUANTIFIERS:
            break  # this character may repeat or be missing
        out.append(c)
        i += step
    return "".join(out)


def only_at_text_start(pattern):
    """True when every match of the pattern starts at the start of the text:
    it opens with \\A (inside leading flags such as (?m) at most) and has no
    top-level alternation that could start elsewhere.  Read conservatively."""
    m = _LEADING_FLAGS.match(pattern)
    if m:
        pattern = pattern[m.end():]
    elif pattern.startswith("(?") and pattern[2:3].isalpha():
        flags = regex.match(r"\(\?[aiLmsux]+:", pattern)  # a scoped leading flag group around the whole
        if flags is None or _skip_group(pattern, 0) != len(pattern):
            return False
        pattern = pattern[flags.end():-1]
    return pattern.startswith("\\A") and not _top_level_bar(pattern)


def only_at_line_start(pattern):
    """True when the pattern, as written in YAML, opens with (?m)^ and has no
    top-level alternation: every match it finds is tried where a line
    starts.  Read conservatively."""
    return pattern.startswith("(?m)^") and not _top_level_bar(pattern[len("(?m)"):])


def trie_source(words, spell_char=None):
    """A pattern (for `re`) matching any of `words` (all str or all bytes),
    written as a trie: at a position the longest word that starts there is
    tried first, then the shorter ones that are its prefixes, and no more
    characters are read than the longest word has (linear in the text, not
    one branch per word tried at every position).  spell_char: how one
    character is written (default: itself, escaped)."""
    import re

    spell_char = spell_char or re.escape

    empty = words[0][:0]
    trie = {}
    for word in words:
        node = trie
        for i in range(len(word)):
            node = node.setdefault(word[i:i + 1], {})
        node[None] = True
    spell = (lambda s: s.encode("ascii")) if isinstance(empty, bytes) else (lambda s: s)

    def node_source(node):
        branches = [spell_char(k) + node_source(node[k]) for k in sorted(k for k in node if k is not None)]
        if not branches:
            return empty
        body = branches[0] if len(branches) == 1 else spell("(?:") + spell("|").join(branches) + spell(")")
        return spell("(?:") + body + spell(")?") if None in node else body

    return node_source(trie)
