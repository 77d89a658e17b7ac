"""tool_memory_record: remember a failed tool call (post_tool,
tool_failure).  A call that succeeded costs one look at the event and
nothing else; a failure is redacted (engine/core/redact.py) before it is
appended to the store with the session's project, and marked in the
session's state so the Stop scan does not record it twice: by its
tool_use_id, or, where the agent's payload names no call (Gemini CLI's
AfterTool, Copilot CLI's postToolUse), by a mark of its own that says
"one call of this tool and input is recorded" (`posted_mark`), which the
scan takes up for the first such failure it finds."""

import os

from .base import Handler
from .part import Part
from .tool_memory_banner import MARK, MEMORY_KEYS

POSTED = MARK + "posted:"  # POSTED + the call's tool and input (posted_key) + ":" + a nonce


def posted_key(rec):
    """What a post_tool record and the scan's record of the same call share:
    the tool and the input as the store keeps it (redacted, shortened)."""
    from engine.core.cache import sha256

    return sha256(f"{rec['tool']}\x00{rec['input']}".encode("utf-8", "surrogatepass")).hexdigest()[:16]


def posted_mark(rec):
    """A state key of its own for each recorded call (two parallel hooks never write the same one)."""
    return f"{POSTED}{posted_key(rec)}:{os.urandom(4).hex()}"


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
        return [Part(self.name, marks={mark or posted_mark(rec): 1})]
