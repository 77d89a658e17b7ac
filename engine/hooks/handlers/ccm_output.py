"""ccm_output (post_tool on the shell tool): a shell output over the
threshold is stored in the content cache and replaced, for the model, by
its stub, through the agent's own mechanism (its `replace_output` answer:
Claude Code's updatedToolOutput, Codex's block with a reason, Copilot's
modifiedResult, Gemini's tail call).  The command already ran once,
untouched, in the agent's own shell tool: no permission decision, no
rewrite.

The rule kept: the output is replaced only when it can be, and only when
nothing is lost.  Only where the session's agent takes the answer at its
version (engine/agents/capability.py); never for a subagent's call (a
subagent reads in full), nor a call the pre_tool wrapper already handled,
nor an output the agent keeps out itself or that is not plain text (the
shell output's `leave_alone` keys in the agent's YAML); never for output
holding a secret (Store.put refuses it), nor the engine's own read-back
of a cached output (`engine cache show`: the model asked for those bytes;
intercept.reads_back).  Any output over
`intercept.bash.threshold_bytes` qualifies, listed or not.

What is stored: what the model would have read (stdout, then stderr with a
newline between them when stdout does not end with one; or the agent's one
output text); `engine cache show KEY` prints exactly that back.
"""

from .base import Handler
from .part import Part


class CcmOutput(Handler):
    # the agents replace a tool output after it ran: at post_tool only
    events = ("post_tool",)

    def due(self, ctx):
        e = ctx.event
        return e.kind == "post_tool" and e.tool_kind == "shell" and not e.subagent and e.output_streams() is not None

    def parts(self, ctx):
        from engine.ccm import config

        settings = config.load()
        out = replacement(ctx.event, settings, ctx.log)
        return [Part(self.name, tool_output=out)] if out else []


def stored_bytes(streams):
    """The bytes kept for a shell output (stdout, stderr): stdout, then stderr."""
    stdout, stderr = streams
    sep = "\n" if stdout and stderr and not stdout.endswith("\n") else ""
    return (stdout + sep + stderr).encode("utf-8", "surrogatepass")


def _left_alone(event):
    raw, shape = event.tool_output, event.agent.tools("shell").get("output") or {}
    return isinstance(raw, dict) and any(raw.get(k) for k in shape.get("leave_alone", ()))


def replacement(event, settings, log=None):
    """The neutral tool output ({text, command}) for this post_tool event, or None."""
    from engine.ccm.intercept import WRAPPER_MARK, reads_back

    command, streams = event.command, event.output_streams()
    if streams is None or not isinstance(command, str) or WRAPPER_MARK in command or reads_back(command) \
            or _left_alone(event):
        return None
    data = stored_bytes(streams)
    if len(data) <= settings["intercept"]["bash"]["threshold_bytes"] or not settings["replace_output"]["enabled"]:
        return None
    from engine.agents.capability import takes

    if not takes(event, "replace_output", "shell"):
        return None
    return _stored(event, settings, data, command, log)


def _stored(event, settings, data, command, log):
    from engine.ccm.store import Store
    from engine.ccm.stub import render

    session = event.session or None
    store = Store(settings, log=log)
    pins = pin = None
    if session:
        from engine.ccm.pins import SessionPins

        pins = SessionPins(store, session)
        pin = pins.take()
    status = event.exit_status()
    key = store.put(data, {"tool": event.tool, "command": command, "cwd": event.cwd, "exit": status,
                           "tool_use_id": event.tool_use_id or None, "agent": event.agent.name},
                    session=session, pin=pin)
    if key is None:
        if pins is not None:
            pins.give_back()  # `ccm:pin next` waits for the next output cached
        return None  # a secret: never cached, the output stays as it is
    if pins is not None:
        pins.stored(key)
    meta = store.meta(key)
    stub = render(settings, "template", key, store, meta, status, command, event.agent)
    return {"text": stub, "command": _stub_command(key, meta, command, status)}


def _stub_command(key, meta, command, status):
    """What prints the stub again, exactly (`engine cache stub`): an agent
    that replaces an output by running a command (Gemini's tail call) runs
    it.  It names the entry's source this call stored (its index)."""
    from shlex import quote

    from engine.ccm.selfcmd import engine_argv

    index = next((i for i, src in enumerate(meta.get("sources") or ())
                  if src.get("command") == command and str(src.get("exit")) == str(status)), None)
    argv = ["cache", "stub", key] + (["--source", str(index)] if index is not None else [])
    return " ".join(quote(p) for p in engine_argv() + argv)
