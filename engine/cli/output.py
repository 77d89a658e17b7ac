"""What the `engine` command prints, the one writer every command uses: its
standard streams escape control characters taken from data (engine/base/
controls.py; only the engine's own colours reach the terminal); a product
(a compressed text, a cached output) is written exact to a pipe or a file.
When something goes wrong: one line per problem on stderr, and a stdout
that went away silenced, so the interpreter's last flush cannot print a
traceback."""

import os
import sys


def silence_stdout():
    """Point stdout at /dev/null, so the interpreter's final flush of what is
    still buffered cannot fail again (and print a traceback) at exit."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def print_error(exc):
    """One line per problem on stderr: `FILE:LINE:COL: message` where the
    error has a place, else `engine: message` (whatever its first word
    holds: "'sha256:x' is not a cache key" is no place)."""
    for error in getattr(exc, "errors", None) or [exc]:
        located = callable(getattr(error, "location", None)) and bool(error.location())
        msg = str(error)
        for line in msg.splitlines() or [msg]:
            print(line if located else f"engine: {line}", file=sys.stderr)


def note_left_out(chosen):
    """Say on stderr which project profile this command leaves out and how
    to approve it (a Choice's notes): the user would otherwise take the
    project's settings for applied."""
    for line in chosen.notes():
        print(f"engine: note: {line}", file=sys.stderr)


class Escaping:
    """A standard stream whose text has its control characters escaped
    (engine/base/controls.py) on the way out, whatever the command wrote.
    Its binary side (`buffer`: `engine cache show`, `cache run`) is the
    exact bytes for a pipe or a file, and escaped for a terminal."""

    def __init__(self, stream):
        from engine.base.controls import finish

        self._stream = stream
        self._buffer = None
        self._finish = finish

    def write(self, text):
        self._stream.write(self._finish(text))
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        if self._buffer is not None:
            self._buffer.flush()  # an escaper's last incomplete character too
        self._stream.flush()

    @property
    def buffer(self):
        if self._buffer is None:
            raw = self._stream.buffer
            self._stream.flush()  # what was written as text comes first
            if self._stream.isatty():
                from engine.base.controls import BytesEscaper

                raw = BytesEscaper(raw)
            self._buffer = raw
        return self._buffer

    def __getattr__(self, name):
        return getattr(self._stream, name)


class escaped_streams:
    """sys.stdout and sys.stderr escaped while a command runs (a class, not
    contextlib: one import fewer on the compress fast path)."""

    def __enter__(self):
        self.saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = Escaping(sys.stdout), Escaping(sys.stderr)
        return self

    def __exit__(self, *exc):
        sys.stdout, sys.stderr = self.saved
        return False


def json_document(value, ensure_ascii=False):
    """Write `value` as indented JSON and a newline, in one write: the
    escaping stream costs a call per write, and json.dump writes per token."""
    import json

    sys.stdout.write(json.dumps(value, ensure_ascii=ensure_ascii, indent=2) + "\n")


def product(text):
    """Write a command's product (a compressed text) as it is: exact bytes for
    a pipe or a file, escaped on a terminal."""
    sys.stdout.flush()
    out = sys.stdout.buffer
    out.write(text.encode("utf-8", "surrogatepass"))
    out.flush()
