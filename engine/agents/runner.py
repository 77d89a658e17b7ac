"""Which agent runs a hook.  An agent may run hooks written for another one,
in that agent's words: a hook command named for one agent is then run by
another, and what the engine would make of it (whose transcript, which
answer shape, whose records) is wrong.  Each agent's YAML names the variable
it sets for every hook it runs (`hook_env`, measured).

Such a variable counts only when it is the agent's: where a project's files
that an agent puts into its hooks' environment (projectenv.py) name it, it
tells nothing, so a repository cannot make the engine's hooks stay out of a
session.  Those files are read only on that rare path, never on a usual
event."""

import os

from . import table


def other_runner(agent, environ=None, cwd=None):
    """The name of the agent that runs this hook when it is not `agent` (an
    Agent): that agent's variable is set, and not by the project, and
    `agent`'s own is not.  None when `agent`'s own is set, or when nothing
    tells (an agent that declares no variable, or none set)."""
    environ = os.environ if environ is None else environ
    own = agent.data.get("hook_env")
    if not own or own in environ:
        return None
    docs = table.agents()
    for name, doc in docs.items():
        var = doc.get("hook_env")
        if name != agent.name and var and var in environ and not _named_by_project(var, docs, environ, cwd):
            return name
    return None


def _named_by_project(var, docs, environ, cwd):
    """Whether a project's file that an agent puts into its hooks'
    environment names `var` (or may name anything)."""
    from engine.base.paths import working_folder

    from .projectenv import ANY, declared
    from .spec import Agent

    folder = cwd or working_folder()
    for doc in docs.values():
        root = environ.get(doc["project_env"]) if doc.get("project_env") else None
        names = declared(Agent(doc), [root, folder], os.path.expanduser("~"))
        if names is ANY or var in names:
            return True
    return False
