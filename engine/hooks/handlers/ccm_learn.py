"""ccm_learn (post_tool and tool_failure on the shell tool): a command whose
output was over the Bash threshold is learned for this project, so its next
run is intercepted.  At tool_failure the output is the failure's text (Claude
Code hands its hook a failed command's output there, already cut: only the
wrapper keeps the next one whole); where the agent's cut mark is in an
output or a failure (`cut_marker`, `failed_cut_marker` of its YAML: Codex
cuts any large output, Claude Code a failed one), the model is told how to
run the command again with its whole output kept (stub.cut_template).  A command whose
learned words hold a secret (`mysql -pPASSWORD`) is not learned: the
learned file would keep it, and no note repeats it."""

from .base import Handler
from .part import Part


class CcmLearn(Handler):
    def due(self, ctx):
        return ctx.event.tool_kind == "shell" and not ctx.event.subagent and bool(ctx.cwd)

    def parts(self, ctx):
        from engine.ccm import config
        from engine.ccm.intercept import WRAPPER_MARK, reads_back
        from engine.ccm.learned import holds_secret, learn_command

        command = ctx.event.command
        if not isinstance(command, str) or WRAPPER_MARK in command or reads_back(command):
            return []  # the wrapper's own call, or a read-back of the cache: nothing to learn or to rerun
        settings = config.load()
        event = ctx.event
        failed = event.kind == "tool_failure"  # the failure's text is the output the agent handed over
        streams = (event.error or "",) if failed else event.output_streams()
        size = output_bytes(streams)
        if not learn_command(settings, ctx.cwd, command, size):
            return []  # small, or a pass-through command
        note = _cut_note(event.agent, failed, streams, settings, command)
        return [Part(self.name, note)] if note and not holds_secret(command, settings) else []


def _cut_note(agent, failed, streams, settings, command):
    """How to read all of an output the agent cut (its cut mark in the
    text: `cut_marker` of its shell output after a call, `failed_cut_marker`
    after one that failed), or None."""
    import re
    from shlex import quote

    from engine.ccm.selfcmd import engine_shell

    marker = (agent.tools("shell").get("output") or {}).get("failed_cut_marker" if failed else "cut_marker")
    if not marker or not any(re.search(marker, text) for text in streams):
        return None
    return settings["stub"]["cut_template"].format(run=f"{engine_shell()} cache run -- {quote(command)}", command=command)


def output_bytes(streams):
    """Bytes of a shell output's streams (stdout, stderr); 0 without one."""
    return sum(len(v.encode("utf-8", "replace")) for v in streams) if streams else 0
