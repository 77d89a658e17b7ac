"""A minimal Redis client (RESP2 over a socket) for the hook hot path.

redis-py takes about 250 ms to import on this machine, five times the whole
budget of a hook process; the few commands the state needs fit in a page.
Each command, sent and answered, has one time limit as a whole
(`hooks.state.call_timeout_ms`): a server that trickles its answer a byte at
a time cannot hold the hook, since the socket timeout alone bounds only one
read.  A reply is bounded too (`redis` in pipelines/settings/engine.yaml):
its nesting depth, its number of elements and its bytes, so a server that
answers 5,000 nested arrays or a 4 GB bulk string gets a RedisError (the
state falls back to files), never a RecursionError or a huge allocation.
"""

import socket
import time

from .errors import RedisError


def parse_url(url):
    """redis://[:password@]host[:port][/db] -> (host, port, password, db)."""
    if not url.startswith("redis://"):
        raise RedisError("unsupported Redis URL; use redis://host:port/db")
    try:
        return _parse(url[len("redis://"):])
    except ValueError:
        raise RedisError("malformed Redis URL; use redis://[:password@]host:port/db") from None


def _parse(rest):
    password = None
    if "@" in rest:
        auth, rest = rest.rsplit("@", 1)
        password = auth.split(":", 1)[1] if ":" in auth else auth
    db = 0
    if "/" in rest:
        rest, db_s = rest.split("/", 1)
        db = int(db_s or 0)
    host, _, port = rest.partition(":")
    return host or "127.0.0.1", int(port or 6379), password or None, db


class Redis:
    def __init__(self, url, timeout, call_timeout=None, limits=None):
        host, port, password, db = parse_url(url)
        if limits is None:
            from engine.core.settings import redis_limits

            limits = redis_limits()
        self.max_depth = limits["max_reply_depth"]
        self.max_items = limits["max_reply_items"]
        self.max_bytes = limits["max_reply_bytes"]
        self.items = self.received = 0
        self.call_timeout = call_timeout or timeout
        self.ends = None
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise RedisError(f"cannot connect to {host}:{port}: {exc}") from None
        self.sock.settimeout(timeout)
        self.buf = b""
        if password:
            self.call("AUTH", password)
        if db:
            self.call("SELECT", db)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def call(self, *args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            b = a if isinstance(a, bytes) else str(a).encode("utf-8", "surrogatepass")
            out.append(b"$%d\r\n%s\r\n" % (len(b), b))
        self.ends = time.monotonic() + self.call_timeout
        self.items = self.received = 0
        try:
            self._limit()
            self.sock.sendall(b"".join(out))
            return self._reply(1)
        except OSError as exc:
            raise RedisError(f"Redis connection failed: {exc}") from None
        except ValueError:
            raise RedisError("Redis sent a malformed reply") from None
        finally:
            self.ends = None

    def _limit(self):
        """What is left of this command's time, as the socket's timeout."""
        if self.ends is None:
            return
        left = self.ends - time.monotonic()
        if left <= 0:
            raise RedisError(f"Redis did not answer within {int(self.call_timeout * 1000)} ms")
        self.sock.settimeout(left)

    def _recv(self):
        self._limit()
        chunk = self.sock.recv(65536)
        if not chunk:
            raise RedisError("Redis closed the connection")
        self.received += len(chunk)
        if self.received > self.max_bytes + 65536:
            raise RedisError(f"Redis reply larger than {self.max_bytes} bytes (max_reply_bytes)")
        return chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            if len(self.buf) > self.max_bytes:
                raise RedisError(f"Redis reply line longer than {self.max_bytes} bytes (max_reply_bytes)")
            self.buf += self._recv()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self._recv()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _reply(self, depth):
        if depth > self.max_depth:
            raise RedisError(f"Redis reply nested deeper than {self.max_depth} (max_reply_depth)")
        self.items += 1
        if self.items > self.max_items:
            raise RedisError(f"Redis reply with more than {self.max_items} elements (max_reply_items)")
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RedisError(rest.decode())
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n > self.max_bytes:
                raise RedisError(f"Redis reply larger than {self.max_bytes} bytes (max_reply_bytes)")
            # read back as call() wrote it: a lone surrogate of an event's text
            # (a tool's name in a state key) is no malformed reply
            return None if n < 0 else self._exact(n).decode("utf-8", "surrogatepass")
        if kind == b"*":
            n = int(rest)
            if n > self.max_items:
                raise RedisError(f"Redis reply with more than {self.max_items} elements (max_reply_items)")
            return None if n < 0 else [self._reply(depth + 1) for _ in range(n)]
        raise RedisError(f"unexpected Redis reply {line[:20]!r}")
