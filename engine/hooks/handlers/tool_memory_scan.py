"""tool_memory_scan: at stop and session_end, record the tool errors of the
session's transcript that no post_tool event reported (MCP tools, results
the agent flagged failed or that start with its error wrapper), once each:
every recorded call is marked by its call id in the session's state.  A
failure a post_tool event recorded without a call id (the agent's payload
names none) left a mark of its tool and input (tool_memory_record's
`posted_mark`): the first such failure found takes it up instead of being
recorded again.

An agent whose subagent keeps a transcript of its own, named by the
subagent's start (`transcript.subagent_own` of its YAML: Codex CLI, whose
PostToolUse shows no exit status), has the handler at subagent_start too:
there it notes that transcript in the session's state, and the scans read
it beside the session's, each one only when it grew since it was read
(`max_subagents` of them at one event, the biggest growth first)."""

import os

from .base import Handler, HandlerSpec
from .part import Part
from .tool_memory_banner import MARK, MEMORY_KEYS
from .tool_memory_record import POSTED, posted_key

SUBAGENT = "subagent_transcript:"  # + the subagent's id: its own transcript
READ = "subagent_read:"  # + the subagent's id: its transcript's size when it was last read


class ToolMemoryScanSpec(HandlerSpec):
    max_tail_bytes: int
    max_subagents: int


class ToolMemoryScan(Handler):
    Spec = ToolMemoryScanSpec
    settings = {"memory": MEMORY_KEYS}

    def due(self, ctx):
        return bool(ctx.transcript())

    def parts(self, ctx):
        if ctx.name == "subagent_start":
            return _note_subagent(ctx, self.name)
        snap = ctx.snapshot()
        marks, found = {}, _failures(ctx, ctx.transcript(), self.spec.max_tail_bytes)
        for sub, path, size in _grown_subagents(snap, self.spec.max_subagents):
            found += _failures(ctx, path, self.spec.max_tail_bytes)
            marks[READ + sub] = size
        new = [f for f in found if not snap.get(MARK + f["id"])]
        if new:
            marks.update(_record(ctx, new, snap))
        return [Part(self.name, marks=marks)] if marks else []


def _failures(ctx, path, max_bytes):
    from engine.memory.scan import transcript_failures

    return transcript_failures(path, max_bytes, ctx.settings["memory"]["error_wrappers"], ctx.agent)


def _record(ctx, new, snap):
    """Remember the failures no post_tool event recorded; their marks."""
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
    return marks


def _note_subagent(ctx, name):
    """At a subagent's start: its own transcript, for the scans to come,
    where the agent's start names one."""
    sub, path = ctx.event.field("subagent"), ctx.transcript()
    if not (ctx.agent.data["transcript"]["subagent_own"] and isinstance(sub, str) and sub and isinstance(path, str)):
        return []
    return [Part(name, marks={SUBAGENT + sub: path})]


def _grown_subagents(snap, most):
    """[(subagent, transcript, size)] of the noted subagents' transcripts
    that grew since they were last read, the biggest growth first."""
    grown = []
    for key, path in snap.items():
        if not (isinstance(key, str) and key.startswith(SUBAGENT) and isinstance(path, str) and path):
            continue
        sub = key[len(SUBAGENT):]
        try:
            size = os.stat(path).st_size
        except (OSError, ValueError):
            continue
        before = snap.get(READ + sub)
        if size != before:
            grown.append((size - (before if isinstance(before, int) else 0), sub, path, size))
    grown.sort(key=lambda g: -g[0])
    return [(sub, path, size) for _, sub, path, size in grown[:most]]


def _posted(snap):
    """{posted key: [state keys]} of the calls post_tool events recorded without an id."""
    out = {}
    for key, value in snap.items():
        if value and isinstance(key, str) and key.startswith(POSTED):
            out.setdefault(key[len(POSTED):].rpartition(":")[0], []).append(key)
    return out
