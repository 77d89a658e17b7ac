"""Prune: what leaves the store by age and by size.

Order: unpinned entries oldest-used first, then soft pins; hard pins never.
Sizes are the blobs' sizes on disk (compressed), on both sides of every
comparison, so the total reported after a prune is the sum of the blob
files left (the seed compared compressed sizes with uncompressed ones).
"""

import time

ORDER = {"none": 0, "soft": 1}


def plan(store, max_age_days=None, max_size_mb=None, now=None):
    """(keys to delete with their sizes, total before, total after)."""
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
            if level == "none" and used < cutoff:
                doomed[key] = size
    if max_size_mb is not None:
        limit = int(max_size_mb * 1024 * 1024)
        left = total - sum(doomed.values())
        for key, level, used, size in sorted((e for e in entries if e[1] in ORDER), key=lambda e: (ORDER[e[1]], e[2])):
            if left <= limit:
                break
            if key not in doomed:
                doomed[key] = size
                left -= size
    return doomed, total, total - sum(doomed.values())


def prune(store, max_age_days=None, max_size_mb=None, dry_run=False):
    doomed, before, after = plan(store, max_age_days, max_size_mb)
    if not dry_run:
        for key in doomed:
            store.delete(key, "prune")
        after = store.disk_bytes()
    return {"deleted": sorted(doomed), "bytes_before": before, "bytes_after": after, "dry_run": dry_run}


def _disk(store, key):
    import os

    try:
        return os.stat(store.blob_path(key)).st_size
    except FileNotFoundError:
        return 0
