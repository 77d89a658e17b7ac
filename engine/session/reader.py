"""Read a transcript (JSONL) one record at a time, in bounded memory.

The file is read in pieces of `chunk_bytes`; a line longer than
`max_line_bytes` (a huge tool output) is skipped and counted, never held
whole.  A line that is not JSON, or not an object, is counted and skipped; a
line that is not UTF-8 is read with the bad bytes replaced; an incomplete
last line (a live session being written) is noted, not an error.
"""

import json


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
