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
import stat

BLOCK = 65536


def open_regular(path):
    """A read-only descriptor of the regular file at `path`, or None."""
    if not path or not isinstance(path, str):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def line_heads(path, scan_bytes, head_bytes):
    """(start, length, head) of each line of the file, last first, for the lines
    that start within its last `scan_bytes` bytes: `start` is its offset in
    the file, `head` the line (without its break) when `length` <=
    `head_bytes`, else its first `head_bytes` bytes.  An unfinished last line (a live session writing
    it) counts as a line; an empty one (a blank line, the piece after a
    final break) holds no record and does not."""
    from .settings import hook_bounds

    scan_bytes = min(scan_bytes, hook_bounds()["max_transcript_bytes"])  # the engine's ceiling over any caller's
    fd = open_regular(path)
    if fd is None:
        return
    try:
        end = os.fstat(fd).st_size
        floor = max(0, end - scan_bytes)
        pos = line_end = end  # the line being looked for ends at line_end
        while pos > floor:
            step = min(BLOCK, pos - floor)
            pos -= step
            block = os.pread(fd, step, pos)
            if len(block) != step:
                return  # the file shrank under us: nothing more is certain
            at = step
            while (nl := block.rfind(b"\n", 0, at)) >= 0:
                if pos + nl + 1 < line_end:
                    yield _head(fd, block, pos, pos + nl + 1, line_end, head_bytes)
                line_end, at = pos + nl, nl
        if pos == 0 and line_end > 0:
            yield _head(fd, block, 0, 0, line_end, head_bytes)
    except OSError:
        return
    finally:
        os.close(fd)


def _head(fd, block, block_at, start, line_end, head_bytes):
    """(start, length, head) of the line [start, line_end): the head from
    the block in hand when it holds it, else read from the file."""
    length = line_end - start
    n = min(length, head_bytes)
    offset = start - block_at
    if offset + n <= len(block):
        return start, length, block[offset:offset + n]
    return start, length, os.pread(fd, n, start)
