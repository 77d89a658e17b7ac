"""gc: remove blobs that no transcript references.

A reference is the text `sha256:<key>` anywhere in a transcript line's raw
bytes: a tool_result's string, a text block inside a list, toolUseResult,
a progress line, a subagent's own file.  Scanning bytes rather than reading
known fields finds every place a stub can sit (the seed read only text
blocks and deleted blobs referenced from lists).  A blob younger than the
grace period is kept: its stub may not be written yet.  Pins are kept too.
"""

import os
import time

from .stub import keys_in


def transcript_files(roots):
    for root in roots:
        root = os.path.expanduser(root)
        if os.path.isfile(root):
            yield root
            continue
        for folder, _dirs, names in os.walk(root):
            for n in names:
                if n.endswith(".jsonl") or ".jsonl.backup." in n:
                    yield os.path.join(folder, n)


def referenced(roots):
    keys = set()
    for path in transcript_files(roots):
        try:
            with open(path, "rb") as fh:
                for line in fh:
                    if b"sha256:" in line:
                        keys |= keys_in(line)
        except OSError:
            continue
    return keys


def gc(store, roots, grace_seconds, dry_run=False, now=None):
    started = time.time() if now is None else now
    candidates = store.keys()  # listed before the scan: a blob written during it is not a candidate
    refs = referenced(roots)
    doomed = []
    for key in candidates:
        if key in refs:
            continue
        meta = store.meta(key) or {}
        if meta.get("pin", {}).get("level", "none") != "none":
            continue
        if started - meta.get("created", started) < grace_seconds:
            continue
        doomed.append(key)
    freed = 0
    if not dry_run:
        for key in doomed:
            freed += store.delete(key, "gc")
    return {"deleted": doomed, "referenced": len(refs & set(candidates)), "freed_bytes": freed, "dry_run": dry_run}
