"""Prune: what leaves the store by age and by size, and the size bound
applied after every write.

Order: unpinned entries oldest-used first, then soft pins; hard pins never.
Sizes are the blobs' sizes on disk (compressed), on both sides of every
comparison, so the total reported after a prune is the sum of the blob
files left (the seed compared compressed sizes with uncompressed ones).
The bound (`store.max_size_mb`) is this same size prune, run by the store
after a write when the blobs on disk exceed it; the key just written is
kept (its stub is being handed out).  A prune also removes the `.tmp-*`
files a killed writer left (older than `store.temp_grace_seconds`).
"""

import time

ORDER = {"none": 0, "soft": 1}
MB = 1024 * 1024


def plan(store, max_age_days=None, max_size_mb=None, now=None, keep=()):
    """(keys to delete with their sizes, total before, total after); never a key in `keep`."""
    now = time.time() if now is None else now
    entries = []
    for key in store.keys():
        meta = store.meta(key) or {}
        level = meta.get("pin", {}).get("level", "none")
        size = _disk(store, key)
        entries.append((key, level, meta.get("last_used", meta.get("created", 0)), size))
    total = sum(e[3] for e in entries)
    doomed = {}
    if max_age_days is not None:
        cutoff = now - max_age_days * 86400
        for key, level, used, size in entries:
            if level == "none" and used < cutoff and key not in keep:
                doomed[key] = size
    if max_size_mb is not None:
        limit = int(max_size_mb * MB)
        left = total - sum(doomed.values())
        for key, level, used, size in sorted((e for e in entries if e[1] in ORDER), key=lambda e: (ORDER[e[1]], e[2])):
            if left <= limit:
                break
            if key not in doomed and key not in keep:
                doomed[key] = size
                left -= size
    return doomed, total, total - sum(doomed.values())


def prune(store, max_age_days=None, max_size_mb=None, dry_run=False, temp_grace_seconds=None):
    """`temp_grace_seconds`: None for the settings' store.temp_grace_seconds."""
    doomed, before, after = plan(store, max_age_days, max_size_mb)
    if temp_grace_seconds is None:
        temp_grace_seconds = store.settings["store"]["temp_grace_seconds"]
    temp_files, temp_bytes = store.clean_temp(temp_grace_seconds, dry_run)
    if not dry_run:
        for key in doomed:
            store.delete(key, "prune")
        after = store.disk_bytes()
    return {"deleted": sorted(doomed), "bytes_before": before, "bytes_after": after, "dry_run": dry_run,
            "temp_files": temp_files, "temp_bytes": temp_bytes}


def bound(store, keep=()):
    """After a write: when the blobs on disk exceed `store.max_size_mb`,
    delete as a size prune would (never a key in `keep`); the keys deleted.
    Listing the blobs folder is all it costs while under the bound."""
    limit = store.settings["store"]["max_size_mb"]
    if limit is None or store.disk_bytes() <= limit * MB:
        return []
    doomed, _before, _after = plan(store, max_size_mb=limit, keep=set(keep))
    for key in doomed:
        store.delete(key, "bound")
    return sorted(doomed)


def _disk(store, key):
    import os

    try:
        return os.stat(store.blob_path(key)).st_size
    except FileNotFoundError:
        return 0
