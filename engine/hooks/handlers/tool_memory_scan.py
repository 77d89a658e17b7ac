"""tool_memory_scan: at stop and session_end, record the tool errors of the
session's transcript that no post_tool event reported (MCP tools, results
the agent flagged failed or that start with its error wrapper), once each:
every recorded call is marked by its call id in the session's state.  A
failure a post_tool event recorded without a call id (the agent's payload
names none) left a mark of its tool and input (tool_memory_record's
`posted_mark`): the first such failure found takes it up instead of being
recorded again."""

from .base import Handler, HandlerSpec
from .part import Part
from .tool_memory_banner import MARK, MEMORY_KEYS
from .tool_memory_record import POSTED, posted_key


class ToolMemoryScanSpec(HandlerSpec):
    max_tail_bytes: int


class ToolMemoryScan(Handler):
    Spec = ToolMemoryScanSpec
    settings = {"memory": MEMORY_KEYS}

    def due(self, ctx):
        return bool(ctx.transcript())

    def parts(self, ctx):
        from engine.memory.scan import transcript_failures

        found = transcript_failures(ctx.transcript(), self.spec.max_tail_bytes,
                                    ctx.settings["memory"]["error_wrappers"], ctx.agent)
        snap = ctx.snapshot()
        new = [f for f in found if not snap.get(MARK + f["id"])]
        if not new:
            return []
        from engine.agents.event import make
        from engine.memory import remember
        from engine.memory.record import build, project_of, redactor

        memory = ctx.settings["memory"]
        redact = redactor(memory)
        project = project_of(ctx.event)
        posted = _posted(snap)
        records, marks = [], {MARK + f["id"]: 1 for f in new}
        for f in new:
            event = make(ctx.agent, "post_tool", session=ctx.event.session, cwd=ctx.cwd, tool=f["tool"],
                         tool_input=f["input"], tool_use_id=f["id"])
            rec = build(event, f["error"], memory, redact, project)
            if rec is None:
                continue
            held = posted.get(posted_key(rec))
            if held:
                marks[held.pop()] = ""  # its post_tool event recorded it: the mark is taken up
            else:
                records.append(rec)
        remember(ctx.settings, records)
        return [Part(self.name, marks=marks)]


def _posted(snap):
    """{posted key: [state keys]} of the calls post_tool events recorded without an id."""
    out = {}
    for key, value in snap.items():
        if value and isinstance(key, str) and key.startswith(POSTED):
            out.setdefault(key[len(POSTED):].rpartition(":")[0], []).append(key)
    return out
