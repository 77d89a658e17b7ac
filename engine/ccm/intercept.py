"""What PreToolUse does with a tool call: nothing (pass through), rewrite a
Bash command through the `engine cache run` wrapper, or deny a whole-file
Read that is too large with a note on how to read it in parts.

The mechanism, and why (docs/content-cache.md): a hook that runs the
command itself and lets the call through runs it twice, so the hook runs
nothing.  Where the session's agent replaces a shell output after it ran
(its `replace_output` answer at its version: engine/agents/capability.py,
the ccm_output handler), the call passes through untouched here: the
output is replaced after it ran, with no decision and no rewrite, never
both.  Only for an agent that cannot (an older Claude Code), or one that
cuts a large output before its hooks see it (`cut_above_bytes` in its
YAML: Codex; `failed_cut_above_bytes`: Claude Code, a command that fails),
is a shell call rewritten (a new tool input) to run inside its shell tool through the
wrapper (runner.py), which stores a large output and prints its stub: the
command runs once, under the tool's own sandbox and timeout, in the event's
folder.  A command that calls a function or alias of the agent's shell
snapshot (snapshot.py) is never rewritten: the wrapper's bash has none of
them.  That rewrite is made only where the agent's permission flow, read
as the agent reads it (permissions.py), would have run the original without
asking (engine/agents/permissions.py; an agent with no `permissions` in its
YAML is never rewritten); any doubt passes the call through, and `allow` is
answered only when an allow rule proves it.  Subagent calls always pass
through: a subagent reads in full.

This is the PreToolUse hot path: a call that passes through imports no
YAML, JSON Schema, Jinja2, tokenizer, Redis or zstd, and no `re`.
"""

import os

from .learned import starts_with

WRAPPER_MARK = " cache run "
# The engine's own read-back (what every stub tells the model to run:
# `ENGINE cache show KEY`, and Gemini CLI's tail call `ENGINE cache stub
# KEY`): its output is what the model asked to read, so it is never cached,
# replaced, learned or rewritten again (a stub for a read-back would send
# the model round the same stub for ever).  The engine is named by its
# script (`.../bin/engine`, quoted or not) or as the module `engine.cli`.
READ_BACK = ("show", "stub")


def decide(event, settings, post_replaces=True, log=None):
    """The neutral tool decision ({decision, reason, input}) for this
    pre_tool event (engine/agents/event.py), or None to pass.
    `post_replaces`: the profile runs a ccm_output handler after tool calls;
    `log`: the hook log (a learned file not read is said there)."""
    from engine.agents.event import as_event

    event = as_event(event)
    if event.subagent:
        return None
    if event.tool_kind == "shell":
        return _shell(event, settings, post_replaces, log)
    if event.tool_kind == "read":
        return _read(event, settings)
    return None


def reads_back(command):
    """Does the shell command run the engine's read-back of a cached output
    (`ENGINE cache show|stub`, anywhere in it: `| head` after it reads the
    same bytes)?  Words, no `re`: the PreToolUse hot path."""
    if " cache " not in command and "\tcache" not in command:
        return False
    words = command.split()
    return any(words[i] == "cache" and words[i + 1] in READ_BACK and _names_engine(words[i - 1])
               for i in range(1, len(words) - 1))


def _names_engine(word):
    name = word.strip("'\"")
    return name in ("engine", "engine.cli") or name.endswith("/engine")


def wanted(command, cwd, settings, log=None):
    """Is this command one to intercept (listed or learned, not pass-through)?"""
    bash = settings["intercept"]["bash"]
    if not command.strip() or WRAPPER_MARK in command or reads_back(command) \
            or starts_with(command, bash["pass_through"]):
        return False
    if starts_with(command, bash["commands"]):
        return True
    if cwd:
        from .config import folder
        from .learned import read_fast
        from .origin import project_of

        learned = read_fast(folder(settings), project_of(cwd), settings["learned"], log)
        return starts_with(command, list(learned))
    return False


def _shell(event, settings, post_replaces=True, log=None):
    command, agent = event.command, event.agent
    background = agent.tools("shell").get("background")
    if not isinstance(command, str) or (background and event.tool_input.get(background)):
        return None
    if agent.answer("decision") is None:
        return None  # the agent takes no new tool input
    cwd = event.cwd
    if not wanted(command, cwd, settings, log):
        return None
    icpt = settings["intercept"]
    policy = icpt["modes"].get(event.permission_mode or icpt["mode_when_unnamed"], icpt["unlisted_mode"])
    if policy == "pass":
        return None
    if post_replaces and not cuts_before_the_hook(agent):
        from engine.agents.capability import takes

        if takes(event, "replace_output", "shell", at="post_tool"):
            return None  # replaced after it ran: no rewrite, no decision
    from .snapshot import calls_snapshot_name

    if calls_snapshot_name(command, settings, agent.home()):
        return None  # the wrapper's shell would not have the agent's function or alias
    verdict = _verdict(agent, command, policy)
    if verdict == "no":
        return None
    field = agent.tools("shell")["command"]
    new_input = dict(event.tool_input, **{field: wrapped(command, cwd, event.session, event.tool_use_id)})
    if verdict == "yes" and policy == "rewrite":
        return {"input": new_input}
    if verdict == "yes" and agent.takes_decision("allow"):
        return {"decision": "allow", "input": new_input,
                "reason": "allowed by your rules; output over the threshold is cached"}
    if verdict != "yes" and icpt["unsure"] == "ask" and agent.takes_decision("ask"):
        return {"decision": "ask", "input": new_input,
                "reason": "routed through engine cache run (large output is cached)"}
    return None


def cuts_before_the_hook(agent):
    """Whether the agent cuts a large shell output, or a failed call's,
    before its hook sees it (`cut_above_bytes`, `failed_cut_above_bytes`
    of its shell output): only the wrapper keeps such an output whole."""
    output = agent.tools("shell").get("output") or {}
    return "cut_above_bytes" in output or "failed_cut_above_bytes" in output


def cuts_only_failures(agent):
    """Whether the agent cuts only a failed call's output (`failed_cut_above_bytes`)."""
    output = agent.tools("shell").get("output") or {}
    return "failed_cut_above_bytes" in output and "cut_above_bytes" not in output


def _verdict(agent, command, policy):
    """Would the agent have run `command` without asking?  From its
    permission rules where its YAML says where they are; else only in a mode
    that runs everything (the profile's `modes`: rewrite)."""
    if "permissions" not in agent.data:
        return "yes" if policy == "rewrite" else "no"
    from engine.agents.permissions import runs_without_asking

    return runs_without_asking(agent, command, policy)


def engine_command():
    from .selfcmd import engine_argv

    return engine_argv()


def wrapped(command, cwd, session, tool_use_id):
    from shlex import quote

    parts = engine_command() + ["cache", "run"]
    # NAME=VALUE, one word each: a value the agent chose ("-x1", "--") is
    # never read as an option or as the end of the options
    for name, value in (("--cwd", cwd), ("--session", session), ("--tool-use-id", tool_use_id)):
        if value:
            parts.append(f"{name}={value}")
    return " ".join(quote(p) for p in parts + ["--", command])


def _read(event, settings):
    """Deny a whole-file read that is too large, where the agent's read tool
    can read a part (`range` in its YAML) and the agent takes a decision."""
    ranges = event.agent.tools("read").get("range")
    paths = event.file_paths(("read",))
    if not ranges or not paths or not event.agent.takes_decision("deny"):
        return None
    path = paths[0]
    if any(event.tool_input.get(f) is not None for f in ranges):
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
    limit = read["suggest_limit"]
    how = event.agent.tools("read")["read_in_parts"].replace("{limit}", str(limit))
    reason = settings["stub"]["read_template"].format(path=path, bytes=st.st_size, threshold=read["threshold_bytes"],
                                                       limit=limit, how=how)
    return {"decision": "deny", "reason": reason}
