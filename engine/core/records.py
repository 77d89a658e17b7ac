"""What the engine did in a session, as its own hooks recorded it: one NDJSON
file per session under the state folder (`records` in
pipelines/settings/engine.yaml), read by `engine session report` ("what the
engine did").  Not re-simulated: a line is written by the process that made
the answer.

The rule it keeps: recording never costs an event that answers nothing (the
dispatcher writes only when the answer added text or kept an output out),
never breaks the agent (every failure is swallowed), and never holds what it
saw: a line carries the event's name, handler names and numbers, nothing of
the event's text, so there is nothing to redact.  One line is one
`os.write` on an O_APPEND descriptor, so lines of parallel hook processes
never mix; the folder is 0700 and the files 0600; past `max_bytes` a
session's file takes no more lines (the report says it is full), and files
idle for `keep_days` are removed when a session starts.

A line: {"v": 1, "t": epoch seconds, "event": name, "added": [{"handler",
"chars", "tokens"}], "kept_out": [{"handler", "bytes_before",
"bytes_after", "tokens"}]}; `tokens` are estimates (characters or bytes
divided by the per-token figures of the settings).
"""

import os
import time

from engine.base.digest import safe_key
from engine.base.files import open_append, private_dir
from engine.base.paths import state_dir_str

VERSION = 1


def settings():
    from .settings import plain

    return plain()["records"]


def folder(conf=None):
    conf = conf or settings()
    return os.path.expanduser(conf["path"].replace("{state}", state_dir_str()))


def path_for(session_id, conf=None):
    return os.path.join(folder(conf), safe_key(session_id) + ".ndjson")


def estimate(n, per_token):
    return int(round(n / per_token)) if n else 0


def injection(handler, chars, conf):
    return {"handler": handler, "chars": chars, "tokens": estimate(chars, conf["chars_per_token"])}


def kept_out(handler, before, after, conf):
    saved = max(0, before - after)
    return {"handler": handler, "bytes_before": before, "bytes_after": after,
            "tokens": estimate(saved, conf["bytes_per_token"])}


def append(session_id, event_name, added=(), kept=(), conf=None):
    """Write one line for one answering event; never raises."""
    if not session_id or not (added or kept):
        return False
    try:
        conf = conf or settings()
        where = folder(conf)
        private_dir(where)
        if event_name == "session_start":
            _prune(where, conf["keep_days"] * 86400)
        from engine.base.fastjson import dumps

        line = dumps({"v": VERSION, "t": int(time.time()), "event": str(event_name)[:64],
                      "added": list(added), "kept_out": list(kept)}) + "\n"
        fd = open_append(os.path.join(where, safe_key(session_id) + ".ndjson"))
        try:
            if os.fstat(fd).st_size + len(line) > conf["max_bytes"]:
                return False
            os.write(fd, line.encode("utf-8", "backslashreplace"))  # one write: parallel lines never mix
        finally:
            os.close(fd)
        return True
    except Exception:  # noqa: BLE001 - a record must never break the agent
        return False


def _prune(where, age):
    cutoff = time.time() - age
    try:
        names = os.listdir(where)
    except OSError:
        return
    for n in names:
        p = os.path.join(where, n)
        try:
            if n.endswith(".ndjson") and os.stat(p).st_mtime < cutoff:
                os.unlink(p)
        except OSError:
            pass


def read(session_id, conf=None):
    """(lines, full) of a session's records: the lines that parse, and
    whether the file reached max_bytes (later events went unrecorded)."""
    import json

    conf = conf or settings()
    path = path_for(session_id, conf)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(conf["max_bytes"] + 1)
    except OSError:
        return [], False
    lines = []
    for chunk in raw.split(b"\n"):
        if not chunk.strip():
            continue
        try:
            rec = json.loads(chunk.decode("utf-8", "replace"))
        except ValueError:
            continue
        if isinstance(rec, dict) and rec.get("v") == VERSION:
            lines.append(rec)
    # full: the next line of a typical size would not have fit
    return lines, len(raw) + 200 > conf["max_bytes"]


def _num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else 0


def summarize(lines, full=False):
    """The figures of one session: tokens added by handler, tokens kept
    out, and the net (added minus kept out; negative: the engine saved)."""
    by_handler, kept = {}, {"outputs": 0, "bytes_before": 0, "bytes_after": 0, "tokens": 0}
    events = 0
    for rec in lines:
        events += 1
        for a in rec.get("added") or ():
            if not isinstance(a, dict):
                continue
            row = by_handler.setdefault(str(a.get("handler", "?")), {"handler": str(a.get("handler", "?")),
                                                                    "count": 0, "chars": 0, "tokens": 0})
            row["count"] += 1
            row["chars"] += _num(a.get("chars"))
            row["tokens"] += _num(a.get("tokens"))
        for k in rec.get("kept_out") or ():
            if not isinstance(k, dict):
                continue
            kept["outputs"] += 1
            kept["bytes_before"] += _num(k.get("bytes_before"))
            kept["bytes_after"] += _num(k.get("bytes_after"))
            kept["tokens"] += _num(k.get("tokens"))
    added = sorted(by_handler.values(), key=lambda r: (-r["tokens"], r["handler"]))
    added_tokens = sum(r["tokens"] for r in added)
    return {"recorded_events": events, "added": added, "added_tokens": added_tokens,
            "added_chars": sum(r["chars"] for r in added), "kept_out": kept,
            "net_tokens": added_tokens - kept["tokens"], "records_full": bool(full)}
