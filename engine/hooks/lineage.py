"""The session a subagent's subagent belongs to.

An agent that gives a subagent's events the subagent's own id names the
session in `parent_session` (its YAML says which payload field).  For a
subagent started by another subagent that field names the parent subagent,
which is no session (measured with Copilot CLI 1.0.102, a task inside a
task: tests/support/AGENTS-MEASURED.md "Subagents"; its start names a
session of its own).  So at each subagent's start, for such an agent, the engine notes
which session the subagent belongs to, in a small file beside the session
states (pruned with them); an event whose parent is a subagent noted so
belongs to that session.

Ids come from the agent's payload; a note is read bounded and taken only
when it is one line of at most MAX_ID characters.
"""

import os

MAX_ID = 256
SUFFIX = ".session"


def _path(subagent):
    from engine.base.digest import safe_key

    from .state import _sessions_dir

    return os.path.join(_sessions_dir(), safe_key(subagent) + SUFFIX)


def _declares_parents(event):
    return bool(event.agent.data["payload"].get("parent_session"))


def settle(event):
    """Make `event` the event of the session its parent belongs to, when
    its parent is a subagent noted at its start."""
    parent = event.field("parent_session")
    if not isinstance(parent, str) or not parent or not _declares_parents(event):
        return
    from engine.base.files import open_regular

    try:
        with open_regular(_path(parent)) as fh:  # never waited on: a FIFO there is no note
            raw = fh.read(MAX_ID + 1)
    except (OSError, ValueError):
        return
    root = raw.decode("utf-8", "replace")
    if 0 < len(root) <= MAX_ID and root.isprintable():
        event.root_session = root


def note(event):
    """At a subagent's start: the session it belongs to, for the events of
    the subagents it may start."""
    sub = event.field("subagent")
    session = event.session
    if not (isinstance(sub, str) and sub and session and sub != session and _declares_parents(event)):
        return
    if len(session) > MAX_ID or not session.isprintable():
        return
    from engine.base.files import replace_atomic

    try:
        os.makedirs(os.path.dirname(_path(sub)), mode=0o700, exist_ok=True)
        replace_atomic(_path(sub), session.encode("utf-8", "surrogatepass"))
    except OSError:
        pass  # its subagents' events keep a state of their own
