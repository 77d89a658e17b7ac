"""What gc, prune and the size bound never remove, and how they remove the
rest: one rule for the three.

Never removed: an entry a transcript names (refs.py, the one reference
scan), an entry stored or read within the grace period (`gc.grace_seconds`,
counted from its last store or read: its stub may be in a live session
that has not written it to its transcript yet), and everything a kept
entry names (a cached output holding a stub), followed to the end.  Each
deletion is decided again under the key's lock, with the sidecar as it is
then: a store or a read that came meanwhile keeps it.  A blob without a
sidecar (an orphan: its writer was killed between the two) is removed once
it is older than the grace period and nothing names it.
"""

import os
import time


def last_touch(meta):
    """When an entry was last stored or read: its grace period runs from there."""
    meta = meta or {}
    return max(meta.get("last_used") or 0, meta.get("created") or 0)


def names_of(store, key, meta):
    """The keys blob `key` names (its sidecar's list; an older sidecar
    without one: read from the blob once, and the list written into it)."""
    from .stub import keys_in

    names = (meta or {}).get("names")
    if isinstance(names, list):
        return set(names)
    data = store.get(key, quiet=True)
    if data is None:
        return set()  # unreadable: what it names cannot be read either
    found = keys_in(data) - {key} if b"sha256:" in data else set()

    def remember(current):
        if current is None or isinstance(current.get("names"), list):
            return None
        current["names"] = sorted(found)
        return current

    store.update_meta(key, remember)
    return found


def closure(store, roots, candidates, metas=None):
    """`roots` plus every stored key a kept blob names, transitively."""
    known = set(candidates)
    metas = metas or {}
    kept, todo = set(), [k for k in roots if k in known]
    while todo:
        key = todo.pop()
        if key in kept:
            continue
        kept.add(key)
        meta = metas[key] if key in metas else store.meta(key)
        todo.extend(k for k in names_of(store, key, meta) if k in known and k not in kept)
    return kept | set(roots)


def young(meta, grace_seconds, now):
    return now - last_touch(meta) < grace_seconds


def protected(store, metas, refs, grace_seconds, now, also=()):
    """The entries that stay whatever else says they may go: named by a
    transcript, young, in `also` (pins, the key just written), and all
    they name."""
    roots = set(refs) | set(also) | {k for k, m in metas.items() if young(m, grace_seconds, now)}
    return closure(store, roots, metas, metas)


def still_removable(grace_seconds, allowed_pins):
    """The check made again under the key's lock before a deletion."""
    def check(meta):
        if meta is None:
            return False  # removed or never there: nothing to do
        level = meta.get("pin", {}).get("level", "none")
        return level in allowed_pins and not young(meta, grace_seconds, time.time())

    return check


def orphans(store, refs, grace_seconds, now):
    """[(key, bytes)] of the blobs without a sidecar that may go."""
    entries = set(store.keys())
    out = []
    for key in store.blob_keys():
        if key in entries or key in refs:
            continue
        try:
            st = os.stat(store.blob_path(key))
        except FileNotFoundError:
            continue
        if now - st.st_mtime >= grace_seconds:
            out.append((key, st.st_size))
    return out


def remove_orphans(store, found, grace_seconds, reason):
    """Remove the orphans `found`, each checked again under its lock (still
    no sidecar, still old); the bytes freed."""
    freed = 0

    def check(meta):
        try:
            return meta is None and time.time() - os.stat(store.blob_path(key)).st_mtime >= grace_seconds
        except FileNotFoundError:
            return False

    for key, _size in found:
        got = store.delete(key, reason, still=check)
        freed += got or 0
    return freed
