"""What the `engine` command prints when something goes wrong: one line per
problem on stderr, and a stdout that went away silenced, so the
interpreter's last flush cannot print a traceback."""

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
    msg = str(exc)
    for line in msg.splitlines() or [msg]:
        print(line if ":" in line.split(" ")[0] else f"engine: {line}", file=sys.stderr)
