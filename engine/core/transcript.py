"""Reading the agent's transcripts (JSONL), the one reader every part uses,
both ways and always bounded.

Backwards (`reversed_lines`): the end of a live session is what matters
(what is in view, the last tool calls; the context size and the agent's
version by line heads, engine/core/lineheads.py); read
in blocks, up to `max_bytes` and never past hooks.max_transcript_bytes of
pipelines/settings/engine.yaml.  Only a regular file is read: a FIFO or a
device named as the transcript would block or never end.

Forwards (`lines`, `records`): one line at a time, never more than
`max_line_bytes` of one: a longer line (a huge tool output, a sparse file's
hole) is read past in pieces of `chunk_bytes` and given as its place only,
for `copy_range` to copy through unchanged; `records` skips and counts it.
Both bounds come from `transcripts:` of pipelines/settings/engine.yaml; a
caller may ask for less, never more.  A line that is not JSON, or not an
object, is counted and skipped; a line that is not UTF-8 is read with the
bad bytes replaced; an incomplete last line (a live session being written)
is noted, not an error.

A record of an unexpected shape is skipped, never an error; a usage figure
is a number between 0 and `transcripts.max_tokens` (`usage_tokens`).

Writing (`json_utf8`): a line written back must be UTF-8, as the agent
wrote it; JSON escapes half a surrogate pair ("\\ud800"), which has no
UTF-8 at all, so it goes back out as its escape."""

import os

BLOCK = 65536


def reversed_lines(path, max_bytes):
    """The transcript's complete lines (bytes), last first, within the last
    `max_bytes` bytes; nothing for a missing, unreadable or special file.
    A line longer than transcripts.max_line_bytes is passed over, never held,
    and each block is read once (a long line costs its length, not its
    length squared over the block size)."""
    if not path or not isinstance(path, str):
        return
    from .settings import hook_bounds

    max_bytes = min(max_bytes, hook_bounds()["max_transcript_bytes"])  # the engine's ceiling over the profile's
    from engine.base.files import open_regular

    try:  # a FIFO must not wait for a writer
        fh = open_regular(path)
    except (OSError, ValueError):
        return
    try:
        with fh:
            yield from _backwards(fh, max_bytes, _bounds()["max_line_bytes"])
    except OSError:
        return


def _backwards(fh, max_bytes, limit):
    end = fh.seek(0, os.SEEK_END)
    pos = end
    later = []  # pieces of the line being read, the latest first; None once it is too long
    held = 0
    while pos > 0 and end - pos < max_bytes:
        step = min(BLOCK, pos)
        pos -= step
        fh.seek(pos)
        pieces = fh.read(step).split(b"\n")
        if len(pieces) > 1:  # the line read so far ends here
            if later is not None:
                line = pieces[-1] + b"".join(reversed(later))
                if len(line) <= limit:
                    yield line
            yield from (p for p in reversed(pieces[1:-1]) if len(p) <= limit)
            later, held = [], 0
        if later is not None:
            later.append(pieces[0])
            held += len(pieces[0])
            if held > limit:
                later = None  # passed over up to its start
    if pos == 0 and end > 0 and later is not None:
        yield b"".join(reversed(later))  # the file's first line


USAGE_FIELDS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def clamp_tokens(value):
    """A token figure of a transcript as an int in 0..transcripts.max_tokens,
    or None when it is no number (a 400-digit integer is a number: clamped)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    top = _bounds()["max_tokens"]
    if isinstance(value, str):
        value = value.strip()
        if not value.isdigit() or not value.isascii():
            return None
        return top if len(value) > len(str(top)) else min(int(value), top)
    if value != value:  # NaN
        return None
    return int(max(0, min(value, top)))


def usage_tokens(usage):
    """Tokens in context per one `usage` object (input + cache creation +
    cache read), each figure clamped; None when one is not a number."""
    total = 0
    for field in USAGE_FIELDS:
        value = usage.get(field) or 0
        n = clamp_tokens(value)
        if n is None:
            return None
        total += n
    return total


def _bounds():
    from .settings import transcript_bounds

    return transcript_bounds()


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


def lines(fh, max_line_bytes=None, chunk_bytes=None):
    """(start, end, raw) for each line of a binary file, in order: `raw` the
    line's bytes with its newline (the last line may have none), or None for
    a line longer than `max_line_bytes`, which is read past without being
    held; start and end are its byte offsets (copy_range copies it)."""
    bounds = _bounds()
    limit = min(max_line_bytes or bounds["max_line_bytes"], bounds["max_line_bytes"])
    chunk = min(chunk_bytes or bounds["chunk_bytes"], bounds["chunk_bytes"])
    pos = 0
    while True:
        raw = fh.readline(chunk)  # most lines: whole in one piece
        if not raw:
            return
        start = pos
        pos += len(raw)
        if not raw.endswith(b"\n") and len(raw) == chunk:
            raw, more = _rest_of_line(fh, raw, limit, chunk)
            pos += more
        if raw is not None and len(raw) - raw.endswith(b"\n") > limit:
            raw = None
        yield start, pos, raw


def _rest_of_line(fh, first, limit, chunk):
    """(the whole line, or None past `limit`; bytes read after `first`):
    pieces are kept only while the line may still fit."""
    pieces, held, more = [first], len(first), 0
    while True:
        piece = fh.readline(chunk)
        more += len(piece)
        if pieces is not None:
            pieces.append(piece)
            held += len(piece)
            if held > limit + 1:
                pieces = None  # too long: read past the rest
        if not piece or piece.endswith(b"\n"):
            return (b"".join(pieces) if pieces is not None else None), more


def copy_range(src, dst, start, end, chunk_bytes=None):
    """Copy bytes start..end of `src` to `dst` in pieces; a piece of zeros
    that is not the last becomes a hole (a sparse file stays sparse: a 2 GB
    hole costs no disk, nor memory on a tmpfs).  Returns the bytes copied,
    fewer when the file shrank meanwhile."""
    import os

    chunk = min(chunk_bytes or _bounds()["chunk_bytes"], _bounds()["chunk_bytes"])
    src.seek(start)
    done = 0
    while done < end - start:
        piece = src.read(min(chunk, end - start - done))
        if not piece:
            break
        done += len(piece)
        if done < end - start and piece.count(0) == len(piece):
            dst.seek(len(piece), os.SEEK_CUR)
        else:
            dst.write(piece)
    return done


def json_utf8(text):
    """The UTF-8 bytes of JSON text made with ensure_ascii=False: non-ASCII
    as it is, a lone surrogate (only ever inside a string) as its \\u escape,
    as JSON.stringify writes it (encoded as it is, it is no UTF-8: no JSON
    reader takes the line back, and the next purge keeps it unparsed)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def windows(fh, overlap, chunk_bytes=None):
    """The whole file as pieces of `chunk_bytes`, each preceded by the last
    `overlap` bytes of the one before: a search for anything up to
    `overlap + 1` bytes long finds it even across two pieces, and never
    holds a whole line (a 2 GB line costs one piece)."""
    chunk = min(chunk_bytes or _bounds()["chunk_bytes"], _bounds()["chunk_bytes"])
    tail = b""
    while True:
        piece = fh.read(chunk)
        if not piece:
            return
        window = tail + piece
        yield window
        tail = window[-overlap:] if overlap else b""


def records(fh, reading, problems):
    """(line number, record) for every readable line of a binary file
    (`reading`: max_line_bytes and chunk_bytes, at most the engine's)."""
    lineno = 0
    for _start, _end, raw in lines(fh, reading["max_line_bytes"], reading["chunk_bytes"]):
        last = raw is not None and not raw.endswith(b"\n")
        if last and not raw.strip():
            break  # blanks after the last newline: no line
        lineno += 1
        if raw is None:
            problems.long_lines += 1
            continue
        rec = _parse(raw, problems, last=last)
        if rec is not None:
            yield lineno, rec
    problems.lines = lineno
