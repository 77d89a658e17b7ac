"""On-disk cache of compiled profiles, keyed by the content of every YAML
file that went into them, so a hook process skips YAML, JSON Schema and the
tokenizer entirely when nothing changed.  os.path only (hot path)."""

import os

try:  # the bare C module: importing hashlib (OpenSSL) costs milliseconds on every hook
    from _sha256 import sha256
except ImportError:  # pragma: no cover - other Pythons
    from hashlib import sha256

from . import __version__
from .paths import cache_dir_str


_DIGESTS = {}  # path -> (stat signature, digest): a file is hashed once per process while unchanged


def file_digest(path):
    st = os.stat(path)
    sig = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
    hit = _DIGESTS.get(path)
    if hit is not None and hit[0] == sig:
        return hit[1]
    with open(path, "rb") as fh:
        digest = sha256(fh.read()).hexdigest()
    _DIGESTS[path] = (sig, digest)
    return digest


_CODE = []


def code_fingerprint():
    """Size and mtime of every engine module: a cache written by other code
    (an upgrade, a working copy being edited) is never read back.  Computed
    once per process (the code a process runs does not change under it)."""
    if not _CODE:
        _CODE.append(_code_fingerprint())
    return _CODE[0]


def _code_fingerprint():
    root = os.path.dirname(os.path.abspath(__file__))
    parts = []
    for folder, _dirs, names in os.walk(root):
        for n in names:
            if n.endswith(".py"):
                st = os.stat(os.path.join(folder, n))
                parts.append(f"{os.path.relpath(os.path.join(folder, n), root)}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(sorted(parts))


def entry_path(key_parts, suffix=".pickle"):
    key = sha256("\0".join([__version__, code_fingerprint(), *key_parts]).encode()).hexdigest()[:32]
    return os.path.join(cache_dir_str(), "profiles", f"{key}{suffix}")


def load(key_parts):
    """The cached value, or None when absent, stale or unreadable."""
    import pickle

    try:
        with open(entry_path(key_parts), "rb") as fh:
            entry = pickle.load(fh)
        for src, digest in entry["sources"]:
            if file_digest(src) != digest:
                return None
        return entry["value"]
    except Exception:  # absent, truncated, from another version, a source gone: rebuild
        return None


def load_plain(key_parts):
    """Like load, for plain data kept as JSON: read without importing pickle
    (which imports re), for the hook hot path."""
    from .hooks.fastjson import loads

    try:
        with open(entry_path(key_parts, ".json"), encoding="utf-8") as fh:
            entry = loads(fh.read())
        for src, digest in entry["sources"]:
            if file_digest(src) != digest:
                return None
        return entry["value"]
    except Exception:
        return None


def store_plain(key_parts, value, sources):
    import json

    _atomic_write(entry_path(key_parts, ".json"), json.dumps({"sources": sources, "value": value}).encode("utf-8"))


def store(key_parts, value, sources):
    import pickle

    _atomic_write(entry_path(key_parts), pickle.dumps({"sources": sources, "value": value}, protocol=pickle.HIGHEST_PROTOCOL))


def _atomic_write(path, data):
    """Write atomically; a cache that cannot be written is not an error."""
    import tempfile

    tmp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass
