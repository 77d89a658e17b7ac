"""output_tally: add each tool output's size (bytes, and tokens estimated as
characters / `hooks.context.chars_per_token`: no tokenizer on this path) to
the session's per-tool tally, one atomic increment in the state (Redis
HINCRBY or the locked state file).  The context audit and monitor read it."""

PREFIXES = ("out_bytes:", "out_tokens:", "out_calls:")


def _sizes(value, depth=0):
    """(utf-8 bytes, characters) of every string inside a tool response."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass")), len(value)
    if depth > 50:
        return 0, 0
    b = c = 0
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for v in items:
        vb, vc = _sizes(v, depth + 1)
        b += vb
        c += vc
    return b, c


def consumers(snapshot, top):
    """[(tool, tokens, bytes, calls, share in percent)] of the session, the
    biggest first, at most `top`; and the total tokens of all tools."""
    rows = []
    for k, v in snapshot.items():
        if k.startswith("out_tokens:") and isinstance(v, int) and v > 0:
            tool = k[len("out_tokens:"):]
            rows.append((tool, v, snapshot.get(f"out_bytes:{tool}", 0), snapshot.get(f"out_calls:{tool}", 0)))
    total = sum(r[1] for r in rows)
    rows.sort(key=lambda r: (-r[1], r[0]))
    return [dict(tool=t, tokens=n, bytes=b, calls=c, share=round(100.0 * n / total, 1))
            for t, n, b, c in rows[:top]], total


class OutputTally:
    def __init__(self, spec, settings, registry):
        self.name = spec["name"]

    def due(self, ctx):
        return ctx.state is not None and isinstance(ctx.event.get("tool_name"), str)

    def parts(self, ctx):
        tool = ctx.event["tool_name"]
        resp = ctx.event.get("tool_response")
        if resp is None:
            resp = ctx.event.get("error")
        nbytes, chars = _sizes(resp)
        per = ctx.settings["context"]["chars_per_token"]
        tokens = -(-chars // per) if chars else 0
        ctx.state.add({f"out_bytes:{tool}": nbytes, f"out_tokens:{tool}": tokens, f"out_calls:{tool}": 1})
        return []
