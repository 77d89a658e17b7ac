"""The one reference scan: which keys the transcripts name.  gc, prune and
the size bound all ask it, and keep what it finds.

A reference is the text `sha256:<key>` anywhere in the raw bytes of a
transcript file (a tool_result's string, a text block inside a list,
toolUseResult, a progress line, a subagent's own file, a purge backup), in
any folder any agent keeps transcripts in (engine/session/locate.py: Claude
Code's, Codex's, Gemini's and Copilot's) and the settings' extra
`gc.transcripts`.  Scanning bytes rather than known
fields finds every place a stub can sit.  Files are read a chunk at a time
(the last bytes of a chunk read again with the next, so a key across the
boundary is seen): a line of any length costs one chunk of memory.

What each file named is kept in refs.json in the cache folder, with how far
it was read, so the next scan reads only what was appended since (a file
the agent writes grows at its end).  A file that is not the same file any
more (another inode, shorter, or its first bytes or the bytes before where
the last scan stopped changed) is read again whole.  A scan that runs out
of time (`deadline`, a monotonic time) keeps what it read and answers
None: the caller then deletes nothing.  One scan at a time, under a lock;
a caller that may not wait (a hook) gets None while another scans.

A transcript `engine purge` rewrote outside those folders is searched too:
its stubs name outputs only the cache holds.  purge records its real path
(`remember`, purged.json in the cache folder) and `roots` adds each one
still there; one moved or deleted names nothing any more.
"""

import json
import os
import time

# `sha256:` and 64 hex digits: the longest reference (a chunk ends at most
# one byte short of one, so this much is read again with the next).
OVERLAP = len("sha256:") + 64
CHUNK = 1 << 20
PROBE = 64  # bytes at the start, and before where a scan stopped, that say a file is the one read


def roots(extra=(), store=None):
    """The folders searched: where every agent keeps transcripts (a stub
    handed to Codex, Gemini or Copilot CLI by a hook sits in that agent's
    session file), and `extra`; with `store`, also the transcripts purged
    outside them (`remember`)."""
    from engine.session.locate import EVERY, transcript_roots

    out = []
    for r in list(transcript_roots(EVERY)) + list(extra or ()):
        r = os.path.abspath(os.path.expanduser(r))
        if r not in out:
            out.append(r)
    if store is not None:
        out += [p for p in _purged(store) if os.path.isfile(p) and p not in out]
    return out


def remember(store, path, extra=()):
    """Search the transcript at `path` (a real path) from now on, when it is
    outside the folders searched (`extra`: the settings' gc.transcripts)."""
    from engine.base.files import Locked

    if any(_within(path, r) for r in roots(extra)):
        return
    store.ensure()
    with Locked(os.path.join(store.root, "purged.lock")):
        files = [p for p in _purged(store) if os.path.exists(p) and p != path] + [path]
        store.write_private(_purged_path(store), json.dumps({"files": files}, sort_keys=True).encode(), sync=True)


def _within(path, folder):
    folder = os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _purged_path(store):
    return os.path.join(store.root, "purged.json")


def _purged(store):
    return [p for p in _files_of(_purged_path(store), list) if isinstance(p, str)]


def _files_of(path, kind):
    """The `files` entry (a `kind`: list or dict) of a JSON file the store
    keeps; empty when the file is absent or not what was written."""
    try:
        with open(path, "rb") as fh:
            data = json.loads(fh.read())
    except (FileNotFoundError, ValueError):
        return kind()
    files = data.get("files") if isinstance(data, dict) else None
    return files if isinstance(files, kind) else kind()


def transcript_files(folders):
    for root in folders:
        root = os.path.expanduser(root)
        if os.path.isfile(root):
            yield root
            continue
        for folder, _dirs, names in os.walk(root):
            for n in names:
                if n.endswith(".jsonl") or ".jsonl.backup." in n:
                    yield os.path.join(folder, n)


def referenced(store, folders, deadline=None, wait=True, incremental=False):
    """The keys named in the transcript files under `folders`; None when
    the scan could not end by `deadline` or (`wait` off) another runs.
    `incremental`: read from where the last scan stopped in a file that is
    still the same (the bound, in a hook); off, every file is read whole
    (gc and prune: a file changed in place, in its middle, is seen too)."""
    from engine.base.files import Locked

    store.ensure()
    lock = Locked(os.path.join(store.root, "refs.lock"), wait=wait)
    try:
        with lock:
            index = _load(store)
            keys, done = _scan_all(folders, index, deadline, incremental)
            _save(store, index)
    except BlockingIOError:
        return None
    return keys if done else None


def _scan_all(folders, index, deadline, resume):
    keys, seen = set(), set()
    for path in transcript_files(folders):
        if deadline is not None and time.monotonic() > deadline:
            return keys, False
        seen.add(path)
        entry = _scan_file(path, index.get(path) if resume else None, deadline)
        if entry is None:
            index.pop(path, None)
            continue
        index[path] = entry
        keys.update(entry["keys"])
        if not entry.get("whole"):
            return keys, False
    for path in [p for p in index if p not in seen and not os.path.exists(p)]:
        del index[path]  # gone: it names nothing any more
    return keys, True


def _scan_file(path, old, deadline):
    """The index entry of one file, read from where the last scan stopped
    when it is still the same file; None when it cannot be read."""
    from engine.base.files import open_regular

    from .stub import keys_in

    try:  # never waits: a FIFO or a device among the transcripts is not read
        fh = open_regular(path)
    except (OSError, ValueError):
        return None
    with fh:
        st = os.fstat(fh.fileno())
        start, found = 0, set()
        if _same_file(fh, st, old):
            start, found = old["read"], set(old["keys"])
        fh.seek(max(0, start - OVERLAP))
        pos, tail = fh.tell(), b""
        while True:
            data = fh.read(CHUNK)
            if not data:
                break
            window = tail + data
            if b"sha256:" in window:
                found |= keys_in(window)
            tail = window[-OVERLAP:]
            pos += len(data)
            if deadline is not None and time.monotonic() > deadline:
                break
        whole = pos >= st.st_size
        return {"dev": st.st_dev, "ino": st.st_ino, "read": pos, "keys": sorted(found), "whole": whole,
                "head": _probe(fh, 0, min(PROBE, pos)), "before": _probe(fh, max(0, pos - PROBE), pos)}


def _same_file(fh, st, old):
    if not isinstance(old, dict) or (old.get("dev"), old.get("ino")) != (st.st_dev, st.st_ino):
        return False
    read = old.get("read")
    if not isinstance(read, int) or read > st.st_size or not isinstance(old.get("keys"), list):
        return False
    return (_probe(fh, 0, min(PROBE, read)) == old.get("head")
            and _probe(fh, max(0, read - PROBE), read) == old.get("before"))


def _probe(fh, start, end):
    fh.seek(start)
    return fh.read(max(0, end - start)).hex()


def _path(store):
    return os.path.join(store.root, "refs.json")


def _load(store):
    return _files_of(_path(store), dict)


def _save(store, index):
    store.write_private(_path(store), json.dumps({"files": index}, sort_keys=True).encode())
