"""What text every match of a regex holds, found once where the regex is
compiled into the engine's data (re's own parser), so that a hook can rule
a text out with `in` and need neither `import re` nor a compile of the
pattern: about 5 ms of a hook in a user's install.  Used for the error
patterns searched in every successful shell call's output of an agent that
gives the model one output text (engine/memory/record.py; the compiled
hooks settings' `memory.error_literals`) and for an agent's exit-status
pattern (engine/agents/event.py; `failure.exit_literal` in the agent table).

An exit-status pattern of the form LITERAL(\\d+)LITERAL, maybe ending in
`\\s*$`, is also taken apart (`digits_between`): its last match is then found
with str.find exactly as re.finditer finds it (`last_digits`), so an output
that holds the literal (every Copilot CLI shell output does) needs no re
either (`failure.exit_digits`).

The literal kept is the longest run of plain characters at a pattern's top
level: every match holds it, as every item of that level matches in order.
A pattern has none where its top level is an alternation or holds no
character (`\\d+`), where a flag changes how characters match (`(?i)`),
or where re cannot parse it.
"""

# Characters str.splitlines() breaks a line at: no line holds one, so for a
# pattern searched line by line a run of literals ends at one.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def required_literals(patterns):
    """One literal per pattern searched line by line that every match of
    it contains, in order; None where a pattern has none (every line is
    then searched)."""
    out = []
    for pattern in patterns:
        literal = required_literal(pattern, LINE_BREAKS)
        if not literal:
            return None
        out.append(literal)
    return out


def required_literal(pattern, breaks=""):
    """The longest literal every match of `pattern` holds ("" for none),
    its runs ended at any character of `breaks`."""
    got = _parse(pattern)
    if got is None:
        return ""
    parsed, parser = got
    best, run = "", []
    for op, value in parsed:
        if op is parser.LITERAL and chr(value) not in breaks:
            run.append(chr(value))
            continue
        best, run = max(best, "".join(run), key=len), []
    return max(best, "".join(run), key=len)


def _parse(pattern, unless="IGNORECASE"):
    """re's parse of `pattern` and its parser module; None where re cannot
    parse it or it sets one of the flags named in `unless` (those that
    change what its caller reads in the parse)."""
    import re

    try:
        from re import _parser as parser  # CPython 3.11 and later
    except ImportError:  # pragma: no cover - CPython 3.10
        import sre_parse as parser
    try:
        parsed = parser.parse(pattern)
    except (re.error, RecursionError, OverflowError, TypeError):
        return None
    if any(parsed.state.flags & getattr(re, flag) for flag in unless.split()):
        return None
    return parsed, parser


def _literal_run(items, parser):
    """(the text of the leading plain characters of items, the rest)."""
    text = []
    for op, value in items:
        if op is not parser.LITERAL:
            break
        text.append(chr(value))
    return "".join(text), items[len(text):]


def _is_repeat_of(item, parser, least, category):
    """Is `item` X{least,} with X one character class holding `category`
    alone (\\d, \\s)?"""
    op, value = item
    if op is not parser.MAX_REPEAT:
        return False
    low, high, body = value
    return (low == least and high == parser.MAXREPEAT and len(body) == 1 and body[0][0] is parser.IN
            and list(body[0][1]) == [(parser.CATEGORY, category)])


def digits_between(pattern):
    """[before, after, at_end] where `pattern` is before(\\d+)after, or
    before(\\d+)after\\s*$ (at_end); None for any other pattern, or where
    `after` starts with a digit (\\d+ could then give some back)."""
    got = _parse(pattern, "IGNORECASE MULTILINE ASCII")  # (?m): $ at every line's end; (?a): \\d is [0-9]
    if got is None:
        return None
    parsed, parser = got
    before, rest = _literal_run(list(parsed), parser)
    if not before or not rest or rest[0][0] is not parser.SUBPATTERN:
        return None
    group, add_flags, del_flags, body = rest[0][1]
    if group != 1 or add_flags or del_flags or len(body) != 1 or not _is_repeat_of(body[0], parser, 1, parser.CATEGORY_DIGIT):
        return None
    after, rest = _literal_run(rest[1:], parser)
    if after[:1].isdecimal():
        return None
    if not rest:
        return [before, after, False]
    if len(rest) == 2 and _is_repeat_of(rest[0], parser, 0, parser.CATEGORY_SPACE) and rest[1] == (parser.AT, parser.AT_END):
        return [before, after, True]
    return None


def last_digits(text, before, after, at_end):
    """Group 1 of the last match re.finditer finds of the pattern
    digits_between took apart into these three, or None: its matches are
    tried left to right, each search going on after the last match's end."""
    found, pos = None, 0
    while True:
        start = text.find(before, pos)
        if start < 0:
            return found
        first = end = start + len(before)
        while end < len(text) and text[end].isdecimal():  # \d: a Unicode decimal digit
            end += 1
        stop = end + len(after)
        if end > first and text.startswith(after, end) and (not at_end or not text[stop:] or text[stop:].isspace()):
            found, pos = text[first:end], (len(text) if at_end else stop)
        else:
            pos = start + 1


def may_match(head, literals):
    """False when `head` holds none of the literals, so no pattern can match
    a line of it; True where it may (or no literals were found)."""
    return literals is None or any(literal in head for literal in literals)
