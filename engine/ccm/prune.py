"""Prune: what leaves the store by age and by size, and the size bound
applied after every write.

Order: unpinned entries oldest-used first, then soft pins; hard pins never.
Never what keep.py keeps (shared with gc): an entry a transcript names, an
entry stored or read within `gc.grace_seconds`, and what a kept entry names;
each deletion is checked again under the key's lock.  Sizes are the blobs'
sizes on disk (compressed), on both sides of every comparison, so the total
reported after a prune is the sum of the blob files left.  The bound
(`store.max_size_mb`) is this same size prune, run by the store after a
write when the blobs on disk exceed it; the key just written is kept (its
stub is being handed out).  In a hook its reference scan has
`store.bound_scan_seconds`: a scan that cannot end by then (or that another
process is running) defers the bound, and nothing is deleted.  A prune also
removes the `.tmp-*` files a killed writer left (older than
`store.temp_grace_seconds`) and the blobs without a sidecar that keep.py
lets go.
"""

import time

from . import keep

ORDER = {"none": 0, "soft": 1}
MB = 1024 * 1024


def plan(store, max_age_days=None, max_size_mb=None, now=None, keep_keys=(), refs=frozenset(), grace_seconds=0):
    """(keys to delete with their sizes, total before, total after): never
    a key in `keep_keys` nor one keep.py keeps."""
    now = time.time() if now is None else now
    metas = {key: store.meta(key) or {} for key in store.keys()}
    hard = {k for k, m in metas.items() if m.get("pin", {}).get("level", "none") not in ORDER}
    kept = keep.protected(store, metas, refs, grace_seconds, now, also=set(keep_keys) | hard)
    entries = [(k, ORDER[_level(m)], keep.last_touch(m), store.blob_size(k)) for k, m in metas.items() if k not in hard]
    total = sum(store.blob_size(k) for k in metas)
    doomed = {}
    if max_age_days is not None:
        cutoff = now - max_age_days * 86400
        doomed.update((k, size) for k, order, used, size in entries if order == 0 and used < cutoff and k not in kept)
    if max_size_mb is not None:
        left, limit = total - sum(doomed.values()), int(max_size_mb * MB)
        for key, _order, _used, size in sorted(entries, key=lambda e: (e[1], e[2])):
            if left <= limit:
                break
            if key not in doomed and key not in kept:
                doomed[key] = size
                left -= size
    named = keep.closure(store, set(metas) - set(doomed), metas, metas)  # what a kept entry names stays too
    doomed = {k: v for k, v in doomed.items() if k not in named}
    return doomed, total, total - sum(doomed.values())


def _level(meta):
    return meta.get("pin", {}).get("level", "none")


def prune(store, max_age_days=None, max_size_mb=None, dry_run=False, temp_grace_seconds=None, folders=None):
    """`temp_grace_seconds`: None for the settings' store.temp_grace_seconds;
    `folders`: where transcripts are searched (None: gc's roots)."""
    from .refs import referenced, roots

    now = time.time()
    grace = store.settings["gc"]["grace_seconds"]
    refs = referenced(store, roots(store.settings["gc"]["transcripts"], store) if folders is None else folders)
    doomed, before, after = plan(store, max_age_days, max_size_mb, now, refs=refs, grace_seconds=grace)
    if temp_grace_seconds is None:
        temp_grace_seconds = store.settings["store"]["temp_grace_seconds"]
    temp_files, temp_bytes = store.clean_temp(temp_grace_seconds, dry_run)
    orphans = keep.orphans(store, refs, grace, now)
    deleted = sorted(doomed)
    if not dry_run:
        deleted = _delete(store, doomed, grace, "prune")
        keep.remove_orphans(store, orphans, grace, "prune orphan")
        after = store.disk_bytes()
    return {"deleted": deleted, "bytes_before": before, "bytes_after": after, "dry_run": dry_run,
            "temp_files": temp_files, "temp_bytes": temp_bytes, "orphans": len(orphans)}


def _delete(store, doomed, grace, reason):
    check = keep.still_removable(grace, tuple(ORDER))
    return sorted(k for k in doomed if store.delete(k, reason, still=check) is not None)


def bound(store, keep_keys=(), deadline_seconds=None):
    """After a write: when the blobs on disk exceed `store.max_size_mb`,
    delete as a size prune would (never a key in `keep_keys`); the keys
    deleted.  Listing the blobs folder is all it costs while under the
    bound.  `deadline_seconds`: the most the reference scan may take (a
    hook's), None: no limit, waiting for another scan to end."""
    from .refs import referenced, roots

    limit = store.settings["store"]["max_size_mb"]
    if limit is None or store.disk_bytes() <= limit * MB:
        return []
    deadline = None if deadline_seconds is None else time.monotonic() + deadline_seconds
    refs = referenced(store, roots(store.settings["gc"]["transcripts"], store), deadline, wait=deadline is None,
                      incremental=True)
    if refs is None:
        store.log(f"size bound deferred: the transcripts could not be searched within {deadline_seconds} s; "
                  "nothing was deleted (engine cache prune applies it)")
        return []
    now, grace = time.time(), store.settings["gc"]["grace_seconds"]
    keep.remove_orphans(store, keep.orphans(store, refs, grace, now), grace, "bound orphan")
    doomed, _before, _after = plan(store, max_size_mb=limit, now=now, keep_keys=set(keep_keys), refs=refs,
                                   grace_seconds=grace)
    return _delete(store, doomed, grace, "bound")
