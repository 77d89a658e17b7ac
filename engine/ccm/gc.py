"""gc: remove blobs that nothing references.

A reference is the text `sha256:<key>` anywhere in the raw bytes of a
transcript line (a tool_result's string, a text block inside a list,
toolUseResult, a progress line, a subagent's own file, a purge backup), in
any folder the agent keeps transcripts in (engine/session/locate.py:
`$CLAUDE_CONFIG_DIR/projects`, `~/.claude/projects`) and the settings' extra
`gc.transcripts`.  Scanning bytes rather than known fields finds every place
a stub can sit.  A blob may itself name blobs (a cached output that holds a
stub): what a kept blob names is kept too, followed to the end (the sidecar
lists the keys a blob names, written when it is stored; an older sidecar
without that list is read from the blob).  A blob younger than the grace
period is kept: its stub may not be written yet.  Pins are kept too.  The
`.tmp-*` files a killed writer left are removed too (after their own grace
period, `store.temp_grace_seconds`), and counted in what is freed.

The rule it keeps: a dry run reports exactly what the real run would free.
"""

import os
import time

from .stub import keys_in


def roots(extra=()):
    from engine.session.locate import transcript_roots

    out = []
    for r in list(transcript_roots()) + list(extra or ()):
        r = os.path.abspath(os.path.expanduser(r))
        if r not in out:
            out.append(r)
    return out


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


# Longer than a reference (`sha256:` and 64 hex digits): one cut between two
# pieces of a file is still found whole in the next window.
REFERENCE_OVERLAP = 128


def referenced(folders):
    """Every key the transcripts name, read in overlapping pieces (not
    lines: a 2 GB line costs one piece, engine/core/transcript.py)."""
    from engine.core.transcript import windows

    keys = set()
    for path in transcript_files(folders):
        try:
            with open(path, "rb") as fh:
                for window in windows(fh, REFERENCE_OVERLAP):
                    if b"sha256:" in window:
                        keys |= keys_in(window)
        except OSError:
            continue
    return keys


def names_of(store, key, meta):
    """The keys blob `key` names."""
    names = (meta or {}).get("names")
    if isinstance(names, list):
        return set(names)
    data = store.get(key, quiet=True)
    return keys_in(data) if data and b"sha256:" in data else set()


def closure(store, refs, candidates):
    """refs plus every stored key a kept blob names, transitively."""
    known = set(candidates)
    kept, todo = set(), [k for k in refs if k in known]
    while todo:
        key = todo.pop()
        if key in kept:
            continue
        kept.add(key)
        todo.extend(k for k in names_of(store, key, store.meta(key)) if k in known and k not in kept)
    return kept | set(refs)


def gc(store, folders, grace_seconds, dry_run=False, now=None, temp_grace_seconds=None):
    """`temp_grace_seconds`: for the `.tmp-*` files a killed writer left
    (None: the settings' store.temp_grace_seconds)."""
    started = time.time() if now is None else now
    if temp_grace_seconds is None:
        temp_grace_seconds = store.settings["store"]["temp_grace_seconds"]
    temp_files, temp_bytes = store.clean_temp(temp_grace_seconds, dry_run, now=started)
    candidates = store.keys()  # listed before the scan: a blob written during it is not a candidate
    refs = referenced(folders)
    doomed, roots_kept = [], set(refs)
    for key in candidates:
        if key in refs:
            continue
        meta = store.meta(key) or {}
        if meta.get("pin", {}).get("level", "none") != "none" or started - meta.get("created", started) < grace_seconds:
            roots_kept.add(key)  # kept, so what it names is kept too
            continue
        doomed.append(key)
    kept = closure(store, roots_kept, candidates)
    doomed = [k for k in doomed if k not in kept]
    freed = 0
    for key in doomed:
        freed += store.blob_size(key) if dry_run else store.delete(key, "gc")
    return {"deleted": doomed, "referenced": len(refs & set(candidates)), "freed_bytes": freed + temp_bytes,
            "dry_run": dry_run, "temp_files": temp_files, "temp_bytes": temp_bytes}
