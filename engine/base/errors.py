"""Errors a user can cause.  Each one says where (FILE:LINE:COL) and what to do.

One rule for paths in messages: a file the user named (on the command line,
in $ENGINE_PROFILE) is shown as they wrote it; a file the engine found by
itself (named inside another file, built in, discovered) is shown relative to
the working folder when it is inside it, else as an absolute path.
"""

import os

# absolute path -> the spelling the user gave it (see `given`)
_GIVEN: dict[str, str] = {}


def given(path):
    """Remember how the user spelled a path, for messages."""
    if path and path != "-":
        _GIVEN[os.path.abspath(os.path.expanduser(str(path)))] = str(path)
        try:
            _GIVEN.setdefault(os.path.realpath(os.path.expanduser(str(path))), str(path))
        except OSError:
            pass
    return path


def display(path):
    """How a path appears in a message (the rule above), on one line."""
    from .controls import one_line

    return one_line(_displayed(str(path)))


def _displayed(name):
    if not os.path.isabs(name):  # already as the user wrote it (or <stdin>, a bare name)
        return name
    if name in _GIVEN:
        return _GIVEN[name]
    absolute = name
    try:
        rel = os.path.relpath(absolute)
    except ValueError:  # another drive
        return absolute
    return absolute if rel == ".." or rel.startswith(".." + os.sep) else rel


def suggest(word, choices):
    """'; did you mean 'x'?' for the closest known name, or ''."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


class UserError(Exception):
    """A mistake in the user's input or configuration: printed, never a traceback."""

    def __init__(self, message, file=None, line=None, col=None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.col = col

    def location(self):
        if self.file is None:
            return ""
        name = display(self.file)
        if self.line is None:
            return name
        return f"{name}:{self.line}:{self.col or 1}"

    def __str__(self):
        from .controls import one_line

        # One line, as its place is: a name quoted from data (a path in a
        # profile's `extends:`) may hold a newline that would print a line of its own.
        loc, message = self.location(), one_line(self.message)
        return f"{loc}: {message}" if loc else message


class ValidationErrors(UserError):
    """Several problems found at once (engine validate prints one per line)."""

    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("\n".join(str(e) for e in self.errors))

    def __str__(self):
        return "\n".join(str(e) for e in self.errors)


class TemplateLimit(Exception):
    """A template went past one of its limits (engine/core/sandbox.py)."""
