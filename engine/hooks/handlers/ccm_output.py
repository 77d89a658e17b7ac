"""ccm_output (PostToolUse on Bash): a Bash output over the threshold is
stored in the content cache and replaced, for the model, by its stub through
`updatedToolOutput` in Bash's own output shape ({stdout, stderr,
interrupted, isImage}).  The command already ran once, untouched, in the
agent's own Bash tool: no permission decision, no rewrite.

The rule kept: the output is replaced only when it can be, and only when
nothing is lost.  Only where the session's agent version takes the answer
(engine/ccm/agentversion.py: at least `replace_output.min_version`, not in
a known-bad range); never for a subagent's call (a subagent reads in full),
nor a call the PreToolUse wrapper already handled, nor an output the agent
keeps out itself (`persistedOutputPath`: its `<persisted-output>` answer
stays) or that is not plain text (`replace_output.leave_alone` keys,
`isImage`); never for output holding a secret (Store.put refuses it).  Any
output over `intercept.bash.threshold_bytes` qualifies, listed or not.

What is stored: stdout, then stderr (a newline between them when stdout
does not end with one), as the model would have read them; `engine cache
show KEY` prints exactly that back.
"""

from .part import Part


class CcmOutput:
    def __init__(self, spec, settings, registry):
        self.name = spec["name"]

    def due(self, ctx):
        e = ctx.event
        return (e.get("hook_event_name") == "PostToolUse" and e.get("tool_name") == "Bash"
                and not e.get("agent_id") and isinstance(e.get("tool_response"), dict))

    def parts(self, ctx):
        from engine.ccm import config

        settings = config.load()
        out = replacement(ctx.event, settings, ctx.log)
        return [Part(self.name, tool_output=out)] if out else []


def _text(value):
    return value if isinstance(value, str) else ""


def stored_bytes(resp):
    """The bytes kept for a Bash tool_response: stdout, then stderr."""
    stdout, stderr = _text(resp.get("stdout")), _text(resp.get("stderr"))
    sep = "\n" if stdout and stderr and not stdout.endswith("\n") else ""
    return (stdout + sep + stderr).encode("utf-8", "surrogatepass")


def replacement(event, settings, log=None):
    """The updatedToolOutput for this PostToolUse event, or None."""
    from engine.ccm.intercept import WRAPPER_MARK

    resp = event.get("tool_response")
    command = (event.get("tool_input") or {}).get("command")
    if not isinstance(resp, dict) or not isinstance(command, str) or WRAPPER_MARK in command:
        return None
    replace = settings["replace_output"]
    if resp.get("isImage") or any(resp.get(k) for k in replace["leave_alone"]):
        return None
    data = stored_bytes(resp)
    if len(data) <= settings["intercept"]["bash"]["threshold_bytes"]:
        return None
    from engine.ccm.agentversion import replaces_output

    if not replaces_output(event, settings):
        return None
    from engine.ccm.store import Store
    from engine.ccm.stub import render

    session = str(event.get("session_id") or "") or None
    store = Store(settings, log=log)
    pins = pin = None
    if session:
        from engine.ccm.pins import SessionPins

        pins = SessionPins(store, session)
        pin = pins.take()
    # PostToolUse fires for a call that succeeded; an exit code the agent
    # interprets as no error (diff's 1) comes with its interpretation.
    status = _text(resp.get("returnCodeInterpretation")) or "0"
    key = store.put(data, {"tool": "Bash", "command": command, "cwd": event.get("cwd") or "", "exit": status,
                           "tool_use_id": event.get("tool_use_id")}, session=session, pin=pin)
    if key is None:
        return None  # a secret: never cached, the output stays as it is
    if pins is not None:
        pins.stored(key)
    stub = render(settings, "template", key, store, store.meta(key), status, command)
    return {"stdout": stub, "stderr": "", "interrupted": bool(resp.get("interrupted")), "isImage": False}
