"""The content-addressed store: blobs/<key>.zst (zstd), meta/<key>.json
(the sidecar: sources, sizes, pin, sessions, reference count), audit.jsonl
(append-only) and last_key.

Many hook processes write at once: a blob is written to a temporary file and
renamed into place (same bytes for the same key, so the last rename wins
harmlessly); a sidecar is read, changed and replaced under an exclusive
lock on its own lock file, so no update is lost.  A reader checks the sha256
of what it decompresses: a torn or corrupt blob is logged and treated as
missing, never returned.  Folders are 0700, files 0600.

Memory stays bounded whatever the size: `put_stream` stores from a file a
chunk at a time and `write_to` reads back the same way (`put` and `get`
take and give whole bytes, for what is in memory already).  Every file is
written under a `.tmp-*` name first: what a killed writer leaves is
counted by `temp_files` and removed by `clean_temp` (prune and gc).  After
each synced write the size bound (prune.bound) is applied.
"""

import json
import os
import sys
import time

from engine.base.files import Locked, open_private
from .keys import is_key, key_of
from .secrets import Secrets

PIN_LEVELS = ("none", "soft", "hard")
# What every temporary file of the cache is named with (an interface with
# stats, prune and gc, which count and clean them), never a setting.
TMP_PREFIX = ".tmp-"


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
        from engine.base.files import private_dir

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
        `dry_run`: only the key, nothing written.  `sync=False`: no fsync, no
        last_key and no size bound (a batch, such as purge, does those once
        at its end)."""
        if self.secrets.found_in(data):
            return None
        key = key_of(data)
        if dry_run:
            return key
        self.ensure()
        if not self.verify(key):
            self._write_blob(key, data, sync)
        return self._record(key, len(data), count_lines(data), _names(data, key), source, session, pin, sync)

    def put_stream(self, fh, source=None, session=None, pin=None, sync=True, size=None):
        """Store what the binary file `fh` holds from where it stands to its
        end (at most `size` bytes) in bounded memory: read `store.chunk_bytes`
        at a time, each chunk hashed, scanned for secrets (with the last
        `store.secret_overlap_bytes` of the previous one, so a secret across
        a boundary is seen) and compressed into a temporary blob, renamed
        into place once complete.  The key, or None when the data holds a
        secret (then nothing is kept)."""
        import hashlib
        import tempfile

        import zstandard

        from .stub import keys_in

        conf = self.settings["store"]
        chunk, overlap = conf["chunk_bytes"], conf["secret_overlap_bytes"]
        self.ensure()
        digest, nbytes, newlines, last, tail, names = hashlib.sha256(), 0, 0, b"", b"", set()
        fd, tmp = tempfile.mkstemp(dir=self.blobs, prefix=TMP_PREFIX)
        try:
            with os.fdopen(fd, "wb") as raw:
                writer = zstandard.ZstdCompressor(level=self.settings["zstd_level"]).stream_writer(raw, closefd=False)
                with writer:
                    while True:
                        want = chunk if size is None else min(chunk, size - nbytes)
                        data = fh.read(want) if want > 0 else b""
                        if not data:
                            break
                        window = tail + data
                        if self.secrets.found_in(window):
                            raise _SecretFound()
                        if b"sha256:" in window:
                            names |= keys_in(window)
                        tail = window[-overlap:]
                        digest.update(data)
                        nbytes += len(data)
                        newlines += data.count(b"\n")
                        last = data[-1:]
                        writer.write(data)
                raw.flush()
                if sync:
                    os.fsync(raw.fileno())
            key = digest.hexdigest()
            if self.verify(key):
                os.unlink(tmp)  # the same bytes are stored already
            else:
                os.chmod(tmp, 0o600)
                os.replace(tmp, self.blob_path(key))
        except _SecretFound:
            os.unlink(tmp)
            return None
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        lines = newlines + (1 if nbytes and last != b"\n" else 0)
        return self._record(key, nbytes, lines, sorted(names - {key}), source, session, pin, sync)

    def _record(self, key, nbytes, lines, names, source, session, pin, sync):
        """The sidecar and audit line of a blob just stored; then the size bound."""
        now = time.time()
        src = dict(source or {})
        if src.get("command"):
            src["command"] = self.secrets.redact(src["command"])
        src["at"] = now

        def change(meta):
            if meta is None:
                meta = {"key": key, "bytes": nbytes, "lines": lines, "created": now,
                        "pin": {"level": "none", "reason": ""}, "refs": 0, "sessions": [], "sources": [],
                        "names": names}
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
        self.audit("put", key, bytes=nbytes, tool=src.get("tool"), session=session)
        if sync:
            _atomic_write(self.last_key_path, key.encode())
            self.bound(keep={key})
        return key

    def bound(self, keep=()):
        """Apply `store.max_size_mb` (prune.py decides what goes); the keys deleted."""
        from .prune import bound

        return bound(self, keep)

    def _write_blob(self, key, data, sync=True):
        import zstandard

        blob = zstandard.ZstdCompressor(level=self.settings["zstd_level"]).compress(data)
        _atomic_write(self.blob_path(key), blob, sync)

    def update_meta(self, key, change, sync=True):
        """Read, change and replace one sidecar under its lock; `change(meta
        or None)` returns the new meta, or None to leave it as it is."""
        self.ensure()
        with Locked(os.path.join(self.locks, key + ".lock")):
            new = change(self.meta(key))
            if new is not None:
                _atomic_write(self.meta_path(key), json.dumps(new, sort_keys=True).encode(), sync)
            return new

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
        """The exact bytes stored under key, or None (absent, torn, corrupt).
        Whole in memory: for a small blob; `write_to` streams."""
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

    def chunks(self, key):
        """The blob's bytes, decompressed `store.chunk_bytes` at a time,
        unchecked (FileNotFoundError, zstandard.ZstdError): `verify` first."""
        import zstandard

        size = self.settings["store"]["chunk_bytes"]
        with open(self.blob_path(key), "rb") as fh, zstandard.ZstdDecompressor().stream_reader(fh) as reader:
            while True:
                data = reader.read(size)
                if not data:
                    return
                yield data

    def verify(self, key, quiet=True):
        """Is the blob there, whole, and its content's sha256 its key?  Read
        in chunks: memory stays bounded whatever its size."""
        import hashlib

        import zstandard

        digest = hashlib.sha256()
        try:
            for data in self.chunks(key):
                digest.update(data)
        except FileNotFoundError:
            return False
        except zstandard.ZstdError as exc:
            if not quiet:
                self.log(f"blob {key} is torn or corrupt ({exc}); treated as missing")
            return False
        if digest.hexdigest() != key:
            if not quiet:
                self.log(f"blob {key} does not match its key; treated as missing")
            return False
        return True

    def write_to(self, key, out, first=1, last=None):
        """Write the stored bytes (lines `first` to `last`, 1-based, inclusive;
        None: to the end) to the binary stream `out`, in chunks, after a
        first pass checked them against the key.  False when the blob is
        absent, torn or corrupt (then nothing is written)."""
        if not self.verify(key, quiet=False):
            return False
        whole = first <= 1 and last is None
        for data in (self.chunks(key) if whole else _line_range(self.chunks(key), first, last)):
            out.write(data)
        return True

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

    def temp_files(self):
        """[(path, bytes, mtime)] of the `.tmp-*` files in the cache's folders:
        a writer's work in progress, or what a killed one left."""
        out = []
        for d in (self.root, self.blobs, self.metas, self.locks, os.path.join(self.root, "pins")):
            try:
                with os.scandir(d) as it:
                    for e in it:
                        if e.name.startswith(TMP_PREFIX):
                            try:
                                st = e.stat(follow_symlinks=False)
                            except FileNotFoundError:
                                continue  # renamed into place meanwhile
                            out.append((e.path, st.st_size, st.st_mtime))
            except FileNotFoundError:
                continue
        return out

    def clean_temp(self, grace_seconds, dry_run=False, now=None):
        """Remove the `.tmp-*` files not written to for `grace_seconds` (a
        live writer's file is younger: it writes as it goes); (count, bytes)."""
        now = time.time() if now is None else now
        count = freed = 0
        for path, size, mtime in self.temp_files():
            if now - mtime < grace_seconds:
                continue
            if not dry_run:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    continue
            count += 1
            freed += size
        if count and not dry_run:
            self.audit("clean_temp", None, files=count, freed=freed)
        return count, freed

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


class _SecretFound(Exception):
    pass


def _line_range(chunks, first, last):
    """The bytes of lines `first`..`last` (1-based; last None: to the end) of
    a stream given in chunks, without holding more than one chunk."""
    line = 1
    for data in chunks:
        pos, n = 0, len(data)
        while pos < n:
            if last is not None and line > last:
                return
            nl = data.find(b"\n", pos)
            end = n if nl < 0 else nl + 1
            if line >= first:
                yield data[pos:end]
            if nl >= 0:
                line += 1
            pos = end


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
    from engine.base.files import replace_atomic

    replace_atomic(path, data, 0o600, sync=sync, prefix=TMP_PREFIX)
