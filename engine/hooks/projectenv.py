"""A project's variables are not the user's.

The engine takes its environment variables (engine/base/paths.py
USER_VARIABLES, and each agent's home folder variable) as the user's own:
they choose the profile, where state and caches are written, the Redis
server, whether the hooks run at all.  But an agent may put a project's
variables into its hooks' environment (Claude Code's settings `env`, Gemini
CLI's `.env`: engine/agents/projectenv.py), and a repository is written by
someone else.  So before a hook reads any of them, each one the project's
files name is dropped from its environment: the hook runs as if the user
had not set it (the defaults, the user's own files).  When a file could name
anything (too large to read here, not JSON), every one is dropped.

This runs first, before the deadline is armed: it reads the built-in agent
facts (only read, never written, from a cache folder not yet known to be the
user's: table.agents(settle=False)) and at most a few of the project's
files, each bounded (read_regular).
"""

import os

from engine.base.paths import USER_VARIABLES, working_folder

# What this process's guard dropped, with the values it had: the command
# `engine cache run` wraps still gets them (received()), as the agent's
# shell gave them to it; only the engine itself ignores them.
_dropped: dict[str, str] = {}


def guard(agent_name=None, cwd=None):
    """Drop from os.environ the engine's variables the project set for the
    hooks of `agent_name` (the default agent when None); return their names
    (sorted; [] in the usual case, where none is set)."""
    from engine.agents import DEFAULT_AGENT, table

    docs = table.agents(settle=False)
    doc = docs.get(agent_name or DEFAULT_AGENT)
    return _settled(_drop(docs, [doc] if doc is not None else [], cwd))


def guard_any(cwd=None):
    """The same for a command an agent's shell may run (a stub's read-back,
    Gemini's tail call): the files of every agent that takes a project's
    variables count, as the command does not know which agent runs it."""
    from engine.agents import table

    docs = table.agents(settle=False)
    return _settled(_drop(docs, list(docs.values()), cwd))


def _settled(dropped):
    """`dropped`, once the agent table is kept in the cache folder now known
    to be the user's (its copy written if it was missing)."""
    from engine.agents import table

    table.agents()
    return dropped


def _drop(docs, chosen, cwd):
    set_here = [n for n in engine_variables(docs) if n in os.environ]
    if not set_here:
        return []
    from engine.agents.projectenv import ANY

    names = set()
    for doc in chosen:
        found = _declared(doc, cwd)
        if found is ANY:
            names = ANY
            break
        names |= found
    dropped = sorted(n for n in set_here if names is ANY or n in names)
    for name in dropped:
        _dropped[name] = os.environ.pop(name)
    return dropped


def received():
    """The environment this process was given, before the guard dropped the
    project's variables: the one a command run on the agent's behalf gets."""
    return {**os.environ, **_dropped}


def engine_variables(docs):
    """The variables the engine reads as the user's: its own, each agent's
    home folder variable, and each agent's version variable (`version.env`:
    it chooses which answers the agent is sent, so a project must not)."""
    homes = [d["home"]["env"] for d in docs.values() if d["home"].get("env")]
    versions = [d["version"]["env"]["variable"] for d in docs.values() if (d.get("version") or {}).get("env")]
    return [*USER_VARIABLES, *homes, *versions]


def _declared(doc, cwd):
    from engine.agents.projectenv import declared
    from engine.agents.spec import Agent

    root = os.environ.get(doc["project_env"]) if doc.get("project_env") else None
    return declared(Agent(doc), [root, cwd or working_folder()], os.path.expanduser("~"))


def named(agent, project):
    """For `engine doctor`: the engine's variables the project's files set
    for `agent`'s hooks (which the hooks ignore), sorted; None when a file
    may name any of them."""
    from engine.agents import table
    from engine.agents.projectenv import ANY

    found = _declared(agent.data, project)
    if found is ANY:
        return None
    return sorted(n for n in engine_variables(table.agents()) if n in found)


def note(dropped, log):
    """One hook log line saying what was dropped and why."""
    if dropped:
        log(said(dropped, "the hooks"))


def said(dropped, what):
    return f"this project's agent settings set {', '.join(dropped)} for {what}: the project's, not yours; ignored"
