"""How full the context is: the latest main-chain usage record of the
transcript against the model's window, and where in the transcript the
response that reported it began.

One API response spans several assistant lines that repeat `usage` (the same
`message.id`): the latest one is the response's figure, so reading backwards
and stopping at the first usable record needs no de-duplication.  Side-chain
(subagent) records and the agent's synthetic records (`<synthetic>` model,
usage all zero, written for API errors) say nothing about the main context
and are skipped.  A `compact_boundary` met before any usage record means the
context was just compacted: its size is unknown until the next response, and
counts as 0.  Only a regular file is read, backwards, at most `max_bytes`.

The figure counts what the response was sent, nothing written after its
first line: its own output, and the tool results the agent writes between
its lines (2.1.5x) and after them.  So the reader goes on back to the
response's first line, and says where it starts (`since`): a gate that asks
how much the context may have grown since the figure counts the bytes from
there (context_monitor.py, cadence.py), not from where the transcript ended
when it was read.
"""

from engine.base.fastjson import loads
from engine.core.lineheads import line_heads
from engine.core.transcript import usage_tokens

# The agent's marker model for records it writes itself (API errors, aborts).
SYNTHETIC = "<synthetic>"


def last_usage(path, max_bytes):
    """(tokens in context, model, since) per the latest main-chain response,
    (0, None, since) right after a compaction, None when the transcript says
    nothing; `since` is the offset where that response (or the compaction)
    starts in the transcript."""
    found = None  # [tokens, model, since, message id]
    for start, _length, raw in line_heads(path, max_bytes, max_bytes):
        kind, value = _main_record(raw)
        if kind == "boundary":
            if found is None:
                return 0, None, start
            break
        if kind != "assistant":
            continue
        message_id, usage = value
        if found is None:
            if usage is None:
                continue
            found = [usage[0], usage[1], start, message_id]
            if message_id is None:
                break  # no id: the response cannot be told from the one before
        elif message_id == found[3]:
            found[2] = start  # an earlier line of the same response
        else:
            break  # the response before it
    return None if found is None else tuple(found[:3])


def _main_record(raw):
    """("boundary", None) for a main-chain compaction boundary, ("assistant",
    (message id, (tokens, model) or None)) for a main-chain response line,
    else (None, None).  Bytes are tested before anything is parsed."""
    if b"compact_boundary" in raw:
        rec = _load(raw)
        if isinstance(rec, dict) and rec.get("type") == "system" and rec.get("subtype") == "compact_boundary" \
                and not rec.get("isSidechain"):
            return "boundary", None
        return None, None
    if b'"assistant"' not in raw:
        return None, None
    rec = _load(raw)
    if not isinstance(rec, dict) or rec.get("type") != "assistant" or rec.get("isSidechain"):
        return None, None
    message = rec.get("message")
    if not isinstance(message, dict) or message.get("model") == SYNTHETIC:
        return None, None
    message_id = message.get("id") if isinstance(message.get("id"), str) else None
    return "assistant", (message_id, _tokens(message))


def _tokens(message):
    """(tokens, model) of a response's usage, or None without a usable one."""
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    tokens = usage_tokens(usage)  # clamped: a 400-digit figure cannot overflow the fill
    if tokens is None:
        return None
    model = message.get("model")
    return tokens, model if isinstance(model, str) else None


def _load(raw):
    # fastjson, not json: the monitor reads the fill on the PostToolUse path,
    # where json.decoder (and the `re` it imports) would cost ~10 ms.
    try:
        return loads(raw.strip().decode("utf-8", "replace"))
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


def fill_of(usage, context):
    """(fill in percent, tokens, window) of a last_usage() answer, or None."""
    if usage is None:
        return None
    tokens, model, _since = usage
    size = window(model, tokens, context)
    return 100.0 * tokens / size, tokens, size
