"""Whether this session's agent replaces a Bash output with a PostToolUse
`updatedToolOutput` answer.

The agent's version comes from the engine's one reader of it
(engine/core/agentversion.py: the transcript's last records, else the
hooks' environment).  The rule kept: an unknown version is not a
supported one (PostToolUse then leaves the output alone and the older
PreToolUse rewrite is used), and so is a version in a known-bad range
(`replace_output.broken_versions`).
"""

from engine.core.agentversion import of_session, parse


def supported(version, replace):
    """Does this version replace a Bash output by updatedToolOutput?"""
    v = parse(version)
    if v is None:
        return False
    if v < parse(replace["min_version"]):
        return False
    for bad in replace["broken_versions"]:
        if parse(bad["from"]) <= v <= parse(bad["to"]):
            return False
    return True


def replaces_output(event, settings):
    """True when this event's agent takes a PostToolUse updatedToolOutput for Bash."""
    replace = settings["replace_output"]
    if not replace["enabled"]:
        return False
    return supported(of_session(event.get("transcript_path")), replace)
