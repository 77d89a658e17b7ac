"""tool_memory_record: remember a failed tool call (post_tool,
tool_failure).  A call that succeeded costs one look at the event and
nothing else; a failure is redacted (engine/core/redact.py) before it is
appended to the store with the session's project, and marked in the session's state by its
tool_use_id so the Stop scan does not record it twice."""

from .base import Handler
from .part import Part
from .tool_memory_banner import MARK, MEMORY_KEYS


class ToolMemoryRecord(Handler):
    settings = {"memory": MEMORY_KEYS}

    def due(self, ctx):
        return bool(ctx.event.tool)

    def parts(self, ctx):
        from engine.memory.record import failure

        memory = ctx.settings["memory"]
        error = failure(ctx.event, memory)
        if error is None:
            return []
        tid = ctx.event.tool_use_id
        mark = MARK + tid if tid else None
        if mark and ctx.snapshot().get(mark):
            return []
        from engine.memory import remember
        from engine.memory.record import build, project_of, redactor

        rec = build(ctx.event, error, memory, redactor(memory), project_of(ctx.event))
        if rec is None:
            return []
        remember(ctx.settings, [rec])
        return [Part(self.name, marks={mark: 1} if mark else None)]
