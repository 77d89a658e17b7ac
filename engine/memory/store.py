"""The tool-memory store: one NDJSON file of failed tool calls, shared by every
session of the user; each entry names the project it was recorded in, and
the banner reads only the current project's unless the user opted in.

Safe under parallel hooks: a record is one `write` to a file opened with
O_APPEND (lines of parallel writers never mix), made under a shared lock;
compaction (merging duplicates, trimming to the maximum) takes the exclusive
lock, rewrites the file and renames it into place, so no append made during
it can land in the replaced file.  Failures with one key (the same tool
and error signature in one project, engine/memory/record.py) are one entry:
appends add lines, readers and compaction merge them by key into a count,
the first and the last time, the latest error and input, the latest
different inputs (`examples_kept` of them) and the sessions that met it.  Records reach this module already
redacted (engine/memory/record.py): the store never sees a secret.  The file
is 0600 in a 0700 folder.  Imports nothing heavy: the hook reads it on
PreToolUse.
"""

import os
import time

from engine.base.fastjson import loads
from engine.base.files import Locked, open_append, replace_atomic
from engine.base.paths import state_dir_str


class StoreError(Exception):
    pass


def store_path(memory_settings):
    """The store's path from `hooks.memory.path`: ~ and {state} (the engine's
    state folder) expanded."""
    raw = memory_settings["path"]
    return os.path.expanduser(raw.replace("{state}", state_dir_str()))


class _Lock:
    """The store's lock file beside it (shared for appends, exclusive for
    compaction); a lock that cannot be opened is a StoreError."""

    def __init__(self, path, shared):
        self.lock = Locked(path + ".lock", shared=shared)

    def __enter__(self):
        try:
            self.lock.__enter__()
        except OSError as exc:
            raise StoreError(f"cannot open the tool memory lock {self.lock.path}: {exc.strerror or exc}") from None
        return self

    def __exit__(self, *exc):
        self.lock.__exit__(*exc)


def append(path, records, max_kept, compact_bytes, sessions_kept=None, examples_kept=None):
    """Add records (dicts with k, t, tool, sig, error, input, project, session);
    compact when the file has grown past `compact_bytes`."""
    if not records:
        return
    data = "".join(_dumps(_line(r)) + "\n" for r in records).encode("ascii")
    with _Lock(path, shared=True):
        try:
            fd = open_append(path)
        except OSError as exc:
            raise StoreError(f"cannot write the tool memory {path}: {exc.strerror or exc}") from None
        try:
            os.write(fd, data)  # one write: parallel appends never interleave
            size = os.fstat(fd).st_size
        except OSError as exc:
            raise StoreError(f"cannot write the tool memory {path}: {exc.strerror or exc}") from None
        finally:
            os.close(fd)
    if size > compact_bytes:
        compact(path, max_kept, sessions_kept, examples_kept)


def _read_bytes(path):
    """The store's bytes: a regular file only, never waited on (a FIFO).
    OSError as open_regular; ValueError when it is no regular file."""
    from engine.base.files import open_regular

    with open_regular(path) as fh:
        return fh.read()


def project_id(project):
    """The id of a project (its real path): what entries are compared by.
    The path an entry shows is redacted, and two paths can redact alike
    (`/w/sk-learn-notebooks` and `/w/sk-learn-notebooks-2` are both
    `/w/[REDACTED]`); their ids differ, and an id holds no secret."""
    from engine.core.cache import sha256

    return sha256(project.encode("utf-8", "surrogatepass")).hexdigest()[:24] if project else ""


def of_project(entry, project):
    """Is the entry `project`'s?  The one place an entry's project is
    compared: by id; an entry written before ids were kept, by its path."""
    if entry.get("pid"):
        return entry["pid"] == project_id(project)
    return entry["project"] == project


def _line(r):
    return {"k": r["k"], "t": r["t"], "n": r.get("n", 1), "tool": r["tool"], "sig": r.get("sig", ""),
            "error": r["error"], "input": r["input"], "project": r.get("project", ""), "pid": r.get("pid", ""),
            "sessions": r.get("sessions") or ([r["session"]] if r.get("session") else [])}


def _read_raw(path):
    try:
        data = _read_bytes(path)
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read the tool memory {path}: {getattr(exc, 'strerror', None) or exc}") from None
    out = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            rec = loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            continue  # a torn line (a full disk mid-write) is skipped, not fatal
        if isinstance(rec, dict) and isinstance(rec.get("k"), str) and isinstance(rec.get("tool"), str):
            out.append(rec)
    return out


def _latest(kept, items, bound):
    """Add items to `kept` (oldest first), each once, the latest last; keep
    the latest `bound` (all when None)."""
    for x in items:
        if x in kept:
            kept.remove(x)
        kept.append(x)
    if bound is not None:
        del kept[:-bound]


def _strings(value):
    """The strings of a line's list field; nothing for any other value (a
    damaged line's `"sessions": 7` is no list of sessions, and no reader fails on it)."""
    return [x for x in value if isinstance(x, str)] if isinstance(value, list) else []


def when(stamp, fmt):
    """A record's time in `fmt`, or `?` for one no clock can show (a damaged
    line's 1e20): one such line never hides the other lessons."""
    try:
        return time.strftime(fmt, time.localtime(stamp))
    except (OverflowError, ValueError, OSError, TypeError):
        return "?"


def merged(lines, sessions_kept=None, examples_kept=None):
    """Entries by key: the newest line's error, input and project, the summed
    count, the first and last time, the different inputs met (`examples`,
    the latest `examples_kept`, or all) and the sessions that met it (the
    latest `sessions_kept`, or all); newest first."""
    by = {}
    for r in lines:
        t = r.get("t") if isinstance(r.get("t"), (int, float)) else 0
        n = r.get("n") if isinstance(r.get("n"), int) and r.get("n") > 0 else 1
        sessions = _strings(r.get("sessions"))
        inp = str(r.get("input", ""))
        examples = _strings(r.get("examples")) or ([inp] if inp else [])
        e = by.get(r["k"])
        if e is None:
            by[r["k"]] = e = {"k": r["k"], "tool": r["tool"], "sig": str(r.get("sig", "")),
                              "error": str(r.get("error", "")), "input": inp,
                              "project": str(r.get("project", "")), "pid": str(r.get("pid") or ""), "count": 0, "first": t, "last": t,
                              "examples": [], "sessions": []}
        e["count"] += n
        e["first"] = min(e["first"], r.get("first", t) if isinstance(r.get("first"), (int, float)) else t)
        if t >= e["last"]:
            e["last"] = t
            e["error"], e["input"] = str(r.get("error", "")) or e["error"], inp or e["input"]
            e["sig"] = str(r.get("sig", "")) or e["sig"]
            e["project"] = str(r.get("project", "")) or e["project"]
            e["pid"] = str(r.get("pid") or "") or e["pid"]
        _latest(e["examples"], examples, examples_kept)
        _latest(e["sessions"], sessions, sessions_kept)
    return sorted(by.values(), key=lambda e: e["last"], reverse=True)


def entries(path, tool=None, session=None, project=None, examples_kept=None):
    """The store's entries (merged, newest first), optionally only those of
    one tool, of one session or of one project: the Python API the CLI and
    the session report read."""
    with _Lock(path, shared=True):
        lines = _read_raw(path)
    if tool is not None:
        lines = [r for r in lines if r["tool"] == tool]
    out = merged(lines, examples_kept=examples_kept)
    if session is not None:
        out = [e for e in out if session in e["sessions"]]
    if project is not None:
        out = [e for e in out if of_project(e, project)]
    return out


def entries_for_tool(path, tool, examples_kept=None):
    """Entries of one tool, for the PreToolUse banner: lines of other tools
    are not even parsed.  No lock: a reader sees whole lines (appends are
    single writes, compaction renames) and skips a torn last one."""
    try:
        data = _read_bytes(path)
    except (OSError, ValueError):
        return []
    # Lines are written compact and ASCII (_dumps): a plain tool name appears
    # in its own lines exactly so, and only lines holding it are parsed.
    plain = tool.isascii() and tool.isprintable() and '"' not in tool and "\\" not in tool
    needle = f'"tool":"{tool}"'.encode("ascii") if plain else b""
    if needle not in data:
        return []
    lines = []
    for raw in data.split(b"\n"):
        if raw.strip() and needle in raw:
            try:
                rec = loads(raw.decode("utf-8", "replace"))
            except (ValueError, RecursionError):
                continue
            if isinstance(rec, dict) and rec.get("tool") == tool and isinstance(rec.get("k"), str):
                lines.append(rec)
    return merged(lines, examples_kept=examples_kept)


def _rewrite(path, kept):
    """Replace the store by `kept` (merged entries): under the exclusive lock."""
    lines = [_dumps({"k": e["k"], "t": e["last"], "first": e["first"], "n": e["count"], "tool": e["tool"],
                     "sig": e["sig"], "error": e["error"], "input": e["input"], "project": e["project"],
                     "pid": e["pid"],
                     "examples": e["examples"], "sessions": e["sessions"]}) + "\n"
             for e in reversed(kept)]  # oldest first, like appends
    try:
        replace_atomic(path, "".join(lines).encode("utf-8", "backslashreplace"))
    except OSError as exc:
        raise StoreError(f"cannot rewrite the tool memory {path}: {exc.strerror or exc}") from None


def compact(path, max_kept, sessions_kept=None, examples_kept=None):
    """Merge duplicates and keep the newest `max_kept` entries, each naming
    at most its latest `sessions_kept` sessions and `examples_kept` inputs."""
    with _Lock(path, shared=False):
        _rewrite(path, merged(_read_raw(path), sessions_kept, examples_kept)[:max_kept])


def clear(path, tool=None):
    """Forget every entry, or those of one tool; the number forgotten."""
    with _Lock(path, shared=False):
        current = merged(_read_raw(path))
        kept = [e for e in current if tool is not None and e["tool"] != tool]
        if len(kept) != len(current) or (tool is None and os.path.exists(path)):
            _rewrite(path, kept)
    return len(current) - len(kept)


def _dumps(record):
    import json  # only when something is written (a failure was seen)

    return json.dumps(record, separators=(",", ":"), ensure_ascii=True)


def now():
    return int(time.time())
