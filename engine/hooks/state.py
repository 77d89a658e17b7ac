"""Per-session hook state: a turn counter and, per handler, where it last
injected.  In Redis when a URL is configured (atomic HINCRBY, expiry), else
in one JSON file per session, updated under an exclusive lock and replaced
atomically, so parallel hook processes never lose a count.  Fields named
`turn_at:*` only ever grow: a slower parallel hook that saw an older turn
cannot move them back.  The folder is 0700 and its files 0600.

One counter per session, whatever fails: a turn counted in files before
the profile was loaded (a cold cache) is added to Redis's count by the next
Redis count, under the file lock; once Redis fails for a session the
session stays in files, counting on from Redis's last count
(leave_redis).  A server stopped during 2 of 6 prompts thus leaves one
count of 6, not Redis at 4 and files at 2."""

import os
import time

from engine.base.digest import safe_key
from engine.base.fastjson import dumps_flat, loads
from engine.base.files import Locked, open_append, read_regular, replace_atomic
from engine.base.paths import state_dir_str

from .errors import RedisError

# Fields that only grow (the turn a handler last injected at).
MONOTONIC = ("turn_at:",)


class StateError(Exception):
    pass


class StateBlocked(StateError):
    """A folder stands where one of the session's state files goes: it stays
    until the user removes it, so the hook says it once per session
    (dispatch.state_unavailable), not at every event."""


def blocked(path):
    """A StateBlocked for `path` when a folder (not a link to one) stands
    there, else None."""
    import stat

    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return None
    except OSError:
        return None
    return StateBlocked(f"a folder stands at {path}, where a file of this session's state goes; "
                        "the session keeps no state until it is removed")


class _StateLock(Locked):
    """The session file's lock; one that cannot be opened is a StateError.
    Touched once held, as the answer lock is (OneAnswer): the expiry
    (FileState.prune) removes a lock idle longer than the state lives,
    never the one a session running that long holds, which would let the
    next transaction lock a new file beside it and lose an update.
    (A class, not contextlib: the hook hot path does not import functools.)"""

    def __enter__(self):
        try:
            super().__enter__()
        except OSError as exc:
            raise blocked(self.path) or StateError(f"cannot open state lock {self.path}: {exc}") from None
        try:
            os.utime(self.fd)
        except OSError:
            pass
        return self


class OneAnswer:
    """`with OneAnswer(session_id, until, poll_s, log):` the events of one
    session answer one at a time, whatever the state backend: an event's
    handlers decide what the model lacks from the marks the session's
    earlier answers saved, so two answering at once would both deliver it.
    The wait ends at `until` (a time.monotonic() value; None: as long as it
    takes), and the event answers anyway: a hook never passes its deadline
    waiting for another.  A lock that cannot be opened is no lock."""

    def __init__(self, session_id, until, poll_s, log, root=None, ttl_seconds=None):
        """`session_id` None: no session state, nothing to order (no lock).
        `ttl_seconds`: how long the state lives (a folder in place of the
        lock is said once in that time)."""
        self.lock = None if session_id is None else Locked(_answer_lock(_sessions_dir(root), safe_key(session_id)))
        self.until, self.poll_s, self.log = until, poll_s, log
        self.session, self.ttl = session_id, ttl_seconds

    def __enter__(self):
        if self.lock is None:
            return self
        try:
            self.lock.open()
        except OSError as exc:
            folder = blocked(self.lock.path)
            said_once(folder, self.session, self.ttl, f"answering without the session's answer lock ({folder or exc})",
                      self.log)
            return self
        if self.until is None:
            self.lock.acquire()
            return self._touched()
        while not self.lock.acquire(block=False):
            if time.monotonic() + self.poll_s >= self.until:
                self.log("another event of this session is still answering; answering without waiting longer")
                return self
            time.sleep(self.poll_s)
        return self._touched()

    def _touched(self):
        """Its time is the session's last event: the expiry (FileState.prune)
        removes a lock file idle that long, never the lock of a live session."""
        try:
            os.utime(self.lock.fd)
        except OSError:
            pass
        return self

    def __exit__(self, *exc):
        if self.lock is not None:
            self.lock.close()
        return False


def said_once(folder, session, ttl_seconds, message, log):
    """Log `message`; where `folder` (a StateBlocked, or None) says a folder
    stands in place of a state file, once per session for that folder
    (engine/hooks/notes.py: the state itself cannot keep that it was said)."""
    if folder is not None:
        from .notes import first_time

        if not first_time("state-notes", session, str(folder), ttl_seconds):
            return
    log(message)


def _sessions_dir(root=None):
    return os.path.join(root or state_dir_str(), "sessions")


def _answer_lock(folder, key):
    """The answer lock's path of the session whose safe_key is `key`."""
    return os.path.join(folder, f"{key}.answer.lock")


class FileState:
    backend = "files"

    def __init__(self, session_id, ttl_seconds, root=None):
        self.root = _sessions_dir(root)
        key = safe_key(session_id)
        self.path = os.path.join(self.root, f"{key}.json")
        self.answer_lock = _answer_lock(self.root, key)
        self.ttl = ttl_seconds

    def _locked(self):
        return _StateLock(str(self.path) + ".lock")

    def _read(self):
        from engine.core.settings import hook_bounds

        cap = hook_bounds()["max_state_file_bytes"]
        try:
            # a regular file only: a FIFO put there is never waited on (its
            # first write replaces it), as a file over the cap is not read
            data = loads(read_regular(self.path, cap).decode("utf-8"))
        except (OSError, ValueError):
            return {}  # none, torn, too large or foreign: start the session's counts again
        if not isinstance(data, dict):
            return {}
        touched = data.get("_touched", 0)
        if not isinstance(touched, (int, float)) or time.time() - touched > self.ttl:
            return {}
        return data

    def _write(self, data):
        data["_touched"] = time.time()
        try:
            # No fsync: the rename is atomic, so a reader sees the old or the new
            # count, never a torn one; a crash may lose the last count, which
            # costs at most one refresh, while fsync costs ~15 ms per prompt.
            replace_atomic(self.path, dumps_flat(data).encode("utf-8"))
        except OSError as exc:
            raise blocked(self.path) or StateError(f"cannot write state {self.path}: {exc}") from None

    def _transact(self, change):
        with self._locked():
            data = self._read()
            result = change(data)
            self._write(data)
            return result

    def bump_turn(self):
        """Count a prompt; its turn in the session, from this same transaction."""
        def change(d):
            d["turn"] = _int0(d.get("turn")) + 1
            return session_turn(d)

        return self._transact(change)

    def current_turn(self):
        return session_turn(self.get())

    def get(self):
        with self._locked():
            return self._read()

    def update(self, fields):
        self._transact(lambda d: d.update(_raised(d, fields)))

    def add(self, amounts):
        """Add each amount to its counter, in one locked transaction (the
        per-tool tallies of the context audit: parallel hooks lose none)."""
        def change(d):
            for k, v in amounts.items():
                d[k] = _int0(d.get(k)) + int(v)

        self._transact(change)

    def prune(self, every_seconds=0):
        """Remove the files of sessions idle for longer than the expiry (an
        agent that was killed never sends SessionEnd), unless the last prune
        was less than `every_seconds` ago: a folder of many sessions costs a
        stat per file, and starts come at every compaction."""
        now = time.time()
        if not self._due(now, every_seconds):
            return
        cutoff = now - self.ttl
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

    def _due(self, now, every_seconds):
        """True when no prune ran in the last `every_seconds`; the marker
        (beside the sessions folder, never one of its files) says when one
        did, and is touched now."""
        marker = self.root + ".pruned"
        try:
            if every_seconds and 0 <= now - os.stat(marker).st_mtime < every_seconds:
                return False
        except OSError:
            pass  # never pruned, or no folder yet
        try:
            os.close(open_append(marker))
            os.utime(marker)
        except OSError:
            pass  # prunes each time, as before
        return True

    def clear(self):
        # the answer lock too (OneAnswer): held by the event clearing, it stays
        # held on the file it opened; a later event would open a new one
        for p in (self.path, str(self.path) + ".lock", self.answer_lock):
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

    def add_turns(self, n):
        turn = self.r.call("HINCRBY", self.key, "turn", int(n))
        self.r.call("EXPIRE", self.key, self.ttl)
        return int(turn)

    def current_turn(self):
        return _int0(_num(self.r.call("HGET", self.key, "turn")))

    def get(self):
        flat = self.r.call("HGETALL", self.key) or []
        return {flat[i]: _num(flat[i + 1]) for i in range(0, len(flat), 2)}

    def update(self, fields):
        """One atomic script: plain fields set, monotonic ones raised only."""
        if fields:
            args = [x for k, v in fields.items() for x in (k, v)]
            self.r.call("EVAL", _UPDATE_SCRIPT, 1, self.key, self.ttl, ",".join(MONOTONIC), *args)

    def add(self, amounts):
        """HINCRBY of every counter and the expiry, in one atomic script."""
        if amounts:
            args = [x for k, v in amounts.items() for x in (k, int(v))]
            self.r.call("EVAL", _ADD_SCRIPT, 1, self.key, self.ttl, *args)

    def clear(self):
        self.r.call("DEL", self.key)


_UPDATE_SCRIPT = """
local prefixes = {}
for p in string.gmatch(ARGV[2], '[^,]+') do prefixes[#prefixes + 1] = p end
for i = 3, #ARGV, 2 do
  local k, v = ARGV[i], ARGV[i + 1]
  local grow = false
  for _, p in ipairs(prefixes) do
    if string.sub(k, 1, #p) == p then grow = true end
  end
  local old = tonumber(redis.call('HGET', KEYS[1], k))
  if not (grow and old and tonumber(v) and old >= tonumber(v)) then
    redis.call('HSET', KEYS[1], k, v)
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""


_ADD_SCRIPT = """
for i = 2, #ARGV, 2 do
  redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""


def session_turn(d):
    """The session's count as a file holds it: its own turns, plus the last
    count Redis gave (`redis_turn`) while those turns wait to be folded into
    Redis.  Every Redis count of a session goes through the file's lock
    (FallbackState._counted), so that sum is the turn Redis reaches when the
    file's turns are folded: a prompt counted in files before the profile
    was loaded (a cold cache) knows its turn at once.  Once the session left
    Redis (`on_files`) the file's own count already holds Redis's."""
    own = _int0(d.get("turn"))
    return own if d.get("on_files") else own + _int0(d.get("redis_turn"))


def _int0(v):
    """A counter read back from a file: anything but a number counts as 0."""
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def _raised(current, fields):
    """`fields` with each monotonic one no lower than its current value."""
    out = dict(fields)
    for k, v in fields.items():
        if k.startswith(MONOTONIC):
            old = current.get(k)
            if isinstance(old, (int, float)) and isinstance(v, (int, float)) and old > v:
                out[k] = old
    return out


def _num(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return v


class FallbackState:
    """Redis first; when it fails mid-session, the session leaves Redis for
    good (see leave_redis) and the same call goes to files."""

    def __init__(self, redis_state, file_state, log, url):
        self.primary, self.files, self.log, self.url = redis_state, file_state, log, url
        self.backend = "redis"

    def _failed(self, exc):
        self.primary = None
        self.backend = "files"
        leave_redis(self.files, self._message(exc), self.log)

    def _message(self, exc):
        return f"Redis at {redact(self.url)} failed ({exc}); this session's state stays in files"

    def _counted(self, extra):
        """Add `extra` plus the turns the file holds (counted before the
        profile was loaded) to Redis's count, in one locked file transaction
        that also keeps the new count in the file (`redis_turn`), which is
        where files take over from if Redis fails later.  None once the
        session is on files: Redis failed in this transaction, which left
        it (so the events waiting for the lock go to files without waiting
        on Redis each in turn), or had failed for another event before."""
        def change(d):
            if d.get("on_files"):
                return None, None
            n = _int0(d.get("turn"))
            try:
                turn = self.primary.add_turns(extra + n) if extra or n else self.primary.current_turn()
            except RedisError as exc:
                _to_files(d)
                return None, exc
            d["turn"] = 0
            d["redis_turn"] = turn
            return turn, None

        turn, exc = self.files._transact(change)
        if turn is None:
            self.primary = None
            self.backend = "files"
            if exc is not None:
                self.log(self._message(exc))
        return turn

    def bump_turn(self):
        if self.primary is not None:
            turn = self._counted(1)
            if turn is not None:
                return turn
        return self.files.bump_turn()

    def current_turn(self):
        if self.primary is not None:
            turn = self._counted(0)
            if turn is not None:
                return turn
        return self.files.current_turn()

    def _call(self, name, *args):
        if self.primary is not None:
            try:
                return getattr(self.primary, name)(*args)
            except RedisError as exc:
                self._failed(exc)
        return getattr(self.files, name)(*args)

    def get(self):
        return self._call("get")

    def update(self, fields):
        """In Redis; what outlives the session (clear_state.survives: the
        records of what the engine delivered, the failures the tool memory
        holds) and what it was told once (a context warning's thresholds, a
        fact logged once: clear_state.kept_in_files) in the file as well,
        so that a session that leaves Redis later neither delivers again
        what is in view, counts a failure twice nor warns again.  They
        change at a delivery, a failure or a warning, not at every event."""
        self._call("update", fields)
        if self.primary is not None:
            from .handlers.clear_state import kept_in_files

            lasting = {k: v for k, v in fields.items() if kept_in_files(k)}
            if lasting:
                self.files.update(lasting)

    def add(self, amounts):
        return self._call("add", amounts)

    def clear(self):
        if self.primary is not None:
            self._call("clear")
        self.files.clear()


def leave_redis(files, message, log):
    """Once Redis failed for a session (unreachable, too slow, a bad reply),
    the session's state stays in files until it ends: its count goes on from
    the last count Redis gave (kept in the file by every Redis count), so
    there is one counter, never two (a command that timed out may still
    run on the server later: Redis's count is not trusted again).  Said
    once per session."""
    try:
        first = files._transact(_to_files)
    except StateError:
        first = True
    if first:
        log(message)


def _to_files(d):
    """The file state `d` leaves Redis (leave_redis); True the first time."""
    first = not d.get("on_files")
    if first:
        d["turn"] = _int0(d.get("redis_turn")) + _int0(d.get("turn"))
        d["on_files"] = 1
    return first


def open_state(session_id, settings, log):
    """The session's state: Redis when a URL is set ($ENGINE_REDIS_URL, else the
    profile's hooks.state.redis_url) and reachable and the session has not
    left it, else files."""
    ttl = int(settings["ttl_hours"] * 3600)
    files = FileState(session_id, ttl)
    url = os.environ.get("ENGINE_REDIS_URL") or settings.get("redis_url") or ""
    if not url:
        return files
    if files._read().get("on_files"):
        return files  # Redis failed earlier in this session
    from .resp import Redis  # only now is the socket module needed

    try:
        client = Redis(url, settings["connect_timeout_ms"] / 1000.0, settings["call_timeout_ms"] / 1000.0)
        return FallbackState(RedisState(client, session_id, ttl), files, log, url)
    except RedisError as exc:
        leave_redis(files, f"Redis unreachable at {redact(url)} ({exc}); this session's state stays in files", log)
        return files


def redact(url):
    """The URL without its credentials (logs are not for secrets): parsed the
    way the client parses it, so a password holding / or @ is hidden whole."""
    scheme, sep, rest = str(url).partition("://")
    if not sep:
        return "<not a URL>" if "@" in scheme else scheme
    if "@" in rest:
        rest = "***@" + rest.rsplit("@", 1)[1]
    return f"{scheme}://{rest}"
