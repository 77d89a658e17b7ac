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
    """The session id of a transcript file, as the agent's YAML says to find
    it: a pattern of its path (group `session`), or a key of its first line."""
    spec = (agent.data.get("transcript") or {}).get("session_id") or {}
    if "pattern" in spec:
        found = re.search(spec["pattern"], path.replace(os.sep, "/"))
        return found.group("session") if found else None
    if "first_line_key" in spec:
        try:
            with open(path, "rb") as fh:
                first = fh.readline(head_bytes)
            import json

            value = json.loads(first.decode("utf-8", "replace")).get(spec["first_line_key"])
            return value if isinstance(value, str) else None
        except (OSError, ValueError, AttributeError):
            return None
    return None


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
