"""The line of a failed tool's output that says what went wrong.

One rule for the tool memory's lessons (engine/memory/record.py) and the
session report's errors (engine/session/analyze.py), each with the lists of
its own document (the profile's `hooks.memory`, the report style's
`errors`), all whole-line regular expressions except `failure_lines` and
`error_patterns`, which are searched:

- a line of `skip_lines` says nothing ("Exit code 1", an agent's header);
- a line in which one of `failure_lines` is found names what failed,
  wherever it stands (a test runner's `FAILED path::test - reason` after
  its whole log): the first line of the first pattern, in the list's
  order, that any line matches (a test run's summary before an exception
  line its log holds);
- else a line of `lead_ins` announces the error below it (a Python traceback's
  heading, a Rust panic's): the error is the first line after it that is
  not indented, past the frames (the traceback's `TypeError: ...`);
- else the first line in which one of `error_patterns` is found;
- else the first line that is not one of `generic` (a line of digits a
  failing script printed before its error);
- else the first line that says something; None when no line does.

A failure's text can be a whole build log: the line is looked for in its
first `searched` characters (`failures.head_chars` of the engine's
settings), and only when none there says something, the first that does
after them.
"""

import re


def pick(text, *, searched, skip_lines=(), failure_lines=(), lead_ins=(), error_patterns=(), generic=(), clean=None):
    """The error line of `text` (stripped), or None; `clean(line)`, when
    given, is each line as read (a label taken off its start)."""
    head = _lines(text[:searched], clean)
    return _failure_line(head, skip_lines, failure_lines) \
        or _pick(iter(head), skip_lines, lead_ins, error_patterns, generic) \
        or _pick(iter(_lines(text[searched:], clean)), skip_lines)


def _lines(text, clean):
    return text.splitlines() if clean is None else list(map(clean, text.splitlines()))


def _failure_line(lines, skip_lines, failure_lines):
    if failure_lines:
        said = [line for line in (raw.strip() for raw in lines) if line and not _whole(skip_lines, line)]
        for p in failure_lines:
            found = next((line for line in said if re.search(p, line)), None)
            if found is not None:
                return found
    return None


def _pick(lines, skip_lines, lead_ins=(), error_patterns=(), generic=()):
    first = specific = None
    for raw in lines:
        line = raw.strip()
        if not line or _whole(skip_lines, line):
            continue
        first = first or line
        if _whole(lead_ins, line):
            told = _announced(lines, skip_lines)
            if told is not None:
                return told
        if any(re.search(p, line) for p in error_patterns):
            return line
        if specific is None and not _whole(generic, line):
            specific = line
    return specific or first


def _whole(patterns, line):
    return any(re.fullmatch(p, line) for p in patterns)


def _announced(lines, skip_lines):
    """The first line of `lines` (what follows a lead-in) that is neither
    indented nor blank nor skipped: the error the frames led to."""
    for raw in lines:
        line = raw.strip()
        if line and raw[:1] not in (" ", "\t") and not _whole(skip_lines, line):
            return line
    return None
