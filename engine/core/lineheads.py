"""The heads of a file's last lines, last first, read backwards without
ever holding a line whole.

A line up to `head_bytes` long comes whole; of a longer one only its first
`head_bytes` (a 150 MB tool result costs a scan for its start, a block at
a time, never its size in memory).  Where a fact sits at a record's start,
or in the short records around a long one, that is all a reader needs.
Only a regular file is read: a FIFO or a device named as a transcript
would block or never end (opened without waiting for a writer); and never
more of its end than hooks.max_transcript_bytes of
pipelines/settings/engine.yaml, whatever the caller asks."""

import os

BLOCK = 65536


def regular_fd(path):
    """A read-only descriptor of the regular file at `path` (engine/base/files.py
    open_regular), or None."""
    from engine.base.files import open_regular

    if not path or not isinstance(path, str):
        return None
    try:
        with open_regular(path) as fh:
            return os.dup(fh.fileno())
    except (OSError, ValueError):
        return None


def line_heads(path, scan_bytes, head_bytes):
    """(start, length, head) of each line of the file, last first, for the
    lines that start within its last `scan_bytes` bytes: `start` is its
    offset in the file, `head` the line (without its break) when `length` <=
    `head_bytes`, else its first `head_bytes` bytes.  An unfinished last
    line (a live session writing it) counts as a line; an empty one (a
    blank line, the piece after a final break) holds no record and does
    not."""
    from .settings import hook_bounds

    scan_bytes = min(scan_bytes, hook_bounds()["max_transcript_bytes"])  # the engine's ceiling over any caller's
    fd = regular_fd(path)
    if fd is None:
        return
    try:
        yield from _walk(fd, scan_bytes, head_bytes)
    except OSError:
        return
    finally:
        os.close(fd)


def _walk(fd, scan_bytes, head_bytes):
    """The lines of line_heads, a block at a time from the end: the lines a
    block holds whole come from one split; the one it cuts is carried to
    the next block while it is short, and only its length once it is not.
    The carried pieces are kept apart, latest first, and joined once: a
    line of head_bytes costs its length, never its length squared over the
    block size (joining at each block copied a 32 MB line 500 times)."""
    end = os.fstat(fd).st_size
    floor = max(0, end - scan_bytes)
    pos = right = end  # the line being assembled ends at `right`
    carry, held, long = [], 0, False  # its pieces found so far, latest first (while at most head_bytes)
    while pos > floor:
        step = min(BLOCK, pos - floor)
        pos -= step
        block = os.pread(fd, step, pos)
        if len(block) != step:
            return  # the file shrank under us: nothing more is certain
        parts = block.split(b"\n")
        if len(parts) > 1:
            cut = pos + step - len(parts[-1])  # where the line being assembled starts
            if right > cut:
                yield cut, right - cut, _joined(fd, parts[-1], carry, long, cut, right - cut, head_bytes)
            for part in reversed(parts[1:-1]):
                right, cut = cut - 1, cut - 1 - len(part)
                if part:
                    yield cut, len(part), part[:head_bytes]
            right, carry, held, long = cut - 1, [], 0, False
        piece = parts[0]
        held += len(piece)
        long = long or held > head_bytes
        if long:
            carry = []
        else:
            carry.append(piece)
    if pos == 0 and right > 0:
        yield 0, right, _joined(fd, b"", carry, long, 0, right, head_bytes)


def _joined(fd, first, carry, long, start, length, head_bytes):
    """The head of a line whose start is known now: from the pieces carried
    (latest first), or read from the file when the line was too long to carry."""
    if long:
        return os.pread(fd, min(length, head_bytes), start)
    return (first + b"".join(reversed(carry)))[:head_bytes]
