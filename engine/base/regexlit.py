"""What text every match of a regex holds, found once where the regex is
compiled into the engine's data (re's own parser), so that a hook can rule
a text out with `in` and need neither `import re` nor a compile of the
pattern: about 5 ms of a hook in a user's install.  Used for the error
patterns searched in every successful shell call's output of an agent that
gives the model one output text (engine/memory/record.py; the compiled
hooks settings' `memory.error_literals`) and for an agent's exit-status
pattern (engine/agents/event.py; `failure.exit_literal` in the agent table).

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
    import re

    try:
        from re import _parser as parser  # CPython 3.11 and later
    except ImportError:  # pragma: no cover - CPython 3.10
        import sre_parse as parser
    try:
        parsed = parser.parse(pattern)
    except (re.error, RecursionError, OverflowError, TypeError):
        return ""
    if parsed.state.flags & re.IGNORECASE:
        return ""
    best, run = "", []
    for op, value in parsed:
        if op is parser.LITERAL and chr(value) not in breaks:
            run.append(chr(value))
            continue
        best, run = max(best, "".join(run), key=len), []
    return max(best, "".join(run), key=len)


def may_match(head, literals):
    """False when `head` holds none of the literals, so no pattern can match
    a line of it; True where it may (or no literals were found)."""
    return literals is None or any(literal in head for literal in literals)
