"""Learned commands: a Bash command whose output was over the threshold is
remembered, per project, as its first words, so its next run is
intercepted.  Entries expire after `learned.expiry_days`.  One file per
project under learned/ in the CCM folder, updated under a lock.

A compound command (`a && b`, `a; b`, `a | b`, `a || b`, `(a)`, `{ a; }`,
backticks, `$(...)`, a newline, `&`) teaches nothing: its first words say
nothing about which part made the output large (`git add -A && git status`
is not `git add`).  Quotes are honoured: `grep 'a|b' f` is one command."""

import os
import time

# Shell syntax that joins or nests commands (the shell's grammar, not a setting).
_JOINERS = frozenset(";&|\n(){}`")


def is_compound(command):
    """Does the command hold more than one simple command?"""
    quote = None
    prev = ""
    escaped = False
    for i, ch in enumerate(command):
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote == "'":
            quote = None if ch == "'" else quote
        elif quote == '"':
            if ch == '"':
                quote = None
            elif ch == "`" or (prev == "$" and ch == "("):  # substitution runs inside double quotes too
                return True
        elif ch in "'\"":
            quote = ch
        elif ch == "&" and (prev in "<>" or command[i + 1:i + 2] == ">"):
            pass  # a redirection (2>&1, &>file), not a second command
        elif ch in _JOINERS:
            return True
        prev = "" if escaped else ch
    return False


def pattern_of(command, words):
    """What a command teaches: its first `words` words (as bash splits
    them), or "" for a compound command or one bash would split otherwise."""
    from engine.agents.permissions import words as split

    said = split(command)
    if is_compound(command) or said is None:
        return ""
    return " ".join(said[:words])


def _path(root, project):
    from engine.core.cache import sha256  # the bare C module: hashlib (OpenSSL) costs a hook milliseconds

    return os.path.join(root, "learned", sha256(project.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".json")


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

    from engine.base.files import Locked

    from .store import _atomic_write

    if not pattern:
        return  # a compound command teaches nothing
    now = time.time() if now is None else now
    path = _path(root, project)
    # the first write of the content cache may be this one: Locked makes it 0700 all the way
    with Locked(path + ".lock"):
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

    from engine.base.fastjson import loads

    try:
        with open(_path(root, project), "rb") as fh:
            data = loads(fh.read().decode("utf-8"))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return {}
    cutoff = _time.time() - expiry_days * 86400
    return {p: e for p, e in data.get("patterns", {}).items() if e.get("last_seen", 0) >= cutoff}
