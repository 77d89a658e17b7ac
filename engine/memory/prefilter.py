"""What a line must hold for an error pattern to match it, found once when
the profile compiles (re's own parser), so that a successful shell call
whose output holds none of it costs its hook neither `import re` nor a
compile of each pattern: about 5 ms of every such call of an agent that
gives the model one output text (Codex CLI, Gemini CLI, Copilot CLI), whose
stdout is searched (engine/memory/record.py).

The literal kept is the longest run of plain characters at a pattern's top
level: every match holds it, as every item of that level matches in order.
A pattern has none where its top level is an alternation or holds no
character (`\\d+`), where a flag changes how characters match (`(?i)`),
or where re cannot parse it: then no literal is kept for any pattern and
every line is searched, as before.
"""

# Characters str.splitlines() breaks a line at: no line holds one (the
# search is line by line), so a run of literals ends at one.
_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def required_literals(patterns):
    """One literal per pattern that every match of it contains, in order;
    None where a pattern has none (every line is then searched)."""
    import re

    try:
        from re import _parser as parser  # CPython 3.11 and later
    except ImportError:  # pragma: no cover - CPython 3.10
        import sre_parse as parser
    out = []
    for pattern in patterns:
        literal = _longest_run(pattern, parser, re)
        if not literal:
            return None
        out.append(literal)
    return out


def _longest_run(pattern, parser, re):
    try:
        parsed = parser.parse(pattern)
    except (re.error, RecursionError, OverflowError, TypeError):
        return ""
    if parsed.state.flags & re.IGNORECASE:
        return ""
    best, run = "", []
    for op, value in parsed:
        if op is parser.LITERAL and chr(value) not in _LINE_BREAKS:
            run.append(chr(value))
            continue
        best, run = max(best, "".join(run), key=len), []
    return max(best, "".join(run), key=len)


def may_match(head, literals):
    """False when `head` holds none of the literals, so no pattern can match
    a line of it; True where it may (or no literals were found)."""
    return literals is None or any(literal in head for literal in literals)
