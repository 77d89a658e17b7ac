"""Which agent wrote a transcript: the one named (`--agent NAME`), else the
one whose reader recognises the file's first lines
(engine/agents/transcripts.detect), else Claude Code, the agent the engine
served first.  Used by `engine session report`, `engine replay` and the
tool memory's scan alike; and a call of the transcript as that agent's
hooks name it (`hook_call`).
"""

from engine.base.errors import UserError


def named(name):
    """The Agent (engine/agents/spec.py) of a built-in agent's name; a
    UserError listing the names for any other."""
    from engine.agents import table

    try:
        return table.get(name)
    except KeyError:
        raise UserError(f"no agent named {name!r}; give one of {', '.join(table.names())}") from None


def of_reader(reader):
    """The first built-in agent (by name) whose transcripts that reader reads."""
    from engine.agents import table

    for name in table.names():
        agent = table.get(name)
        if agent.data["transcript"]["reader"] == reader:
            return agent
    return None


def for_transcript(path, name=None, strict=False):
    """The Agent of a transcript: named, detected, or the default.  With
    `strict` (a command the user gave --agent), a name whose reader is not
    the one the file's lines show is a UserError: read by another agent's
    reader, the file would give an empty report, silently."""
    from engine.agents import DEFAULT_AGENT
    from engine.agents.transcripts import detect

    chosen = (named(name) if isinstance(name, str) else name) if name else None  # a name, or an Agent already
    if chosen is not None and not strict:
        return chosen
    reader = detect(path)
    agent = of_reader(reader) if reader else None
    if chosen is not None:
        if agent is not None and chosen.data["transcript"]["reader"] != reader:
            raise UserError(f"this is a transcript of {agent.name}, not of {chosen.name}; drop --agent (the agent "
                            f"is found from the file) or name the agent that wrote it", path)
        return chosen
    return agent or named(DEFAULT_AGENT)


def hook_call(agent, name, tool_input):
    """(tool name, input) of a transcript's call as the agent's hooks get
    it: where the transcript names the tool otherwise (the tool kind's
    `hook_name`), its name and input fields become the hooks'
    (`transcript_fields`)."""
    kind = agent.tool_kind(name)
    spec = agent.tools(kind) if kind else {}
    hook_name = spec.get("hook_name")
    if not hook_name or name == hook_name:
        return name, tool_input
    renames = spec["transcript_fields"]
    if isinstance(tool_input, dict):
        tool_input = {renames.get(k, k): v for k, v in tool_input.items()}
    return hook_name, tool_input
