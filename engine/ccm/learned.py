"""Learned commands: a Bash command whose output was over the threshold is
remembered, per project, as its first words, so its next run is
intercepted.  Entries expire after `learned.expiry_days`.  One file per
project under learned/ in the CCM folder, updated under a lock."""

import fcntl
import os
import time


def pattern_of(command, words):
    return " ".join(command.split()[:words])


def _path(root, project):
    from ..cache import sha256  # the bare C module: hashlib (OpenSSL) costs a hook milliseconds

    return os.path.join(root, "learned", sha256(project.encode()).hexdigest()[:32] + ".json")


def read(root, project, expiry_days, now=None):
    import json

    now = time.time() if now is None else now
    try:
        with open(_path(root, project), "rb") as fh:
            data = json.loads(fh.read())
    except (FileNotFoundError, ValueError):
        return {}
    cutoff = now - expiry_days * 86400
    return {p: e for p, e in data.get("patterns", {}).items() if e.get("last_seen", 0) >= cutoff}


def learn(root, project, pattern, size, expiry_days, now=None):
    import json

    from .store import _atomic_write

    now = time.time() if now is None else now
    path = _path(root, project)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    lock = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with open(path, "rb") as fh:
                data = json.loads(fh.read())
        except (FileNotFoundError, ValueError):
            data = {"project": project, "patterns": {}}
        cutoff = now - expiry_days * 86400
        pats = {p: e for p, e in data.get("patterns", {}).items() if e.get("last_seen", 0) >= cutoff}
        e = pats.setdefault(pattern, {"first_seen": now, "count": 0, "max_bytes": 0})
        e["last_seen"] = now
        e["count"] += 1
        e["max_bytes"] = max(e["max_bytes"], size)
        data["patterns"] = pats
        _atomic_write(path, json.dumps(data, sort_keys=True).encode())
    finally:
        os.close(lock)


def all_projects(root, expiry_days):
    import json

    folder = os.path.join(root, "learned")
    out = {}
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return out
    for n in names:
        if not n.endswith(".json"):
            continue
        try:
            with open(os.path.join(folder, n), "rb") as fh:
                project = json.loads(fh.read()).get("project")
        except (OSError, ValueError):
            continue
        if project:
            out[project] = read(root, project, expiry_days)
    return out


def read_fast(root, project, expiry_days):
    """`read` for the PreToolUse hot path: no json module (it imports re)."""
    import time as _time

    from ..hooks.fastjson import loads

    try:
        with open(_path(root, project), "rb") as fh:
            data = loads(fh.read().decode("utf-8"))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return {}
    cutoff = _time.time() - expiry_days * 86400
    return {p: e for p, e in data.get("patterns", {}).items() if e.get("last_seen", 0) >= cutoff}
