"""Whether a session's agent takes one kind of answer, at its version.

An answer kind with `since` (pipelines/agents/<agent>.yaml) is taken only by
a version at least that, and not in one of its `broken` ranges; the version
comes from the one reader (version.py).  The rule kept: an unknown version
is not a supported one where a `since` is given (the engine then does what
an older agent needs), and a known-bad range is not either.
"""

from .version import of_session, parse


def supported(spec, version):
    """Does this version take the answer `spec` declares?"""
    if not spec.get("since") and not spec.get("broken"):
        return True
    v = parse(version)
    if v is None:
        return False
    if spec.get("since") and v < parse(spec["since"]):
        return False
    return not any(parse(bad["from"]) <= v <= parse(bad["to"]) for bad in spec["broken"])


def takes(event, what, tool_kind=None, at=None):
    """Does the agent of `event` (event.Event) take answer `what` at this
    event, or at the event `at` of the same session (a pre_tool asking about
    its post_tool), and for a tool of `tool_kind` where the answer names
    tools?"""
    if not event.agent.answers_at(what, at or event.kind):
        return False
    spec = event.agent.answer(what)
    if tool_kind is not None and spec.get("tools") and tool_kind not in spec["tools"]:
        return False
    if not spec.get("since") and not spec.get("broken"):
        return True
    return supported(spec, of_session(event.agent, event.transcript))
