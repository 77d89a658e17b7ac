"""tool_memory_banner: before a tool is used (PreToolUse), inject the last
errors remembered for it, at most once per tool per session.  A tool with
nothing remembered costs one read of the store file, of which only the
lines naming that tool are parsed."""

import time

from .part import Part


class ToolMemoryBanner:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]

    def _mark(self, tool):
        return f"memory_shown:{tool}"

    def due(self, ctx):
        tool = ctx.event.get("tool_name")
        return isinstance(tool, str) and bool(tool) and not ctx.snapshot().get(self._mark(tool))

    def entries(self, ctx, tool):
        from ...memory.store import entries_for_tool, store_path

        found = entries_for_tool(store_path(ctx.settings["memory"]), tool)
        if self.spec["scope"] == "project":
            found = [e for e in found if e["project"] == ctx.cwd]
        return found

    def parts(self, ctx):
        tool = ctx.event["tool_name"]
        found = self.entries(ctx, tool)
        if not found:
            return []
        from ..banner import render

        fmt = self.spec["time_format"]
        shown = [dict(e, first=time.strftime(fmt, time.localtime(e["first"])),
                      last=time.strftime(fmt, time.localtime(e["last"]))) for e in found[: self.spec["show"]]]
        text = render(self.spec["template"], ctx.settings["templates"], tool=tool, entries=shown,
                      total=len(found), more=len(found) - len(shown), cwd=ctx.cwd).strip("\n")
        return [Part(self.name, text or None, marks={self._mark(tool): 1})]
