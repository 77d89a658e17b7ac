"""The content-addressed store: blobs/<key>.zst (zstd), meta/<key>.json
(the sidecar: sources, sizes, pin, sessions, reference count), audit.jsonl
(append-only) and last_key.

Many hook processes write at once: a blob is written to a temporary file and
renamed into place (same bytes for the same key, so the last rename wins
harmlessly); a sidecar is read, changed and replaced under an exclusive
lock on its own lock file, so no update is lost.  A reader checks the sha256
of what it decompresses: a torn or corrupt blob is logged and treated as
missing, never returned.  Folders are 0700, files 0600.
"""

import fcntl
import json
import os
import sys
import time

from ..hooks.log import open_private
from .keys import is_key, key_of
from .secrets import Secrets

PIN_LEVELS = ("none", "soft", "hard")


def _stderr_log(message):
    print(f"engine cache: {message}", file=sys.stderr)


class Store:
    def __init__(self, settings, root=None, log=None):
        from .config import folder

        self.settings = settings
        self.root = root or folder(settings)
        self.log = log or _stderr_log
        self.secrets = Secrets(settings)
        self.blobs = os.path.join(self.root, "blobs")
        self.metas = os.path.join(self.root, "meta")
        self.locks = os.path.join(self.root, "locks")
        self.audit_path = os.path.join(self.root, "audit.jsonl")
        self.last_key_path = os.path.join(self.root, "last_key")

    # -- layout -------------------------------------------------------------
    def ensure(self):
        if getattr(self, "_ensured", False):  # once per process: a purge stores hundreds of blobs
            return
        from ..hooks.log import private_dir

        for d in (self.root, self.blobs, self.metas, self.locks):
            private_dir(d)
            os.chmod(d, 0o700)
        self._ensured = True

    def blob_path(self, key):
        if not is_key(key):
            raise ValueError(f"not a cache key: {key!r}")
        return os.path.join(self.blobs, key + ".zst")

    def meta_path(self, key):
        if not is_key(key):
            raise ValueError(f"not a cache key: {key!r}")
        return os.path.join(self.metas, key + ".json")

    def keys(self):
        try:
            names = os.listdir(self.metas)
        except FileNotFoundError:
            return []
        return sorted(n[:-5] for n in names if n.endswith(".json") and is_key(n[:-5]))

    # -- writing -------------------------------------------------------------
    def put(self, data, source=None, session=None, pin=None, dry_run=False, sync=True):
        """Store `data` (bytes) once; return its key, or None when it holds a
        secret (never cached).  `source`: tool, command, path, exit, cwd.
        `dry_run`: only the key, nothing written.  `sync=False`: no fsync and
        no last_key (a batch, such as purge, syncs once at its end)."""
        if self.secrets.found_in(data):
            return None
        key = key_of(data)
        if dry_run:
            return key
        self.ensure()
        if self.get(key, quiet=True) is None:
            self._write_blob(key, data, sync)
        now = time.time()
        src = dict(source or {})
        if src.get("command"):
            src["command"] = self.secrets.redact(src["command"])
        src["at"] = now

        def change(meta):
            if meta is None:
                meta = {"key": key, "bytes": len(data), "lines": count_lines(data), "created": now,
                        "pin": {"level": "none", "reason": ""}, "refs": 0, "sessions": [], "sources": [],
                        "names": _names(data, key)}
            meta["refs"] += 1
            meta["last_used"] = now
            if session and session not in meta["sessions"]:
                meta["sessions"].append(session)
            same = [s for s in meta["sources"] if {k: v for k, v in s.items() if k != "at"} == {k: v for k, v in src.items() if k != "at"}]
            if not same:
                meta["sources"].append(src)
            if pin and PIN_LEVELS.index(pin["level"]) >= PIN_LEVELS.index(meta["pin"]["level"]):
                meta["pin"] = {"level": pin["level"], "reason": pin.get("reason", "")}
            meta["stored_bytes"] = _size(self.blob_path(key))
            return meta

        self.update_meta(key, change, sync)
        self.audit("put", key, bytes=len(data), tool=src.get("tool"), session=session)
        if sync:
            _atomic_write(self.last_key_path, key.encode())
        return key

    def _write_blob(self, key, data, sync=True):
        import zstandard

        blob = zstandard.ZstdCompressor(level=self.settings["zstd_level"]).compress(data)
        _atomic_write(self.blob_path(key), blob, sync)

    def update_meta(self, key, change, sync=True):
        """Read, change and replace one sidecar under its lock; `change(meta
        or None)` returns the new meta, or None to leave it as it is."""
        self.ensure()
        lock = open_private(os.path.join(self.locks, key + ".lock"), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            new = change(self.meta(key))
            if new is not None:
                _atomic_write(self.meta_path(key), json.dumps(new, sort_keys=True).encode(), sync)
            return new
        finally:
            os.close(lock)

    def audit(self, action, key, **fields):
        """One line appended to audit.jsonl (a single write of one short line:
        concurrent appends do not interleave)."""
        self.ensure()
        rec = {"at": time.time(), "action": action, "key": key, **{k: v for k, v in fields.items() if v is not None}}
        line = (json.dumps(rec, sort_keys=True) + "\n").encode()
        fd = open_private(self.audit_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            os.write(fd, line)
        finally:
            os.close(fd)

    def blob_size(self, key):
        """The blob's size on disk: what deleting it frees."""
        return _size(self.blob_path(key))

    def delete(self, key, reason):
        """Remove a blob and its sidecar; the blob's size on disk, freed."""
        freed = _size(self.blob_path(key))
        for p in (self.blob_path(key), self.meta_path(key), os.path.join(self.locks, key + ".lock")):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
        self.audit("delete", key, reason=reason, freed=freed)
        return freed

    # -- reading -------------------------------------------------------------
    def get(self, key, quiet=False):
        """The exact bytes stored under key, or None (absent, torn, corrupt)."""
        import zstandard

        try:
            with open(self.blob_path(key), "rb") as fh:
                blob = fh.read()
        except FileNotFoundError:
            return None
        try:
            data = zstandard.ZstdDecompressor().decompress(blob, max_output_size=1 << 34)
        except zstandard.ZstdError as exc:
            if not quiet:
                self.log(f"blob {key} is torn or corrupt ({exc}); treated as missing")
            return None
        if key_of(data) != key:
            if not quiet:
                self.log(f"blob {key} does not match its key; treated as missing")
            return None
        return data

    def meta(self, key):
        try:
            with open(self.meta_path(key), "rb") as fh:
                return json.loads(fh.read())
        except FileNotFoundError:
            return None
        except ValueError:
            self.log(f"metadata of {key} is unreadable; treated as missing")
            return None

    def touch(self, key):
        def change(meta):
            if meta is None:
                return None
            meta["last_used"] = time.time()
            return meta

        self.update_meta(key, change)

    def last_key(self):
        try:
            with open(self.last_key_path, "rb") as fh:
                key = fh.read().decode("ascii", "replace").strip()
        except FileNotFoundError:
            return None
        return key if is_key(key) else None

    def disk_bytes(self):
        """The sum of the blob sizes on disk (what prune accounts in)."""
        total = 0
        try:
            with os.scandir(self.blobs) as it:
                for e in it:
                    if e.name.endswith(".zst"):
                        total += e.stat().st_size
        except FileNotFoundError:
            pass
        return total


def _names(data, key):
    """The keys a blob names (a cached output holding a stub): gc keeps them
    while this blob is kept, without reading the blob back."""
    if b"sha256:" not in data:
        return []
    from .stub import keys_in

    return sorted(keys_in(data) - {key})


def count_lines(data):
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


def _size(path):
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0


def _atomic_write(path, data, sync=True):
    import tempfile

    folder = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if sync:
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
