"""Context size from the agent's transcript (JSONL): the last assistant record
outside a side chain carries message.usage; input + cache creation + cache read
tokens is what the context holds.  Read backwards in blocks: a transcript may
be many megabytes and only its end matters (up to `max_bytes`, never past
hooks.max_transcript_bytes of pipelines/settings/engine.yaml).  Only a
regular file is read: a FIFO or a device named as the transcript would block
or never end.  A record of an unexpected shape is skipped, never an error."""

import json
import os
import stat

BLOCK = 65536


def reversed_lines(path, max_bytes):
    """The transcript's complete lines (bytes), last first, within the last
    `max_bytes` bytes; nothing for a missing, unreadable or special file."""
    if not path or not isinstance(path, str):
        return
    from ..settings import hook_bounds

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


def context_tokens(path, max_bytes):
    """Tokens in context per the last usage record, or None when unknown."""
    for raw in reversed_lines(path, max_bytes):
        found = _usage(raw)
        if found is not None:
            return found
    return None


def _usage(raw):
    raw = raw.strip()
    if not raw or b'"assistant"' not in raw or b"usage" not in raw:
        return None
    try:
        rec = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: an array nested thousands deep
        return None
    if not isinstance(rec, dict) or rec.get("type") != "assistant" or rec.get("isSidechain"):
        return None
    message = rec.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(usage, dict):
        return None
    try:
        return int(usage.get("input_tokens", 0)) + int(usage.get("cache_creation_input_tokens", 0)) + int(
            usage.get("cache_read_input_tokens", 0)
        )
    except (TypeError, ValueError, OverflowError):
        return None
