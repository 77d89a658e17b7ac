"""How full the context is: the latest main-chain usage record of the
transcript against the model's window.

One API response spans several assistant lines that repeat `usage` (the same
`message.id`): the latest one is the response's figure, so reading backwards
and stopping at the first usable record needs no de-duplication.  Side-chain
(subagent) records and the agent's synthetic records (`<synthetic>` model,
usage all zero, written for API errors) say nothing about the main context
and are skipped.  A `compact_boundary` met before any usage record means the
context was just compacted: its size is unknown until the next response, and
counts as 0.  Only a regular file is read, backwards, at most `max_bytes`.
"""

from engine.base.fastjson import loads
from engine.core.transcript import reversed_lines, usage_tokens

# The agent's marker model for records it writes itself (API errors, aborts).
SYNTHETIC = "<synthetic>"


def last_usage(path, max_bytes):
    """(tokens in context, model) per the latest main-chain response, (0, None)
    right after a compaction, None when the transcript says nothing."""
    for raw in reversed_lines(path, max_bytes):
        raw = raw.strip()
        if not raw:
            continue
        if b"compact_boundary" in raw:
            rec = _load(raw)
            if isinstance(rec, dict) and rec.get("type") == "system" and rec.get("subtype") == "compact_boundary" \
                    and not rec.get("isSidechain"):
                return 0, None
            continue
        if b'"assistant"' not in raw or b"usage" not in raw:
            continue
        rec = _load(raw)
        if not isinstance(rec, dict) or rec.get("type") != "assistant" or rec.get("isSidechain"):
            continue
        message = rec.get("message")
        if not isinstance(message, dict) or message.get("model") == SYNTHETIC:
            continue
        usage = message.get("usage")
        if not isinstance(usage, dict):
            continue
        tokens = usage_tokens(usage)  # clamped: a 400-digit figure cannot overflow the fill
        if tokens is None:
            continue
        model = message.get("model")
        return tokens, model if isinstance(model, str) else None
    return None


def _load(raw):
    # fastjson, not json: the monitor reads the fill on the PostToolUse path,
    # where json.decoder (and the `re` it imports) would cost ~10 ms.
    try:
        return loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None


def window(model, tokens, settings):
    """The model's context window per `hooks.context`: the long window for a
    model named as a long-context variant, or once the context is already
    past the regular window (only a long-context variant gets there)."""
    regular, long = settings["window_tokens"], settings["long_window_tokens"]
    if model and any(m in model for m in settings["long_window_models"]):
        return long
    return long if tokens > regular else regular


def context_fill(event, settings):
    """(fill in percent, tokens, window) of the event's session, or None."""
    found = last_usage(event.get("transcript_path"), settings["transcript"]["max_tail_bytes"])
    if found is None:
        return None
    tokens, model = found
    size = window(model, tokens, settings["context"])
    return 100.0 * tokens / size, tokens, size
