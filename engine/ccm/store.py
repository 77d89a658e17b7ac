"""The store: blobs/<key>.zst (zstd), meta/<key>.json (the sidecar:
origin, sources, sizes, pin, sessions, reference count), audit.jsonl
(append-only) and last_key.  A key is a keyed hash of the entry's project
and bytes (keys.py); the project is the entry's origin (origin.py).

Many hook processes write at once, and gc, prune and the size bound delete
at once: every change to one key (its blob placed, its sidecar changed,
both deleted) is made under that key's lock (one of 256 lock files, picked
by the key's first two digits: never removed, so two processes can never
hold two different files for one key).  A blob is written to a temporary
file and renamed into place before its sidecar says it is there; a delete
removes the sidecar first, so what a killed process leaves is at worst a
blob without a sidecar (an orphan, which gc, prune and the bound remove
once it is older than their grace period and nothing names it).  A reader
checks the key of what it decompresses: a torn or corrupt blob is logged
and treated as missing, never returned.  Folders are 0700, files 0600.

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

from engine.base.files import Locked, open_append, rotate_past

from . import keys
from .keys import is_key
from .secrets import Secrets

PIN_LEVELS = ("none", "soft", "hard")
# What every temporary file of the cache is named with (an interface with
# stats, prune and gc, which count and clean them), never a setting.
TMP_PREFIX = ".tmp-"
# The secret of a dry run's keys when the user's is not made yet (never stored).
_THROWAWAY = os.urandom(32)


def _stderr_log(message):
    print(f"engine cache: {message}", file=sys.stderr)


class Store:
    def __init__(self, settings, root=None, log=None, secret=None):
        """`secret`: the per-user secret keys are made with (default: the
        user's, userkey.py, read on the first write or check)."""
        from .config import folder

        self.settings = settings
        self.root = root or folder(settings)
        self.log = log or _stderr_log
        self.secrets = Secrets(settings)
        self._secret = secret
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

    def lock(self, key):
        """The lock every change to `key` is made under."""
        if not is_key(key):
            raise ValueError(f"not a cache key: {key!r}")
        return Locked(os.path.join(self.locks, key[:2] + ".lock"))

    def keys(self):
        """The keys with a sidecar: the entries."""
        return sorted(_keys_in(self.metas, ".json"))

    def blob_keys(self):
        """The keys with a blob (an entry's, or an orphan's)."""
        return sorted(_keys_in(self.blobs, ".zst"))

    # -- keys ------------------------------------------------------------------
    def secret(self, create=True):
        """The per-user secret; with `create` off and none made yet, a
        throwaway one (keys of a dry run, which writes nothing)."""
        if self._secret is None:
            from .userkey import secret

            got = secret(create)
            if got is None:
                return _THROWAWAY
            self._secret = got
        return self._secret

    def secret_id(self):
        from .userkey import secret_id

        return secret_id(self.secret())

    def project_for(self, project=None, source=None):
        """The project an output belongs to: `project` (a folder), else the
        source's cwd, else the working folder; as origin.py finds it."""
        from .origin import project_of

        return project_of(project or (source or {}).get("cwd"))

    def key_for(self, data, project, create=True):
        return keys.key_of(data, self.secret(create), project)

    def hasher_for(self, meta):
        """The hash object an entry's key is checked with; None when its key
        was made under another secret than this user's now (said in the log)."""
        from .origin import origin

        scheme = keys.scheme_of(meta)
        if scheme == keys.LEGACY:
            return keys.hasher(scheme)
        if scheme != keys.KEYED or not isinstance(origin(meta), str):
            self.log(f"entry {meta.get('key')}: its sidecar names no key scheme this engine knows; treated as missing")
            return None
        if meta.get("secret_id") != self.secret_id():
            self.log(f"entry {meta.get('key')} was stored under another per-user secret than "
                     f"{_secret_path()}; it cannot be checked (set ENGINE_STATE_DIR as when it was stored)")
            return None
        return keys.hasher(scheme, self.secret(), origin(meta))

    # -- writing -------------------------------------------------------------
    def put(self, data, source=None, session=None, pin=None, dry_run=False, sync=True, project=None):
        """Store `data` (bytes) once for `project` (a folder: its project is
        the entry's origin; default, see project_for); return its key, or
        None when it holds a secret (never cached).  `source`: tool,
        command, path, exit, cwd.  `dry_run`: only the key, nothing written.
        `sync=False`: no fsync, no last_key and no size bound (a batch, such
        as purge, does those once at its end)."""
        if self._holds_secret(data):
            return None
        project = self.project_for(project, source)
        key = self.key_for(data, project, create=not dry_run)
        if dry_run:
            return key
        self.ensure()

        def place(meta):
            if meta is None or not self.verify(key, meta=meta):
                self._write_blob(key, data, sync)

        names = _names(data, key)
        return self._record(key, len(data), count_lines(data), names, source, session, pin, sync, project, place)

    def _holds_secret(self, data):
        """Does `data` hold a secret?  Scanned as put_stream scans a file:
        `store.chunk_bytes` at a time, each with the last
        `store.secret_overlap_bytes` of the one before, so the scan holds a
        chunk's words, never the whole output's (a hook's 30 MB tool output
        took 400 MB to scan whole)."""
        conf = self.settings["store"]
        chunk, overlap = conf["chunk_bytes"], conf["secret_overlap_bytes"]
        if len(data) <= chunk:
            return self.secrets.found_in(data)
        view = memoryview(data)
        return any(self.secrets.found_in(bytes(view[max(0, at - overlap):at + chunk]))
                   for at in range(0, len(data), chunk))

    def put_stream(self, fh, source=None, session=None, pin=None, sync=True, size=None, project=None):
        """Store what the binary file `fh` holds from where it stands to its
        end (at most `size` bytes) in bounded memory: read `store.chunk_bytes`
        at a time, each chunk hashed, scanned for secrets (with the last
        `store.secret_overlap_bytes` of the previous one, so a secret across
        a boundary is seen) and compressed into a temporary blob, renamed
        into place once complete.  The key, or None when the data holds a
        secret (then nothing is kept)."""
        import tempfile

        project = self.project_for(project, source)
        self.ensure()
        fd, tmp = tempfile.mkstemp(dir=self.blobs, prefix=TMP_PREFIX)
        try:
            with os.fdopen(fd, "wb") as raw:
                got = self._compress_stream(fh, raw, keys.hasher(keys.KEYED, self.secret(), project), size)
                raw.flush()
                if sync:
                    os.fsync(raw.fileno())
            if got is None:
                return None  # a secret: nothing is kept
            key, nbytes, lines, names = got
            os.chmod(tmp, 0o600)

            def place(meta):
                os.replace(tmp, self.blob_path(key))  # the bytes just hashed: whole, whatever was there

            key = self._record(key, nbytes, lines, sorted(names - {key}), source, session, pin, sync, project, place)
            tmp = None
            return key
        finally:
            if tmp is not None:
                _unlink(tmp)

    def _compress_stream(self, fh, raw, digest, size):
        """Copy `fh` (at most `size` bytes) compressed into `raw`, hashing it
        with `digest`: (key, bytes, lines, keys named), or None for a secret."""
        import zstandard

        from .stub import keys_in

        conf = self.settings["store"]
        chunk, overlap = conf["chunk_bytes"], conf["secret_overlap_bytes"]
        nbytes, newlines, last, tail, names = 0, 0, b"", b"", set()
        writer = zstandard.ZstdCompressor(level=self.settings["zstd_level"]).stream_writer(raw, closefd=False)
        with writer:
            while True:
                want = chunk if size is None else min(chunk, size - nbytes)
                data = fh.read(want) if want > 0 else b""
                if not data:
                    break
                window = tail + data
                if self.secrets.found_in(window):
                    return None
                if b"sha256:" in window:
                    names |= keys_in(window)
                tail = window[-overlap:]
                digest.update(data)
                nbytes += len(data)
                newlines += data.count(b"\n")
                last = data[-1:]
                writer.write(data)
        lines = newlines + (1 if nbytes and last != b"\n" else 0)
        return digest.hexdigest(), nbytes, lines, names

    def _record(self, key, nbytes, lines, names, source, session, pin, sync, project, place):
        """Under the key's lock: the blob placed (`place(old sidecar)`), then
        its sidecar; then the audit line and the size bound."""
        now = time.time()
        src = dict(source or {})
        if src.get("command"):
            src["command"] = self.secrets.redact(src["command"])
        src["at"] = now
        with self.lock(key):
            old = self.meta(key)
            place(old)
            meta = old if old is not None else self._new_meta(key, nbytes, lines, names, now, project)
            _count_use(meta, src, session, pin, now)
            meta["stored_bytes"] = _size(self.blob_path(key))
            _atomic_write(self.meta_path(key), json.dumps(meta, sort_keys=True).encode(), sync)
        self.audit("put", key, bytes=nbytes, tool=src.get("tool"), session=session)
        if sync:
            _atomic_write(self.last_key_path, key.encode())
            self.bound(keep={key}, deadline_seconds=self.settings["store"]["bound_scan_seconds"])
        return key

    def _new_meta(self, key, nbytes, lines, names, now, project):
        return {"key": key, "bytes": nbytes, "lines": lines, "created": now,
                "pin": {"level": "none", "reason": ""}, "refs": 0, "sessions": [], "sources": [],
                "names": names, "key_scheme": keys.KEYED, "origin": {"project": project},
                "secret_id": self.secret_id()}

    def bound(self, keep=(), deadline_seconds=None):
        """Apply `store.max_size_mb` (prune.py decides what goes); the keys deleted."""
        from .prune import bound

        return bound(self, keep, deadline_seconds)

    def _write_blob(self, key, data, sync=True):
        import zstandard

        blob = zstandard.ZstdCompressor(level=self.settings["zstd_level"]).compress(data)
        _atomic_write(self.blob_path(key), blob, sync)

    def update_meta(self, key, change, sync=True):
        """Read, change and replace one sidecar under its key's lock;
        `change(meta or None)` returns the new meta, or None to leave it as it is."""
        self.ensure()
        with self.lock(key):
            new = change(self.meta(key))
            if new is not None:
                _atomic_write(self.meta_path(key), json.dumps(new, sort_keys=True).encode(), sync)
            return new

    def write_private(self, path, data, sync=False):
        """Replace a file of the cache folder (0600, under a `.tmp-*` name first)."""
        _atomic_write(path, data, sync)

    def audit(self, action, key, **fields):
        """One line appended to audit.jsonl (a single write of one short line:
        concurrent appends do not interleave).  A record of what was done, not
        part of it: one it cannot append to (a FIFO there, never waited on)
        is a log line, and the entry stays stored."""
        self.ensure()
        rec = {"at": time.time(), "action": action, "key": key, **{k: v for k, v in fields.items() if v is not None}}
        line = (json.dumps(rec, sort_keys=True) + "\n").encode()
        try:
            fd = open_append(self.audit_path)
        except OSError as exc:
            self.log(f"audit line of {action} {key} not written: {exc}")
            return
        try:
            os.write(fd, line)
            # a record, not the user's data: it moves to audit.jsonl.1 past store.audit_max_bytes
            rotate_past(self.audit_path, fd, self.settings["store"]["audit_max_bytes"])
        finally:
            os.close(fd)

    def blob_size(self, key):
        """The blob's size on disk: what deleting it frees."""
        return _size(self.blob_path(key))

    def delete(self, key, reason, still=None):
        """Remove an entry (its sidecar first, then its blob) under its
        key's lock, when `still(sidecar or None)`, asked again under the
        lock, says it may still go (None: it may).  The blob's size on disk,
        freed; None when it was kept."""
        self.ensure()
        with self.lock(key):
            if still is not None and not still(self.meta(key)):
                return None
            freed = _size(self.blob_path(key))
            # the per-key lock file of an older version goes too
            for p in (self.meta_path(key), self.blob_path(key), os.path.join(self.locks, key + ".lock")):
                _unlink(p)
        self.audit("delete", key, reason=reason, freed=freed)
        return freed

    # -- reading -------------------------------------------------------------
    def get(self, key, quiet=False):
        """The exact bytes stored under key, or None (absent, torn, corrupt,
        no sidecar).  Whole in memory: for a small blob; `write_to` streams."""
        import zstandard

        meta = self.meta(key)
        try:
            with open(self.blob_path(key), "rb") as fh:
                blob = fh.read()
        except FileNotFoundError:
            return None
        if meta is None:
            return None  # an orphan: nothing says how its key was made
        try:
            data = zstandard.ZstdDecompressor().decompress(blob, max_output_size=1 << 34)
        except zstandard.ZstdError as exc:
            if not quiet:
                self.log(f"blob {key} is torn or corrupt ({exc}); treated as missing")
            return None
        digest = self.hasher_for(meta)
        if digest is None:
            return None
        digest.update(data)
        if digest.hexdigest() != key:
            if not quiet:
                self.log(f"blob {key} does not match its key; treated as missing")
            return None
        return data

    def chunks(self, key, fh=None):
        """The blob's bytes, decompressed `store.chunk_bytes` at a time,
        unchecked (FileNotFoundError, zstandard.ZstdError): `verify` first.
        From `fh`, the blob already open, read from its start, when given."""
        if fh is None:
            with open(self.blob_path(key), "rb") as own:
                yield from self.chunks(key, own)
            return
        import zstandard

        size = self.settings["store"]["chunk_bytes"]
        fh.seek(0)
        with zstandard.ZstdDecompressor().stream_reader(fh, closefd=False) as reader:
            while True:
                data = reader.read(size)
                if not data:
                    return
                yield data

    def verify(self, key, quiet=True, meta=None, fh=None):
        """Is the blob there, whole, and its content's key its key (checked
        as its sidecar `meta`, read when not given, says)?  Read in chunks:
        memory stays bounded whatever its size.  `fh`: the blob, open."""
        import zstandard

        meta = self.meta(key) if meta is None else meta
        digest = self.hasher_for(meta) if meta is not None else None
        if digest is None:
            return False
        try:
            for data in self.chunks(key, fh):
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
        absent, torn or corrupt (then nothing is written).  Both passes read
        the one file opened first: a gc that deletes the blob meanwhile
        takes its name, not what this read holds open."""
        try:
            fh = open(self.blob_path(key), "rb")
        except FileNotFoundError:
            return False
        with fh:
            if not self.verify(key, quiet=False, fh=fh):
                return False
            whole = first <= 1 and last is None
            for data in (self.chunks(key, fh) if whole else _line_range(self.chunks(key, fh), first, last)):
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
        """A read: the entry's grace period starts again (gc, prune and the bound keep it)."""
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


def _count_use(meta, src, session, pin, now):
    """One more store of an entry: its count, time, session, source and pin."""
    meta["refs"] += 1
    meta["last_used"] = now
    if session and session not in meta["sessions"]:
        meta["sessions"].append(session)
    plain = {k: v for k, v in src.items() if k != "at"}
    if not any({k: v for k, v in s.items() if k != "at"} == plain for s in meta["sources"]):
        meta["sources"].append(src)
    if pin and PIN_LEVELS.index(pin["level"]) >= PIN_LEVELS.index(meta["pin"]["level"]):
        meta["pin"] = {"level": pin["level"], "reason": pin.get("reason", "")}


def _keys_in(folder, suffix):
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    n = len(suffix)
    return [name[:-n] for name in names if name.endswith(suffix) and is_key(name[:-n])]


def _secret_path():
    from .userkey import path

    return path()


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


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _atomic_write(path, data, sync=True):
    from engine.base.files import replace_atomic

    replace_atomic(path, data, 0o600, sync=sync, prefix=TMP_PREFIX)
