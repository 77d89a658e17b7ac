"""Tool errors in a transcript: tool results the agent flagged as failed
(Claude Code's `is_error`, Copilot's success false ...: its transcript
reader says) or whose text starts with the agent's error wrapper
(`hooks.memory.error_wrappers`, `<tool_use_error>`), with the name and input
of the call they answer.  The wrapper anywhere else in a result is the
result's text (a README that quotes it), not a failure.  Reads the last
`max_bytes` of the file through the agent's reader (engine/agents/
transcripts/): a line that is not JSON (a file cut mid-write) or longer
than a record's bound is skipped."""


def failed_result(result, wrappers):
    """True for a tool result the agent marked failed, or whose text starts
    with one of the agent's error wrappers."""
    return result.is_error or result.text[:4096].lstrip().startswith(tuple(wrappers))


def transcript_failures(path, max_bytes, wrappers=(), agent=None):
    """[{id, tool, input, error}] of the failed calls of `agent`'s transcript
    (spec.Agent; the default agent when None), oldest first."""
    from engine.agents import DEFAULT_AGENT, table
    from engine.agents.transcripts import backwards

    agent = agent or table.get(DEFAULT_AGENT)
    recs = list(backwards(agent.data["transcript"]["reader"], path, max_bytes, ("tool_call", "tool_result")))
    recs.reverse()
    failed = {r.id: r.text or "tool error" for r in recs
              if r.kind == "tool_result" and r.id and failed_result(r, wrappers)}
    if not failed:
        return []
    calls = {r.id: r for r in recs if r.kind == "tool_call" and r.id in failed}
    out = []
    for tid, text in failed.items():
        call = calls.get(tid)
        if call is not None and call.tool:  # its call is outside the tail read: unknown tool, skipped
            out.append({"id": tid, "tool": call.tool, "input": call.input, "error": text})
    return out
