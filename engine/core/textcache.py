"""Results kept between processes, so repeated work costs a file read:
compressed text per (compiled profile, level, content), token counts per
(encoding, content), rendered refresh banners, and texts with their secrets
redacted per (redaction patterns, content).

Every entry is one file named by a SHA-256 key, written atomically (0600, in
0700 folders).  The folder is bounded: after a write that takes it over the
profile's `cache.max_bytes`, the least recently written entries go until it
is at `cache.prune_to` of that.  os.path only: the hook hot path reads here.
"""

import os

from engine.base.paths import cache_dir_str

from .cache import sha256

KINDS = ("text", "tokens", "render", "redacted")
_REDACTION: list = []  # this process's key of the redaction patterns (see redacted)


def key(*parts):
    """One hex key for several strings (NUL-separated: no two tuples collide)."""
    return sha256("\0".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _root():
    return os.path.join(cache_dir_str(), "results")


def _path(kind, k):
    return os.path.join(_root(), kind, k)


def get(kind, k):
    """The stored text, or None."""
    try:
        with open(_path(kind, k), "rb") as fh:
            return fh.read().decode("utf-8", "surrogatepass")
    except (OSError, UnicodeDecodeError):
        return None


# Bytes in the results folder as this process last counted them, plus what
# it wrote since: the folder is scanned again only when that passes the
# bound, not at every write (a refresh of 500 new rule files writes 500
# entries into a folder of thousands).
_estimate: dict[str, int] = {}  # results folder -> bytes


def put(kind, k, text, limits=None):
    """Store text atomically; a cache that cannot be written is not an error."""
    from .cache import atomic_write

    data = text.encode("utf-8", "surrogatepass")
    if atomic_write(_path(kind, k), data) and limits:
        root = _root()
        known = _estimate.get(root)
        if known is not None:
            known = _estimate[root] = known + len(data)
        if known is None or known > limits["max_bytes"]:
            _estimate[root] = prune(limits["max_bytes"], limits["prune_to"])


def prune(max_bytes, prune_to):
    """Keep the results folder under max_bytes: oldest entries go first.
    Returns the bytes left in it."""
    entries, total = [], 0
    for kind in KINDS:
        folder = os.path.join(_root(), kind)
        try:
            with os.scandir(folder) as it:
                for e in it:
                    try:
                        st = e.stat()
                    except OSError:
                        continue
                    entries.append((st.st_mtime_ns, st.st_size, e.path))
                    total += st.st_size
        except OSError:
            continue
    if total <= max_bytes:
        return total
    target = int(max_bytes * prune_to)
    entries.sort()
    for _mtime, size, path in entries:
        if total <= target:
            break
        try:
            os.unlink(path)
            total -= size
        except OSError:
            pass
    return total


def count_tokens(text, encoding, limits=None):
    """Token count of text, from the cache when this text was counted before:
    a repeat never loads the encoding (about 0.3 s the first time)."""
    k = key("tokens", encoding, text)
    hit = get("tokens", k)
    if hit is not None and hit.isdigit():
        return int(hit)
    from engine.text.tokens import count

    n = count(text, encoding)
    put("tokens", k, str(n), limits)
    return n


def redacted(text, limits=None):
    """`text` with every secret replaced (engine/core/redact.py), from the
    cache when this text was redacted before with the same patterns: an
    unchanged rule costs a file read, not the patterns' compile."""
    from . import redact

    if not _REDACTION:
        # plain data from the cache, no regex compiled; its repr, not json.dumps: the
        # json module imports re and enum, 8 ms of a hook that injects
        patterns = redact.sources((redact.DEFAULT_CATEGORY,))
        _REDACTION.append(sha256(repr(patterns).encode("utf-8", "surrogatepass")).hexdigest())
    k = key("redacted", _REDACTION[0], text)
    hit = get("redacted", k)
    if hit is not None:
        return hit
    out = redact.redact(text)
    put("redacted", k, out, limits)
    return out


class Compressor:
    """Compress texts with one profile at one level through the text cache.
    The compiled profile is loaded only when a text is not in the cache."""

    def __init__(self, name=None, level=None, cwd=None, chosen=None):
        """`chosen`: the profile's Choice (engine/core/profile.py) when the
        caller made it already, else it is chosen from `name` and `cwd`."""
        from .profile import cached_meta, choice

        self.chosen = chosen if chosen is not None else choice(name, cwd)
        self.level = level
        self.meta = cached_meta(self.chosen, level)  # None when the profile must be (re)built
        self._profile = None

    @property
    def profile(self):
        if self._profile is None:
            from .profile import meta_of, profile_of, store_meta

            self._profile = profile_of(self.chosen, self.level)
            missing = self.meta is None
            self.meta = meta_of(self._profile)
            if missing:  # compiled before the meta entry existed (or it went stale): the next run needs it
                store_meta(self.chosen, self.level, self._profile)
        return self._profile

    def info(self, field):
        """level, tokenizer, objective or name of the compiled profile."""
        if self.meta is None:
            self.profile  # noqa: B018 - loads and fills meta
        return self.meta[field]

    @property
    def limits(self):
        return self.info("cache")

    def cached(self, text):
        """The compressed text when the results cache has it, else None
        (nothing is compressed or loaded)."""
        if self.meta is None:
            return None
        return get("text", key("text", self.meta["id"], text))

    def compress(self, text):
        if self.meta is not None:
            hit = get("text", key("text", self.meta["id"], text))
            if hit is not None:
                return hit
        from engine.text.pipeline import compress

        out = compress(self.profile, text).text
        put("text", key("text", self.meta["id"], text), out, self.meta["cache"])
        return out

    def count(self, text, encoding=None):
        return count_tokens(text, encoding or self.info("tokenizer"), self.limits)
