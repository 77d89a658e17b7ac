"""tool_memory_banner: before a tool is used (pre_tool), inject the last
errors remembered for it in other sessions, at most once per tool per
session in each context (the main model's, each subagent's).  A tool with nothing remembered costs one read of the store file,
of which only the lines naming that tool are parsed.

Only entries met at least `min_count` times are shown (1 in the built-in
profile: every failure), and only lessons from other sessions: an entry every one of whose
sessions is the current one is what this session just met (the failure is
in its context already), not a lesson; one met here and in another session
is shown, with its whole count.

The rule it keeps: recorded tool output is data.  Only the current
project's entries are shown (the session's project, as record.project_of
says), unless the user's own profile sets `hooks.memory.other_projects`;
then other projects' entries come too, each with its origin.  Every text
that came from a tool or a project reaches the template already quoted
(`error_quoted`, `input_quoted`, `examples_quoted` (the latest different
inputs, newest first), `project_quoted`: one line in double
quotes, quotes, backslashes and line breaks escaped), so a stderr line that
reads like an instruction is visibly a quoted string, and the template (in
YAML) frames it as recorded output."""

from engine.core.log import clean

from .base import Handler, HandlerSpec
from .part import Part
from .samples import pick


def quoted(text):
    """One line in double quotes: nothing inside can end the quote or the line."""
    return '"' + clean(text).replace('"', '\\"') + '"'


# State key prefix: MARK + a call's id says its failure is in the store
# (tool_memory_record, tool_memory_scan); kept by clear_state.
MARK = "mem:"

# the keys hooks.memory holds after extends
MEMORY_KEYS = ("path", "max_kept", "compact_bytes", "sessions_kept", "max_field_chars", "redact", "input_fields",
               "pattern_tools", "error_patterns", "error_wrappers", "strip_patterns", "skip_lines", "signature",
               "examples_kept")


class ToolMemoryBannerSpec(HandlerSpec):
    show: int
    min_count: int
    time_format: str
    template: str


class ToolMemoryBanner(Handler):
    Spec = ToolMemoryBannerSpec
    settings = {"memory": MEMORY_KEYS}
    variables = {"template": {"tool", "entries", "total", "more", "cwd", "project", "others", "others_total"}}
    samples = pick("tool", "entries", "total", "more", "cwd", "project", "others", "others_total")

    def _mark(self, ctx, tool):
        """Shown once a tool in each context: the main model's, and each
        subagent's (its events carry its id; it has a context of its own,
        and a lesson given there never reaches the main model's)."""
        sub = ctx.event.field("subagent")
        return f"memory_shown:{sub}:{tool}" if isinstance(sub, str) and sub else f"memory_shown:{tool}"

    def due(self, ctx):
        tool = ctx.event.tool
        return bool(tool) and not ctx.snapshot().get(self._mark(ctx, tool))

    def entries(self, ctx, tool):
        """(this project's entries, other projects' entries or [] unless the
        user opted in), newest first; only those some other session met."""
        from engine.memory.record import project_of
        from engine.memory.store import entries_for_tool, of_project, store_path

        memory = ctx.settings["memory"]
        found = entries_for_tool(store_path(memory), tool, memory.get("examples_kept"))
        session = ctx.event.session
        # An entry naming no session (written before sessions were kept) is not this one's.
        found = [e for e in found if not e["sessions"] or any(s != session for s in e["sessions"])]
        found = [e for e in found if e["count"] >= self.spec.min_count]
        if not found:
            return [], []
        project = project_of(ctx.event)
        own = [e for e in found if of_project(e, project)]
        others = [e for e in found if not of_project(e, project)] if memory.get("other_projects") is True else []
        return own, others

    def _shown(self, found):
        from engine.memory.store import when

        fmt = self.spec.time_format
        return [dict(e, first=when(e["first"], fmt), last=when(e["last"], fmt),
                     error_quoted=quoted(e["error"]), input_quoted=quoted(e["input"]),
                     examples_quoted=[quoted(x) for x in reversed(e.get("examples") or [e["input"]]) if x],
                     project_quoted=quoted(e["project"])) for e in found[: self.spec.show]]

    def parts(self, ctx):
        tool = ctx.event.tool
        own, others = self.entries(ctx, tool)
        if not own and not others:
            return []
        from engine.memory.record import project_of

        from ..banner import render

        shown, shown_others = self._shown(own), self._shown(others)
        text = render(self.spec.template, ctx.settings["templates"], tool=tool, entries=shown,
                      total=len(own), more=len(own) - len(shown), cwd=ctx.cwd, project=project_of(ctx.event),
                      others=shown_others, others_total=len(others)).strip("\n")
        return [Part(self.name, text or None, marks={self._mark(ctx, tool): 1})]
