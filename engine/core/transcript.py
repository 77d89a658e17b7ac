"""Reading the agent's transcripts (JSONL), the one reader every part uses,
both ways and always bounded.

Backwards (`reversed_lines`): the end of a live session is what matters
(what is in view, the last tool calls; the context size and the agent's
version by line heads, engine/core/lineheads.py); read
in blocks, up to `max_bytes` and never past hooks.max_transcript_bytes of
pipelines/settings/engine.yaml.  Only a regular file is read: a FIFO or a
device named as the transcript would block or never end.

Forwards (`records`): one record at a time in pieces of `chunk_bytes`; a line
longer than `max_line_bytes` (a huge tool output) is skipped and counted,
never held whole.  A line that is not JSON, or not an object, is counted and
skipped; a line that is not UTF-8 is read with the bad bytes replaced; an
incomplete last line (a live session being written) is noted, not an error.

A record of an unexpected shape is skipped, never an error."""

import os
import stat

BLOCK = 65536


def reversed_lines(path, max_bytes):
    """The transcript's complete lines (bytes), last first, within the last
    `max_bytes` bytes; nothing for a missing, unreadable or special file."""
    if not path or not isinstance(path, str):
        return
    from .settings import hook_bounds

    max_bytes = min(max_bytes, hook_bounds()["max_transcript_bytes"])  # the engine's ceiling over the profile's
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        fh = os.fdopen(fd, "rb")
        fd = None
        with fh:
            end = fh.seek(0, os.SEEK_END)
            pos, tail = end, b""
            while pos > 0 and end - pos < max_bytes:
                step = min(BLOCK, pos)
                pos -= step
                fh.seek(pos)
                tail = fh.read(step) + tail
                lines = tail.split(b"\n")
                complete = lines if pos == 0 else lines[1:]  # the first piece may be cut
                tail = lines[0] if pos > 0 else b""
                yield from reversed(complete)
    except OSError:
        return
    finally:
        if fd is not None:
            os.close(fd)


class Problems:
    __slots__ = ("lines", "bad_lines", "long_lines", "non_utf8_lines", "partial_tail")

    def __init__(self):
        self.lines = 0
        self.bad_lines = 0
        self.long_lines = 0
        self.non_utf8_lines = 0
        self.partial_tail = False

    def as_dict(self):
        return {k: getattr(self, k) for k in self.__slots__}


def _parse(raw, problems, last=False):
    import json  # the reports' forward reader: not on a hook's path

    raw = raw.strip()
    if not raw:
        return None
    try:
        rec = json.loads(raw)
    except UnicodeDecodeError:
        problems.non_utf8_lines += 1
        try:
            rec = json.loads(raw.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError):
            rec = None
    except (ValueError, RecursionError):  # RecursionError: arrays nested thousands deep
        rec = None
    if not isinstance(rec, dict):
        if last:
            problems.partial_tail = True
        else:
            problems.bad_lines += 1
        return None
    return rec


def records(fh, reading, problems):
    """(line number, record) for every readable line of a binary file."""
    limit, chunk = reading["max_line_bytes"], reading["chunk_bytes"]
    buf = bytearray()
    skipping = False
    lineno = 0
    while True:
        data = fh.read(chunk)
        if not data:
            break
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                if not skipping:
                    buf += data[start:]
                    if len(buf) > limit:
                        skipping = True
                        buf.clear()
                break
            piece = data[start:nl]
            start = nl + 1
            lineno += 1
            if skipping:
                skipping = False
                problems.long_lines += 1
                continue
            if buf:
                buf += piece
                raw = bytes(buf)
                buf.clear()
            else:
                raw = piece
            if len(raw) > limit:
                problems.long_lines += 1
                continue
            rec = _parse(raw, problems)
            if rec is not None:
                yield lineno, rec
    if skipping:
        lineno += 1
        problems.long_lines += 1
    elif buf.strip():
        lineno += 1
        rec = _parse(bytes(buf), problems, last=True)
        if rec is not None:
            yield lineno, rec
    problems.lines = lineno
