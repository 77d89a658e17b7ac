"""Per-session hook state: a turn counter and, per handler, where it last
injected.  In Redis when a URL is configured (atomic HINCRBY, expiry), else
in one JSON file per session, updated under an exclusive lock and replaced
atomically, so parallel hook processes never lose a count."""

import fcntl
import os
import time

from ..paths import state_dir_str
from .errors import RedisError
from .fastjson import dumps_flat, loads


class StateError(Exception):
    pass


def _session_key(session_id):
    from ..cache import sha256

    safe = "".join(c if (c.isascii() and c.isalnum()) or c in "_.-" else "_" for c in session_id[:80])
    return f"{safe}-{sha256(session_id.encode()).hexdigest()[:12]}"


class FileState:
    backend = "files"

    def __init__(self, session_id, ttl_seconds, root=None):
        self.root = os.path.join(root or state_dir_str(), "sessions")
        self.path = os.path.join(self.root, f"{_session_key(session_id)}.json")
        self.ttl = ttl_seconds

    def _locked(self):
        try:
            os.makedirs(self.root, exist_ok=True)
            fd = os.open(str(self.path) + ".lock", os.O_CREAT | os.O_RDWR, 0o600)
        except OSError as exc:
            raise StateError(f"cannot open state lock {self.path}.lock: {exc}") from None
        fcntl.flock(fd, fcntl.LOCK_EX)
        return fd

    def _read(self):
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = loads(fh.read())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # a torn or foreign file: start the session's counts again
        if not isinstance(data, dict):
            return {}
        touched = data.get("_touched", 0)
        if not isinstance(touched, (int, float)) or time.time() - touched > self.ttl:
            return {}
        return data

    def _write(self, data):
        data["_touched"] = time.time()
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            # No fsync: the rename is atomic, so a reader sees the old or the new
            # count, never a torn one; a crash may lose the last count, which
            # costs at most one refresh, while fsync costs ~15 ms per prompt.
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write(dumps_flat(data))
            os.replace(tmp, self.path)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise StateError(f"cannot write state {self.path}: {exc}") from None

    def _transact(self, change):
        fd = self._locked()
        try:
            data = self._read()
            result = change(data)
            self._write(data)
            return result
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def bump_turn(self):
        def change(d):
            d["turn"] = int(d.get("turn", 0)) + 1
            return d["turn"]

        return self._transact(change)

    def get(self):
        fd = self._locked()
        try:
            return self._read()
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def update(self, fields):
        self._transact(lambda d: d.update(fields))

    def prune(self):
        """Remove the files of sessions idle for longer than the expiry (an
        agent that was killed never sends SessionEnd)."""
        cutoff = time.time() - self.ttl
        try:
            names = os.listdir(self.root)
        except OSError:
            return
        for n in names:
            p = os.path.join(self.root, n)
            try:
                if os.stat(p).st_mtime < cutoff:
                    os.unlink(p)
            except OSError:
                pass

    def clear(self):
        for p in (self.path, str(self.path) + ".lock"):
            try:
                os.unlink(p)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StateError(f"cannot remove state {p}: {exc}") from None


class RedisState:
    backend = "redis"

    def __init__(self, client, session_id, ttl_seconds):
        self.r = client
        self.key = f"rules-engine:session:{session_id}"
        self.ttl = ttl_seconds

    def bump_turn(self):
        turn = self.r.call("HINCRBY", self.key, "turn", 1)
        self.r.call("EXPIRE", self.key, self.ttl)
        return int(turn)

    def get(self):
        flat = self.r.call("HGETALL", self.key) or []
        return {flat[i]: _num(flat[i + 1]) for i in range(0, len(flat), 2)}

    def update(self, fields):
        if fields:
            args = [x for k, v in fields.items() for x in (k, v)]
            self.r.call("HSET", self.key, *args)
            self.r.call("EXPIRE", self.key, self.ttl)

    def clear(self):
        self.r.call("DEL", self.key)


def _num(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return v


class FallbackState:
    """Redis first; when it fails mid-session, the same call goes to files."""

    def __init__(self, redis_state, file_state, log, url):
        self.primary, self.files, self.log, self.url = redis_state, file_state, log, url
        self.backend = "redis"

    def _call(self, name, *args):
        if self.primary is not None:
            try:
                return getattr(self.primary, name)(*args)
            except RedisError as exc:
                self.primary = None
                self.backend = "files"
                _log_once(self.files, f"Redis at {redact(self.url)} failed ({exc}); using file state", self.log)
        return getattr(self.files, name)(*args)

    def bump_turn(self):
        return self._call("bump_turn")

    def get(self):
        return self._call("get")

    def update(self, fields):
        return self._call("update", fields)

    def clear(self):
        if self.primary is not None:
            self._call("clear")
        self.files.clear()


def open_state(session_id, settings, log):
    """The session's state: Redis when a URL is set ($ENGINE_REDIS_URL, else the
    profile's hooks.state.redis_url) and reachable, else files."""
    ttl = int(settings["ttl_hours"] * 3600)
    files = FileState(session_id, ttl)
    url = os.environ.get("ENGINE_REDIS_URL") or settings.get("redis_url") or ""
    if not url:
        return files
    from .resp import Redis  # only now is the socket module needed

    try:
        client = Redis(url, settings["connect_timeout_ms"] / 1000.0)
        return FallbackState(RedisState(client, session_id, ttl), files, log, url)
    except RedisError as exc:
        _log_once(files, f"Redis unreachable at {redact(url)} ({exc}); using file state", log)
        return files


def redact(url):
    """The URL without its password (logs are not for secrets)."""
    import re

    return re.sub(r"//[^@/]*@", "//***@", url)


def _log_once(files, message, log):
    """Say it once per session, not on every event."""
    try:
        seen = files.get().get("redis_down_logged")
        if not seen:
            log(message)
            files.update({"redis_down_logged": 1})
    except StateError:
        log(message)
