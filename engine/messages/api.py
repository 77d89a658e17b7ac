"""The Python API: compress_messages and restore_messages.

compress_messages returns plain data, ready for JSON: `messages` (the list
in the shape it came in, compressed messages carrying a marker), `verbatim`
(position -> the original, for every message it changed) and `stats`.
restore_messages puts the originals back: the result equals the input, so
both serialise to the same bytes.  The input is never modified.

The rule it keeps: restore gives back the original or nothing.  The pack
carries `check`: the number of messages and a digest of each original, by
position; restore recomputes them on what it rebuilt and refuses a pack
that was changed (a verbatim entry removed, a message inserted or moved).
"""

from __future__ import annotations

from engine.base.errors import UserError

from . import run as runner
from .shapes import transcript_messages, view


def _pipeline(pipeline, base_dir):
    if pipeline is None or isinstance(pipeline, str) or hasattr(pipeline, "__fspath__"):
        from .load import load

        return load(str(pipeline or "default"), base_dir)
    return pipeline


def _count_tokens(texts, name, memo):
    from engine.text.tokens import count

    total = 0
    for t in texts:
        got = memo.get(t)
        if got is None:
            got = memo[t] = count(t, name)
        total += got
    return total


def compress_messages(messages: list, pipeline: object = "default", *, recency: int | None = None, budget: int | None = None,
                      transcript: bool = False, count_tokens: bool = False, base_dir: str | None = None) -> dict:
    """Compress a list of chat messages (or, with transcript=True, the parsed
    lines of a Claude Code transcript: only `user`/`assistant` lines are
    messages, the rest pass through).

    pipeline: a built-in name, a path, or a Pipeline from engine.messages.load.
    recency: the recency window (default: the pipeline's).  budget: a token
    budget; the largest recency window whose whole result (preserved messages
    included) fits is used, and stats.budget.fits says whether any did.
    """
    if not isinstance(messages, list):
        raise UserError("expected a list of messages")
    pipe = _pipeline(pipeline, base_dir)
    positions, items = _messages_of(messages, transcript)
    views = [view(m, i) for i, m in enumerate(items)]
    known = None if budget is not None else (recency if recency is not None else None)
    if budget is None and recency is None:
        step = pipe.step("recency")
        known = step.window if step is not None else 0
    decided = runner.decide(pipe, items, views, positions, known)
    token_memo: dict[str, int] = {}
    tokens = lambda msgs: _count_tokens((t for m in msgs for _, t in view(m, 0).units), pipe.tokenizer, token_memo)
    budget_stats = None
    if budget is not None:
        window, budget_stats = _window_within(decided, tokens, budget, len(items))
    else:
        window = decided.recency_default if recency is None else recency
    new, originals, applied = runner.apply(decided, window)
    decided.run.forget()
    out = _put_back(messages, new, originals, positions) if transcript else new
    verbatim = {str(positions[i]): m for i, m in originals.items()}
    check = {"count": len(messages), "digests": [digest(m) for m in messages]}
    stats = _stats(decided, applied, items, new, window)
    if budget_stats is not None:
        stats["budget"] = budget_stats
    if count_tokens or budget is not None:
        stats["tokens_before"] = tokens(items)
        stats["tokens_after"] = tokens(new)
        stats["tokenizer"] = pipe.tokenizer
    return {"messages": out, "verbatim": verbatim, "stats": stats, "check": check,
            **({"transcript": True} if transcript else {})}


def _messages_of(messages, transcript):
    """(positions in `messages`, the messages): a transcript's user and
    assistant lines, else every message."""
    if transcript:
        pairs = transcript_messages(messages)
        return [i for i, _ in pairs], [m for _, m in pairs]
    return list(range(len(messages))), messages


def _window_within(decided, tokens, budget, count):
    """(recency window, stats.budget): the largest window (of `count`
    messages at most) whose whole result fits `budget` tokens, else 0 with
    a note of what it needs."""
    lo, hi = 0, count
    best = None
    while lo <= hi:  # the largest window whose result fits
        mid = (lo + hi) // 2
        used = tokens(runner.apply(decided, mid)[0])
        if used <= budget:
            best, lo = (mid, used), mid + 1
        else:
            hi = mid - 1
    if best is not None:
        return best[0], {"tokens": budget, "fits": True, "used": best[1], "recency": best[0]}
    used = tokens(runner.apply(decided, 0)[0])
    return 0, {"tokens": budget, "fits": False, "used": used, "recency": 0,
               "note": f"even with no recency window the result needs {used} tokens "
                       f"(preserved messages included), over the budget of {budget}"}


def _put_back(lines, new, originals, positions):
    """The transcript's lines with each changed message in its line."""
    out = list(lines)
    for i, m in enumerate(new):
        if i in originals:
            out[positions[i]] = {**lines[positions[i]], "message": m}
    return out


def digest(message):
    """A short digest of one message (its canonical JSON): what restore checks."""
    import hashlib
    import json

    text = json.dumps(message, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _stats(decided, applied, items, new, window):
    from collections import Counter

    outcomes = Counter(d.outcome for d in applied)
    before = runner.text_of(items)
    after = runner.text_of(new)
    return {
        "messages": len(items),
        "preserved": outcomes[runner.PRESERVE],
        "compressed": outcomes[runner.COMPRESS] + outcomes[runner.CODE_SPLIT],
        "code_split": outcomes[runner.CODE_SPLIT],
        "deduplicated": outcomes[runner.DUPLICATE],
        "recency": window,
        "chars_before": before,
        "chars_after": after,
        "ratio_chars": round(before / after, 3) if after else None,
        "by_step": dict(Counter(d.step for d in applied)),
        "decisions": [d.label() for d in applied],
        **dict(decided.run.counts),
    }


def restore_messages(messages: list, verbatim: dict, transcript: bool = False, check: dict | None = None,
                     require_check: bool = False) -> list:
    """The original list: every position named in verbatim gets its original
    back (for a transcript, the line's `message`).  With `check` (the pack's),
    the result is verified against it; `require_check`: a pack without one
    is refused."""
    if not isinstance(messages, list) or not isinstance(verbatim, dict):
        raise UserError("expected `messages` (a list) and `verbatim` (a mapping of position to original)")
    out = list(messages)
    for key, original in verbatim.items():
        try:
            pos = int(key)
        except (TypeError, ValueError):
            pos = -1
        if not 0 <= pos < len(out) or str(pos) != str(key):
            raise UserError(f"verbatim names position {key!r}, but there are {len(out)} messages; "
                            "restore the object `compress --json` printed, unchanged")
        if transcript:
            if not isinstance(out[pos], dict):
                raise UserError(f"verbatim names line {pos}, which is not a transcript line")
            out[pos] = {**out[pos], "message": original}
        else:
            out[pos] = original
    if check is None and require_check:
        raise UserError("the pack carries no `check` (an older engine, or an edited pack): its originals cannot be "
                        "verified; compress the messages again with `engine messages compress --json`")
    if check is not None:
        verify(out, check)
    return out


def verify(out, check):
    """Refuse a result that is not the original the pack was made from."""
    fix = "restore the object `compress --json` printed, unchanged"
    if not isinstance(check, dict) or not isinstance(check.get("digests"), list) \
            or check.get("count") != len(check["digests"]):
        raise UserError(f"the pack's `check` is damaged; {fix}")
    if len(out) != check["count"]:
        raise UserError(f"the pack was changed: it holds {len(out)} messages where the original had "
                        f"{check['count']}; {fix}")
    for i, (m, want) in enumerate(zip(out, check["digests"])):
        if digest(m) != want:
            raise UserError(f"the pack was changed: message {i} is not the original (its digest differs); {fix}")
