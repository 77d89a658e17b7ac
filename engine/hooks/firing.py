"""Whether the engine's hooks fire for an agent: its most recent sessions
(their transcripts under the agent's home, `transcript.sessions`), and for
each whether the engine kept a record of answering in it (engine/core/
records.py, one file a session) or, failing that, whether the transcript
shows context a hook added.  Bounded: a few sessions, each transcript's
end only."""

import glob
import os
import re


def recent_sessions(agent, count):
    """The newest `count` transcript files of the agent, newest first."""
    pattern = (agent.data.get("transcript") or {}).get("sessions")
    if not pattern:
        return []
    found = []
    for path in glob.iglob(os.path.join(glob.escape(agent.home()), pattern)):
        try:
            found.append((os.stat(path).st_mtime, path))
        except OSError:
            continue
    return [p for _, p in sorted(found, reverse=True)[:count]]


def session_id(agent, path, head_bytes=65536):
    """The whole session id of a transcript file, as the agent's YAML says
    (transcript.session_id: a pattern of its path under the agent's folder,
    first group); where the name holds only its first characters
    (session_id_chars), the id its first records name."""
    spec = agent.data.get("transcript") or {}
    if spec.get("session_id_chars"):
        from engine.agents.transcripts import head_records

        try:
            for rec in head_records(spec["reader"], path, head_bytes, ("session",)):
                if rec.id:
                    return rec.id
        except (OSError, ValueError, KeyError):
            return None
    if not spec.get("session_id"):
        return os.path.splitext(os.path.basename(path))[0]
    rel = os.path.relpath(path, agent.home()).replace(os.sep, "/")
    found = re.search(spec["session_id"], rel[-4096:])
    return found.group(1) if found else None


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
    for path in recent_sessions(agent, count):
        out["sessions"] += 1
        sid = session_id(agent, path)
        rec = records.path_for(sid) if sid else None
        if rec and os.path.isfile(rec):
            out["answered"] += 1
            out["last"] = max(out["last"] or 0, int(os.stat(rec).st_mtime))
        elif _hook_context(agent, path, scan_bytes):
            out["hook_context"] += 1
    return out
