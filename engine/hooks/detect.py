"""Which coding agents this machine has: an agent is found when one of its
commands (`commands:` in its YAML) is on the PATH, or its home folder
exists (`home:`; a user who ran it once has one)."""

import os
import shutil


def where(agent, environ=None):
    """(the command's path or None, the home folder or None) of one agent."""
    env = os.environ if environ is None else environ
    path = env.get("PATH", os.defpath)
    command = next((found for c in agent.data["commands"] if (found := shutil.which(c, path=path))), None)
    home = agent.home(env)
    return command, (home if os.path.isdir(home) else None)


def found(environ=None):
    """The Agents (engine/agents/spec.py) found, in the order of their names."""
    from engine.agents.table import get, names

    out = []
    for name in names():
        agent = get(name)
        if any(where(agent, environ)):
            out.append(agent)
    return out
