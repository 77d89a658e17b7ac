"""What PreToolUse does with a tool call: nothing (pass through), rewrite a
Bash command through the `engine cache run` wrapper, or deny a whole-file
Read that is too large with a note on how to read it in parts.

The mechanism, and why (README "Content cache"): a hook that runs the
command itself and lets the call through runs it twice, so the hook runs
nothing.  Where the session's agent replaces a Bash output by a PostToolUse
`updatedToolOutput` answer (agentversion.py, the ccm_output handler), the
call passes through untouched here: the output is replaced after it ran,
with no decision and no rewrite, never both.  Only for older agents is a
Bash call rewritten (`updatedInput`) to run inside the Bash tool through the
wrapper (runner.py), which stores a large output and prints its stub: the
command runs once, under the tool's own sandbox and timeout, in the event's
folder.  A command that calls a function or alias of the agent's shell
snapshot (snapshot.py) is never rewritten: the wrapper's bash has none of
them.  That rewrite is made only where the agent's permission flow, read
as the agent reads it (permissions.py), would have run the original without
asking; any doubt passes the call through, and `allow` is answered only
when an allow rule proves it.  Subagent calls (`agent_id`) always pass
through: a subagent reads in full.

This is the PreToolUse hot path: a call that passes through imports no
YAML, JSON Schema, Jinja2, tokenizer, Redis or zstd, and no `re`.
"""

import os

WRAPPER_MARK = " cache run "


def decide(event, settings, post_replaces=True):
    """The tool_decision dict for this PreToolUse event, or None to pass.
    `post_replaces`: the profile runs a ccm_output handler at PostToolUse."""
    if event.get("agent_id"):
        return None
    tool = event.get("tool_name")
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    if tool == "Bash":
        return _bash(event, tool_input, settings, post_replaces)
    if tool == "Read":
        return _read(tool_input, settings)
    return None


def _starts_with(command, patterns):
    words = command.split()
    for p in patterns:
        pw = p.split()
        if pw and words[:len(pw)] == pw:
            return True
    return False


def wanted(command, cwd, settings):
    """Is this command one to intercept (listed or learned, not pass-through)?"""
    bash = settings["intercept"]["bash"]
    if not command.strip() or WRAPPER_MARK in command or _starts_with(command, bash["pass_through"]):
        return False
    if _starts_with(command, bash["commands"]):
        return True
    if cwd:
        from .config import folder
        from .learned import read_fast

        learned = read_fast(folder(settings), cwd, settings["learned"]["expiry_days"])
        return _starts_with(command, list(learned))
    return False


def _bash(event, tool_input, settings, post_replaces=True):
    command = tool_input.get("command")
    if not isinstance(command, str) or tool_input.get("run_in_background"):
        return None
    cwd = event.get("cwd") or ""
    if not wanted(command, cwd, settings):
        return None
    icpt = settings["intercept"]
    policy = icpt["modes"].get(str(event.get("permission_mode") or "default"), "pass")
    if policy == "pass":
        return None
    if post_replaces:
        from .agentversion import replaces_output

        if replaces_output(event, settings):
            return None  # replaced at PostToolUse after it ran: no rewrite, no decision
    from .permissions import config_dir, runs_without_asking
    from .snapshot import calls_snapshot_name

    if calls_snapshot_name(command, settings, config_dir()):
        return None  # the wrapper's bash would not have the agent's function or alias
    verdict = runs_without_asking(command, cwd, policy)
    if verdict == "no":
        return None
    new_input = dict(tool_input, command=wrapped(command, cwd, event.get("session_id"), event.get("tool_use_id")))
    if verdict == "yes" and policy == "rewrite":
        return {"updatedInput": new_input}
    if verdict == "yes":
        return {"permissionDecision": "allow", "updatedInput": new_input,
                "permissionDecisionReason": "allowed by your rules; output over the threshold is cached"}
    if icpt["unsure"] == "ask":
        return {"permissionDecision": "ask", "updatedInput": new_input,
                "permissionDecisionReason": "routed through engine cache run (large output is cached)"}
    return None


def engine_command():
    from .selfcmd import engine_argv

    return engine_argv()


def wrapped(command, cwd, session, tool_use_id):
    from shlex import quote

    parts = engine_command() + ["cache", "run"]
    if cwd:
        parts += ["--cwd", cwd]
    if session:
        parts += ["--session", str(session)]
    if tool_use_id:
        parts += ["--tool-use-id", str(tool_use_id)]
    return " ".join(quote(p) for p in parts + ["--", command])


def _read(tool_input, settings):
    path = tool_input.get("file_path")
    if not isinstance(path, str) or tool_input.get("offset") is not None or tool_input.get("limit") is not None:
        return None
    read = settings["intercept"]["read"]
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    import stat

    if not stat.S_ISREG(st.st_mode) or st.st_size <= read["threshold_bytes"]:
        return None
    from fnmatch import fnmatchcase

    name = os.path.basename(path)
    if any(fnmatchcase(name, p) for p in read["bypass"]):
        return None
    reason = settings["stub"]["read_template"].format(path=path, bytes=st.st_size, threshold=read["threshold_bytes"],
                                                       limit=read["suggest_limit"])
    return {"permissionDecision": "deny", "permissionDecisionReason": reason}
