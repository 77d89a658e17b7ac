"""Which tools filled the context: one ranking of tool results per tool, used
by the session report and by the hooks' context audit and monitor, so the
figures they show agree.  What counts is the `tool_result` the model read
(its text blocks' bytes), never the hook event's `tool_response`, which for
Edit holds the whole original file the model never saw."""


def rank(tools, bytes_per_token):
    """[{name, calls, results, result_bytes, errors, images, est_tokens,
    share}] from an analyzer's per-tool tallies, the biggest first."""
    total = sum(t["result_bytes"] for t in tools.values())
    rows = []
    for name, t in sorted(tools.items(), key=lambda kv: (-kv[1]["result_bytes"], -kv[1]["calls"], kv[0])):
        rows.append({"name": name, **t, "est_tokens": int(round(t["result_bytes"] / bytes_per_token)),
                     "share": round(100.0 * t["result_bytes"] / total, 1) if total else 0.0})
    return rows


def in_context(transcript, style=None):
    """(rows, total result bytes, bytes per token) of the tool results in
    the context now: the main chain since its last compaction."""
    from .report import analyze_file, _redactor
    from .style import load

    style = style or load()
    an, _ = analyze_file(transcript, style, _redactor())
    _, chain = an.chain()
    per_token = style["tools"]["bytes_per_token"]
    rows = rank(chain.epoch_tools, per_token)
    return rows, sum(r["result_bytes"] for r in rows), per_token
