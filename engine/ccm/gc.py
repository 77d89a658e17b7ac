"""gc: remove the entries nothing needs.

What stays is keep.py's rule, shared with prune and the size bound: what a
transcript names (refs.py: every transcript and backup in the agent's
folders and the settings' `gc.transcripts`), what was stored or read
within `gc.grace_seconds`, pins, and everything those name.  The rest goes,
each entry checked again under its lock first; blobs without a sidecar
(orphans of a killed writer) go once past the grace period and unnamed.
The `.tmp-*` files a killed writer left are removed too (after their own
grace period, `store.temp_grace_seconds`), and counted in what is freed.

The rule it keeps: a dry run reports exactly what the real run would free.
"""

import time

from . import keep


def gc(store, folders, grace_seconds, dry_run=False, now=None, temp_grace_seconds=None):
    """`temp_grace_seconds`: for the `.tmp-*` files a killed writer left
    (None: the settings' store.temp_grace_seconds)."""
    from .refs import referenced

    started = time.time() if now is None else now
    if temp_grace_seconds is None:
        temp_grace_seconds = store.settings["store"]["temp_grace_seconds"]
    temp_files, temp_bytes = store.clean_temp(temp_grace_seconds, dry_run, now=started)
    metas = _metas(store)  # listed before the scan: a blob written during it is not a candidate
    refs = referenced(store, folders)
    pinned = {k for k, m in metas.items() if m.get("pin", {}).get("level", "none") != "none"}
    kept = keep.protected(store, metas, refs, grace_seconds, started, also=pinned)
    doomed = sorted(k for k in metas if k not in kept)
    orphans = keep.orphans(store, refs, grace_seconds, started)
    if dry_run:
        freed = sum(store.blob_size(k) for k in doomed) + sum(size for _k, size in orphans)
        deleted = doomed
    else:
        check = keep.still_removable(grace_seconds, ("none",))
        deleted, freed = [], 0
        for key in doomed:
            got = store.delete(key, "gc", still=check)
            if got is not None:
                deleted.append(key)
                freed += got
        freed += keep.remove_orphans(store, orphans, grace_seconds, "gc orphan")
    return {"deleted": deleted, "referenced": len(refs & set(metas)), "freed_bytes": freed + temp_bytes,
            "dry_run": dry_run, "temp_files": temp_files, "temp_bytes": temp_bytes, "orphans": len(orphans)}


def _metas(store):
    out = {}
    for key in store.keys():
        out[key] = store.meta(key) or {}
    return out
