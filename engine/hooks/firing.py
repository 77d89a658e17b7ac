"""Whether the engine's hooks fire for an agent: its most recent sessions
(their transcripts under the agent's home, `transcript.sessions`), and for
each whether the engine kept a record of answering in it (engine/core/
records.py, one file a session) or, failing that, whether the transcript
shows context a hook added.  Bounded: a few sessions, each transcript's
end only."""

import glob
import os


def recent_sessions(agent, count):
    """The newest `count` session files of the agent, newest first (a
    subagent's file kept beside them is none: locate.is_subagents)."""
    from engine.session.locate import is_subagents

    pattern = (agent.data.get("transcript") or {}).get("sessions")
    if not pattern:
        return []
    found = []
    for path in glob.iglob(os.path.join(glob.escape(agent.home()), pattern)):
        try:
            found.append((os.stat(path).st_mtime, path))
        except OSError:
            continue
    out = []
    for _, path in sorted(found, reverse=True):
        if len(out) == count:
            break
        if not is_subagents(agent, path):
            out.append(path)
    return out


def session_id(agent, path):
    """The whole session id of a transcript file, as engine/session/locate.py
    finds it: from the file's path, or from its first records where the
    name holds only the id's first characters (session_id_chars)."""
    from engine.session.locate import head
    from engine.session.locate import session_id as from_path

    if (agent.data.get("transcript") or {}).get("session_id_chars"):
        return head(agent, path)[0]
    return from_path(agent, path)


def _hook_context(agent, path, max_bytes):
    """How many hook-added contexts the transcript's end shows."""
    from engine.agents.transcripts import backwards

    reader = (agent.data.get("transcript") or {}).get("reader")
    try:
        return sum(1 for rec in backwards(reader, path, max_bytes, kinds=("delivered",)) if rec.how == "hook")
    except (OSError, ValueError, KeyError):
        return 0


def report(agent, count, scan_bytes):
    """{"sessions": N looked at, "answered": sessions with engine records,
    "hook_context": sessions whose transcript shows hook context (of those
    without records), "last": epoch seconds of the newest answered one}."""
    from engine.core import records

    out = {"sessions": 0, "answered": 0, "hook_context": 0, "last": None}
    seen = set()
    for path in recent_sessions(agent, count):
        sid = session_id(agent, path)
        if sid and sid in seen:
            continue  # a session's other file (locate.written_last_beside): counted once
        seen.add(sid)
        out["sessions"] += 1
        rec = records.path_for(sid) if sid else None
        if rec and os.path.isfile(rec):
            out["answered"] += 1
            out["last"] = max(out["last"] or 0, int(os.stat(rec).st_mtime))
        elif _hook_context(agent, path, scan_bytes):
            out["hook_context"] += 1
    return out
