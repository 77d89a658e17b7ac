"""A minimal Redis client (RESP2 over a socket) for the hook hot path.

redis-py takes about 250 ms to import on this machine, five times the whole
budget of a hook process; the few commands the state needs fit in a page.
Each command, sent and answered, has one time limit as a whole
(`hooks.state.call_timeout_ms`): a server that trickles its answer a byte at
a time cannot hold the hook, since the socket timeout alone bounds only one
read.
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
    def __init__(self, url, timeout, call_timeout=None):
        host, port, password, db = parse_url(url)
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
        try:
            self._limit()
            self.sock.sendall(b"".join(out))
            return self._reply()
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
        return chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self.buf += self._recv()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self.buf += self._recv()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _reply(self):
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
            return None if n < 0 else self._exact(n).decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise RedisError(f"unexpected Redis reply {line[:20]!r}")
