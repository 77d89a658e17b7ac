"""Tool errors in a transcript, of any agent: tool results the agent
flagged as failed (its reader's `ToolResult.is_error`: Claude Code's
`is_error`, Copilot's `success: false` or exit code ...) or whose text
starts with one of the agent's error wrappers (`failure.wrappers` of its
YAML, Claude Code's `<tool_use_error>`, and the profile's own
`hooks.memory.error_wrappers`), with the name and input of the call they answer, as
the agent's hooks name them.  The wrapper anywhere else in a result is the
result's text (a README that quotes it), not a failure.  Reads the last
`max_bytes` of the file through the agent's reader (engine/agents/
transcripts/), bounded; a line that is not JSON (a file cut mid-write) is
skipped; a failure whose call is outside the tail read is left out (its
tool is unknown)."""


def failed_result(result, wrappers):
    """True for a tool result the agent marked failed, or whose text starts
    with one of the agent's error wrappers."""
    return result.is_error or result.text[:4096].lstrip().startswith(tuple(wrappers))


def _agent(path, agent):
    from engine.session.agent import for_transcript

    return agent if agent is not None and not isinstance(agent, str) else for_transcript(path, agent)


def transcript_failures(path, max_bytes, wrappers=(), agent=None):
    """[{id, tool, input, error}] of the failed calls, oldest first.
    `agent`: an Agent (engine/agents/spec.py) or its name (default: the one
    the file's lines show); `wrappers`: the profile's, beside the agent's."""
    from engine.agents.transcripts import backwards
    from engine.core.settings import failure_head_chars
    from engine.session.agent import hook_call

    agent = _agent(path, agent)
    wrappers = (*agent.data["failure"]["wrappers"], *wrappers)
    recs = list(backwards(agent.data["transcript"]["reader"], path, max_bytes, kinds=("tool_call", "tool_result")))
    recs.reverse()  # oldest first
    head = failure_head_chars()  # an error's text kept for the record (record.py cuts it further)
    failed = {r.id: r.text[:head] or "tool error" for r in recs
              if r.kind == "tool_result" and r.id and failed_result(r, wrappers)}
    calls = {r.id: r for r in recs if r.kind == "tool_call" and r.id in failed}
    out = []
    for tid, text in failed.items():
        call = calls.get(tid)
        if call is not None and call.tool:  # its call is outside the tail read: unknown tool, skipped
            tool, tool_input = hook_call(agent, call.tool, call.input)
            out.append({"id": tid, "tool": tool, "input": tool_input, "error": text})
    return out
