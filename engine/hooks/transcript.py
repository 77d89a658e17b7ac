"""Context size from the agent's transcript (JSONL): the last assistant record
outside a side chain carries message.usage; input + cache creation + cache read
tokens is what the context holds.  Read backwards in blocks: a transcript may
be many megabytes and only its end matters."""

import json
import os

BLOCK = 65536


def context_tokens(path, max_bytes=8 * 1024 * 1024):
    """Tokens in context per the last usage record, or None when unknown."""
    if not path:
        return None
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            end = fh.tell()
            pos, tail = end, b""
            while pos > 0 and end - pos < max_bytes:
                step = min(BLOCK, pos)
                pos -= step
                fh.seek(pos)
                tail = fh.read(step) + tail
                lines = tail.split(b"\n")
                # the first piece may be a partial line unless we reached the start
                complete = lines if pos == 0 else lines[1:]
                for raw in reversed(complete):
                    found = _usage(raw)
                    if found is not None:
                        return found
                tail = lines[0] if pos > 0 else b""
    except OSError:
        return None
    return None


def _usage(raw):
    raw = raw.strip()
    if not raw or b'"assistant"' not in raw or b"usage" not in raw:
        return None
    try:
        rec = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(rec, dict) or rec.get("type") != "assistant" or rec.get("isSidechain"):
        return None
    usage = (rec.get("message") or {}).get("usage") or {}
    try:
        return int(usage.get("input_tokens", 0)) + int(usage.get("cache_creation_input_tokens", 0)) + int(
            usage.get("cache_read_input_tokens", 0)
        )
    except (TypeError, ValueError):
        return None
