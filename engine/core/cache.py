"""On-disk cache of compiled profiles, keyed by the content of every YAML
file that went into them, so a hook process skips YAML, JSON Schema and the
tokenizer entirely when nothing changed.  os.path only (hot path).

Entries are pickles, and unpickling runs code: the cache folder must be the
user's own, not a link, and closed to everyone else (0700), or nothing is read
from it or written to it (profiles are then compiled each time).  Files are
0600.  A profile that failed to load is remembered too (by the digests of the
files read), so a broken or hostile profile costs a hook its error once, not
on every event.  The folder keeps at most `cache.max_entries` compiled
profiles (pipelines/settings/engine.yaml); the oldest go first.

An entry also keeps the stat signature (mtime, size, inode, ctime) each
source had when it was hashed: a hook does not read a source again while its
signature is unchanged (ctime cannot be set back by whoever writes the
file).  A source changed less than _SETTLED_NS before it was hashed gets no
signature (a second write in the same clock tick could keep it), so it is
hashed at every check, the way git treats a racily clean file.
"""

import os
import stat

from engine.base.digest import sha256
from engine.base.paths import cache_dir_str
from engine.base.version import __version__

ABSENT = "absent"
_DIGESTS: dict = {}  # path -> (stat signature, digest): a file is hashed once per process while unchanged
_SETTLED_NS = 2_000_000_000  # a source younger than this when hashed is hashed at every check (above)


def file_digest(path):
    """sha256 of a file's bytes; ABSENT for a file that is not there.  A file
    over the YAML size cap is never read whole: its size and mtime stand in."""
    try:
        st = os.stat(path)
        if st.st_size > _max_digest_bytes() or not stat.S_ISREG(st.st_mode):
            return f"size:{st.st_size}:{st.st_mtime_ns}:{st.st_mode}"
        sig = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
        hit = _DIGESTS.get(path)
        if hit is not None and hit[0] == sig:
            return hit[1]
        with open(path, "rb") as fh:
            digest = sha256(fh.read()).hexdigest()
        _DIGESTS[path] = (sig, digest)
        return digest
    except OSError:
        return ABSENT


def _signatures(sources):
    """The stat signature each source has with its recorded digest, or None
    (absent, changed since, or changed too recently).  Only stores call
    this: a source not hashed in this process yet (a profile compiled in
    another one) is hashed now."""
    import time

    settled = time.time_ns() - _SETTLED_NS
    out = []
    for src, digest in sources:
        hit = _DIGESTS.get(src)
        if hit is None and digest != ABSENT:
            file_digest(src)
            hit = _DIGESTS.get(src)
        ok = hit is not None and hit[1] == digest and max(hit[0][0], hit[0][3]) < settled
        out.append(list(hit[0]) if ok else None)
    return out


def _fresh(entry):
    """True when every source of a cache entry is as it was: its stat
    signature unchanged, else its bytes hash to the recorded digest."""
    sources = entry["sources"]
    sigs = entry.get("stats")
    if not isinstance(sigs, list) or len(sigs) != len(sources):
        sigs = [None] * len(sources)
    for (src, digest), sig in zip(sources, sigs):
        if sig is not None:
            try:
                st = os.stat(src)
            except OSError:
                return False  # it had a signature, so it was there
            if [st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns] == sig and stat.S_ISREG(st.st_mode):
                _DIGESTS[src] = (tuple(sig), digest)  # an entry stored by this process keeps the signature
                continue
        if file_digest(src) != digest:
            return False
    return True


def _entry(value, sources):
    return {"sources": sources, "stats": _signatures(sources), "value": value}


def _max_digest_bytes():
    """Above the largest YAML file the loader accepts (yaml.max_file_bytes), a
    file is refused anyway: hashing it would only cost time."""
    from .settings import yaml_limits

    return yaml_limits()["max_file_bytes"]


_CODE: list[str] = []


def code_fingerprint():
    """Size and mtime of every engine module: a cache written by other code
    (an upgrade, a working copy being edited) is never read back.  Computed
    once per process (the code a process runs does not change under it)."""
    if not _CODE:
        _CODE.append(_code_fingerprint())
    return _CODE[0]


# The distribution's name as its wheel's folder spells it (pyproject.toml's
# `rules-engine`): rules_engine-<version>.dist-info beside engine/.
_DIST_INFO = "rules_engine-{version}.dist-info"


def _code_fingerprint():
    """The installed wheel's RECORD, else a walk of the modules."""
    from ..base.paths import package_root_str

    return _installed_record(package_root_str()) or _walked_fingerprint()


def _installed_record(root):
    """Size and mtime of the RECORD that pip wrote beside `root` when it
    installed this version as a wheel: one stat instead of one per module
    (about 1 ms of every hook).  pip writes RECORD anew at every install,
    upgrade and reinstall, and nothing else changes an installed wheel's
    modules; an editable install or a working copy has no RECORD beside its
    engine/ folder, so its every module is stat'd.  None where there is none."""
    record = os.path.join(os.path.dirname(root), _DIST_INFO.format(version=__version__), "RECORD")
    try:
        st = os.stat(record)
    except OSError:
        return None
    return f"RECORD:{st.st_size}:{st.st_mtime_ns}"


def _walked_fingerprint():
    # Every hook pays for this walk: scandir (no os.walk, no relpath), and
    # __pycache__ folders are not listed (they hold no .py file).  The string
    # is the one os.walk + relpath gave, so existing cache keys stay valid.
    from ..base.paths import package_root_str

    parts = []
    folders = [(package_root_str(), "")]  # every module of the engine, whatever its package
    while folders:
        folder, rel = folders.pop()
        with os.scandir(folder) as entries:
            for e in entries:
                n = e.name
                if n.endswith(".py"):
                    st = os.stat(e.path)  # follows a link, as os.stat did
                    parts.append(f"{rel}{n}:{st.st_size}:{st.st_mtime_ns}")
                elif n != "__pycache__" and e.is_dir(follow_symlinks=False):  # as os.walk
                    folders.append((e.path, f"{rel}{n}{os.sep}"))
    return "|".join(sorted(parts))


def _newly_settled(entry):
    """True when a source the entry could not sign when it was stored (too
    recent, or not hashed in that process) can be signed now: after a fresh
    install or an edit, every later event would hash it again (37 files,
    about 1 ms of each event, after an install)."""
    import time

    settled = time.time_ns() - _SETTLED_NS
    sigs = entry.get("stats")
    for i, (src, _digest) in enumerate(entry["sources"]):
        if isinstance(sigs, list) and i < len(sigs) and sigs[i] is not None:
            continue
        hit = _DIGESTS.get(src)
        if hit is not None and max(hit[0][0], hit[0][3]) < settled:
            return True
    return False


def _resign(path, entry, encode):
    """Write the entry again with the signatures its sources have now (after
    _fresh hashed them); the next event then only stats them.  Best effort
    (atomic_write): an entry not rewritten is still fresh, only slower to check."""
    atomic_write(path, encode(_entry(entry["value"], entry["sources"])))


def folder():
    return os.path.join(cache_dir_str(), "profiles")


def entry_path(key_parts, suffix=".pickle"):
    key = sha256("\0".join([__version__, code_fingerprint(), *key_parts]).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return os.path.join(folder(), f"{key}{suffix}")


def folder_is_private(path=None, create=False):
    """True when the cache folder (or `path`) is a real folder of this user
    that nobody else can write to (engine/base/files.py)."""
    from engine.base.files import folder_is_private as private

    return private(path or folder(), create)


def _own_file(fh):
    st = os.fstat(fh.fileno())
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()


def load(key_parts):
    """The cached value, or None when absent, stale, unreadable or in a
    folder that is not private."""
    import pickle

    if not folder_is_private():
        return None
    try:
        path = entry_path(key_parts)
        with open(path, "rb") as fh:
            if not _own_file(fh):
                return None
            entry = pickle.load(fh)
        if not _fresh(entry):
            return None
        if _newly_settled(entry):
            _resign(path, entry, lambda e: pickle.dumps(e, protocol=pickle.HIGHEST_PROTOCOL))
        return entry["value"]
    except Exception:  # absent, truncated, from another version, a source gone: rebuild
        return None


def load_plain(key_parts, suffix=".json"):
    """Like load, for plain data kept as JSON: read without importing pickle
    (which imports re), for the hook hot path."""
    from engine.base.fastjson import loads

    if not folder_is_private():
        return None
    try:
        path = entry_path(key_parts, suffix)
        with open(path, encoding="utf-8") as fh:
            if not _own_file(fh):
                return None
            entry = loads(fh.read())
        if not _fresh(entry):
            return None
        if _newly_settled(entry):
            _resign(path, entry, _plain_bytes)
        return entry["value"]
    except Exception:
        return None


def _plain_bytes(data):
    """JSON bytes, without the json package where fastjson can (a hook
    re-signing an entry on the hot path)."""
    from engine.base.fastjson import dumps

    try:
        return dumps(data).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a file name): json escapes it
        return _json_bytes(data)


def _json_bytes(data):
    import json

    return json.dumps(data).encode("utf-8")


def store_plain(key_parts, value, sources, suffix=".json"):
    atomic_write(entry_path(key_parts, suffix), _json_bytes(_entry(value, sources)))


def store(key_parts, value, sources):
    import pickle

    atomic_write(entry_path(key_parts), pickle.dumps(_entry(value, sources), protocol=pickle.HIGHEST_PROTOCOL))
    evict()


def store_failure(key_parts, error, sources):
    """Remember that a profile failed with this error while its files (and
    the absence of the files it looked for) stay as they are."""
    from engine.base.errors import ValidationErrors

    errors = error.errors if isinstance(error, ValidationErrors) else [error]
    value = [[e.message, None if e.file is None else str(e.file), e.line, e.col] for e in errors]
    atomic_write(entry_path(key_parts, ".failed"), _json_bytes(_entry(value, sources)))


def load_failure(key_parts):
    """The UserError a profile failed with, while none of its files changed; else None."""
    from engine.base.errors import UserError, ValidationErrors

    value = load_plain(key_parts, ".failed")
    try:
        errors = [UserError(m, f, line, col) for m, f, line, col in value]
    except (TypeError, ValueError):  # absent or unreadable: load the profile
        return None
    if not errors:
        return None
    return errors[0] if len(errors) == 1 else ValidationErrors(errors)


class NotReady(Exception):
    """Another process is compiling this entry and did not finish in time."""


def compile_once(key_parts, build, wait_until=None, poll_ms=50):
    """build()'s value for key_parts, computed by one process at a time: a
    process that finds another one compiling (its lock file held) waits for
    it, until `wait_until` (a time.monotonic() value; None: as long as it
    takes), then reads the result from the cache; past `wait_until` it
    raises NotReady, so a hook goes on without the compiled profile instead
    of passing its deadline.  Without a private cache folder there is no
    lock: every process builds."""
    import time

    from engine.base.files import Locked

    lock = None
    if folder_is_private(create=True):
        try:
            lock = Locked(entry_path(key_parts, ".lock")).open()
        except OSError:
            lock = None
    if lock is None:
        return build()
    try:
        while not lock.acquire(block=wait_until is None):
            if time.monotonic() + poll_ms / 1000.0 >= wait_until:
                raise NotReady("another process is compiling this profile")
            time.sleep(poll_ms / 1000.0)
        value = load(key_parts)  # compiled by the process we waited for
        if value is not None:
            return value
        failed = load_failure(key_parts)
        if failed is not None:
            raise failed
        return build()
    finally:
        lock.close()  # a compiling child forked by build() holds the lock until it ends


def bring(keys, source_folder):
    """Copy the entries of `keys` ((key_parts, suffix) pairs) from another
    cache folder into this one, read, never written: the replay's throwaway
    world takes the user's compiled profile instead of compiling it again.
    Only from a private folder, only the reader's own regular files (no
    link followed); an entry brought is still checked fresh when loaded."""
    import shutil

    if not folder_is_private(source_folder) or not folder_is_private(create=True):
        return 0
    brought = 0
    for key_parts, suffix in keys:
        path = entry_path(key_parts, suffix)
        try:
            src = os.open(os.path.join(source_folder, os.path.basename(path)), os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # not compiled there
        try:
            with open(src, "rb") as fh:
                if not _own_file(fh):
                    continue
                dst = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with open(dst, "wb") as out:
                    shutil.copyfileobj(fh, out)
                brought += 1
        except OSError:
            continue  # already there, or unreadable: compiled in this folder if needed
    return brought


def evict():
    """Keep at most cache.max_entries compiled profiles (and as many of the
    other entries): the least recently written go."""
    try:
        from .settings import cache_limits

        keep = cache_limits()["max_entries"]
        by_suffix = {}
        with os.scandir(folder()) as it:
            for e in it:
                if e.name.startswith(".tmp-") or not e.is_file(follow_symlinks=False):
                    continue
                by_suffix.setdefault(os.path.splitext(e.name)[1], []).append((e.stat(follow_symlinks=False).st_mtime_ns, e.path))
        for entries in by_suffix.values():
            entries.sort(reverse=True)
            for _, path in entries[keep:]:
                try:
                    os.unlink(path)
                except OSError:
                    pass
    except Exception:  # a cache that cannot be trimmed is not an error
        pass


def atomic_write(path, data):
    """Write atomically (0600, inside a private folder); a cache that cannot
    be written, or a folder that is not private, is not an error: False."""
    from engine.base.files import replace_atomic

    if not folder_is_private(os.path.dirname(path), create=True):
        return False
    try:
        replace_atomic(path, data)
        return True
    except OSError:
        return False
