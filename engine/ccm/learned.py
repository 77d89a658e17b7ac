"""Learned commands: a Bash command whose output was over the threshold is
remembered, per project, as its first words, so its next run is
intercepted.  Entries expire after `learned.expiry_days`.  One file per
project under learned/ in the CCM folder, updated under a lock and replaced
atomically.

The file is bounded (`learned.max_entries`, `learned.max_bytes`): a write
keeps the most recently learned entries that fit both (the least recently
learned go first; an intercepted command's next large output learns it
again), and a read never
reads a file over `max_bytes` (an older version's, or one from before the
bound was lowered): it is taken as holding nothing (the PreToolUse hook
logs that once), and the next write replaces it with one within bounds.

A compound command (`a && b`, `a; b`, `a | b`, `a || b`, `(a)`, `{ a; }`,
backticks, `$(...)`, a newline, `&`) teaches nothing: its first words say
nothing about which part made the output large (`git add -A && git status`
is not `git add`).  Quotes are honoured: `grep 'a|b' f` is one command."""

import os
import time

# Shell syntax that joins or nests commands (the shell's grammar, not a setting).
_JOINERS = frozenset(";&|\n(){}`")
# Beside a learned file over the bound: the hook log said so already.
_SAID = ".over-logged"


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


def starts_with(command, patterns):
    """Does the command's first words match one of the patterns' words?"""
    words = command.split()
    for p in patterns:
        pw = p.split()
        if pw and words[:len(pw)] == pw:
            return True
    return False


def learn_command(settings, cwd, command, size):
    """Learn a shell command whose output was `size` bytes for the project
    of `cwd`, if it was over the Bash threshold and is not a pass-through
    one; its words are learned unless compound or holding a secret (the
    file would keep it).  True when the output was one to learn from."""
    from .config import folder
    from .origin import project_of

    bash = settings["intercept"]["bash"]
    if size <= bash["threshold_bytes"] or starts_with(command, bash["pass_through"]):
        return False
    pattern = pattern_of(command, settings["learned"]["words"])
    if pattern and not holds_secret(pattern, settings):
        # per project, as the cache's entries are: a command learned in svc/ is large in the root too
        learn(folder(settings), project_of(cwd), pattern, size, settings["learned"])
    return True


def holds_secret(text, settings):
    from .secrets import Secrets

    return Secrets(settings).found_in(text)


def _path(root, project):
    from engine.core.cache import sha256  # the bare C module: hashlib (OpenSSL) costs a hook milliseconds

    return os.path.join(root, "learned", sha256(project.encode("utf-8", "surrogatepass")).hexdigest()[:32] + ".json")


def _bytes(path, max_bytes):
    """The learned file's bytes; b"" when there is none; None when it is
    over `max_bytes` (seen by its size: nothing of it is read)."""
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size > max_bytes:
                return None
            return fh.read(max_bytes)
    except FileNotFoundError:
        return b""


def _recent(data, expiry_days, now):
    """The entries of a learned document not expired at `now`."""
    cutoff = now - expiry_days * 86400
    return {p: e for p, e in data.get("patterns", {}).items() if e.get("last_seen", 0) >= cutoff}


def read(root, project, conf, now=None):
    """The project's learned entries (`conf`: the settings' `learned`)."""
    import json

    raw = _bytes(_path(root, project), conf["max_bytes"])
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return _recent(data, conf["expiry_days"], time.time() if now is None else now)


def learn(root, project, pattern, size, conf, now=None):
    """Remember `pattern` as large for the project (`conf`: the settings'
    `learned`); the file keeps the most recently learned entries within its bounds."""
    import json

    from engine.base.files import Locked

    from .store import _atomic_write

    if not pattern:
        return  # a compound command teaches nothing
    now = time.time() if now is None else now
    path = _path(root, project)
    # the first write of the content cache may be this one: Locked makes it 0700 all the way
    with Locked(path + ".lock"):
        raw = _bytes(path, conf["max_bytes"])  # an oversized file is rebuilt from this entry alone
        try:
            pats = _recent(json.loads(raw), conf["expiry_days"], now) if raw else {}
        except ValueError:
            pats = {}
        e = pats.setdefault(pattern, {"first_seen": now, "count": 0, "max_bytes": 0})
        e["last_seen"] = now
        e["count"] += 1
        e["max_bytes"] = max(e["max_bytes"], size)
        head = len(json.dumps({"patterns": {}, "project": project}, sort_keys=True))
        data = {"project": project, "patterns": _bounded(pats, head, conf)}
        _atomic_write(path, json.dumps(data, sort_keys=True).encode())
        _forget_said(path)


def _bounded(pats, head, conf):
    """At most `conf["max_entries"]` entries, the most recently learned
    first, each kept while it fits in `conf["max_bytes"]` with `head` bytes
    for the rest of the file (one too long to fit drops no older one)."""
    import json

    room = conf["max_bytes"] - head
    kept = {}
    for p, e in sorted(pats.items(), key=lambda pe: pe[1].get("last_seen", 0), reverse=True)[:conf["max_entries"]]:
        size = len(json.dumps({p: e}, sort_keys=True))  # its bytes in the file, with a separator
        if size <= room:
            kept[p] = e
            room -= size
    return kept


def all_projects(root, conf):
    """Every project's learned entries (`conf`: the settings' `learned`)."""
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
            project = json.loads(_bytes(os.path.join(folder, n), conf["max_bytes"]) or b"{}").get("project")
        except (OSError, ValueError):
            continue
        if project:
            out[project] = read(root, project, conf)
    return out


def read_fast(root, project, conf, log=None):
    """`read` for the PreToolUse hot path: no json module (it imports re).
    A file over the bound is not read: nothing learned, said to `log` once."""
    import time as _time

    from engine.base.fastjson import loads

    path = _path(root, project)
    raw = _bytes(path, conf["max_bytes"])
    if raw is None:
        _say_once(path, log, f"learned commands not read: {path} is over learned.max_bytes ({conf['max_bytes']}); "
                             "the next command learned for this project rebuilds it")
        return {}
    try:
        data = loads(raw.decode("utf-8")) if raw else {}
    except (ValueError, UnicodeDecodeError):
        return {}
    return _recent(data, conf["expiry_days"], _time.time())


def _say_once(path, log, message):
    """Log `message` unless it was said about this file already (a marker
    beside it, made with O_EXCL: one of parallel hooks says it; the next
    write of the file removes the marker)."""
    from engine.base.files import open_private

    if log is None:
        return
    try:
        os.close(open_private(path + _SAID, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
    except OSError:
        return  # said already (or the folder refuses it: say nothing rather than every time)
    log(message)


def _forget_said(path):
    try:
        os.unlink(path + _SAID)
    except FileNotFoundError:
        pass
