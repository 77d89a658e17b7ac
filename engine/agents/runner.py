"""Which agent runs a hook.  An agent may run hooks written for another one,
in that agent's words: a hook command named for one agent is then run by
another, and what the engine would make of it (whose transcript, which
answer shape, whose records) is wrong.  Each agent's YAML names the variable
it sets for every hook it runs (`hook_env`, measured)."""

import os

from . import table


def other_runner(agent, environ=None):
    """The name of the agent that runs this hook when it is not `agent` (an
    Agent): that agent's variable is set and `agent`'s own is not.  None when
    `agent`'s own is set, or when nothing tells (an agent that declares no
    variable, or none set)."""
    environ = os.environ if environ is None else environ
    own = agent.data.get("hook_env")
    if not own or own in environ:
        return None
    for name, doc in table.agents().items():
        var = doc.get("hook_env")
        if name != agent.name and var and var in environ:
            return name
    return None
