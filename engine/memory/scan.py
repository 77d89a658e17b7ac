"""Tool errors in a transcript, of any agent: the failed tool results
(`ToolResult.is_error`, as the agent's reader tells it: engine/agents/
transcripts) with the name and input of the call they answer, as the
agent's hooks name them.  Reads the last `max_bytes` of the file, through
the bounded backward reader; a line that is not JSON (a file cut
mid-write) is skipped; a failure whose call is outside the tail read is
left out (its tool is unknown)."""

MAX_ERROR_CHARS = 20000  # an error's text kept for the record (record.py cuts it further)


def _agent(path, agent):
    from engine.session.agent import for_transcript

    return agent if agent is not None and not isinstance(agent, str) else for_transcript(path, agent)


def transcript_failures(path, max_bytes, agent=None):
    """[{id, tool, input, error}] of the failed calls, oldest first.
    `agent`: an Agent or its name (default: the one the file's lines show)."""
    from engine.agents.transcripts import backwards
    from engine.session.agent import hook_call

    agent = _agent(path, agent)
    recs = list(backwards(agent.data["transcript"]["reader"], path, max_bytes, kinds=("tool_call", "tool_result")))
    recs.reverse()  # oldest first
    failed = {}
    for rec in recs:
        if rec.kind == "tool_result" and rec.id and rec.is_error:
            failed[rec.id] = rec.text[:MAX_ERROR_CHARS] or "tool error"
    calls = {rec.id: rec for rec in recs if rec.kind == "tool_call" and rec.id in failed}
    out = []
    for tid, text in failed.items():
        call = calls.get(tid)
        if call is not None and call.tool:  # its call is outside the tail read: unknown tool, skipped
            tool, tool_input = hook_call(agent, call.tool, call.input)
            out.append({"id": tid, "tool": tool, "input": tool_input, "error": text})
    return out
