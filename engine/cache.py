"""On-disk cache of compiled profiles, keyed by the content of every YAML
file that went into them, so a hook process skips YAML, JSON Schema and the
tokenizer entirely when nothing changed."""

import hashlib
import os
import pickle
import tempfile

from . import __version__
from .paths import cache_dir


def file_digest(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def entry_path(key_parts):
    key = hashlib.sha256("\0".join([__version__, *key_parts]).encode()).hexdigest()[:32]
    return cache_dir() / "profiles" / f"{key}.pickle"


def load(key_parts):
    """The cached Profile, or None when absent, stale or unreadable."""
    path = entry_path(key_parts)
    try:
        with open(path, "rb") as fh:
            profile = pickle.load(fh)
    except Exception:  # absent, truncated, from another version: just rebuild
        return None
    try:
        for src, digest in profile.sources:
            if file_digest(src) != digest:
                return None
    except OSError:
        return None
    return profile


def store(key_parts, profile):
    """Write atomically; a cache that cannot be written is not an error."""
    path = entry_path(key_parts)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(profile, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
