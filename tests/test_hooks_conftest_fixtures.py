"""Pytest fixtures shared by the tests/test_hooks_*.py files (imported by
them; tests/conftest.py belongs to other tests).  This module holds no test."""

import os
import shutil
import subprocess
import time

import pytest

from hook_fixtures import HookEnv, free_port, warm_template


@pytest.fixture
def hk(tmp_path):
    """An isolated world (HOME, project, state, warm cache) for one test."""
    warm_template()
    env = HookEnv(tmp_path / "world")
    yield env
    env.harvest()


@pytest.fixture
def hk_cold(tmp_path):
    """The same with an empty compiled-profile cache."""
    env = HookEnv(tmp_path / "world", warm=False)
    yield env
    env.harvest()


class RedisServer:
    def __init__(self, port, proc):
        self.port = port
        self.proc = proc
        self.url = f"redis://127.0.0.1:{port}/0"

    def client(self):
        import redis

        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


@pytest.fixture
def redis_server(tmp_path):
    """A real redis-server on a free port, no persistence; stopped afterwards.
    A missing redis-server FAILS the test: CI installs it (.ci/run)."""
    exe = shutil.which("redis-server") or ("/usr/bin/redis-server" if os.path.exists("/usr/bin/redis-server") else None)
    if exe is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server); the Redis state tests need a real server")
    try:
        import redis
    except ImportError:
        pytest.fail("redis-py is not installed (pip install redis); the Redis state tests read the server with it")
    import redis

    last_error = None
    for _attempt in range(3):  # a free port may be taken between the check and the start
        port = free_port()
        folder = tmp_path / f"redis-{port}"
        folder.mkdir()
        proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                 "--dir", str(folder)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        server = RedisServer(port, proc)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if redis.Redis(host="127.0.0.1", port=port, socket_timeout=1).ping():
                    break
            except redis.exceptions.RedisError as exc:
                last_error = exc
            time.sleep(0.05)
        else:
            server.stop()
            out = proc.stdout.read().decode("utf-8", "replace")[-2000:] if proc.stdout else ""
            last_error = f"{last_error}; redis-server output: {out}"
            continue
        try:
            yield server
        finally:
            server.stop()
            if proc.stdout:
                proc.stdout.close()
        return
    pytest.fail(f"redis-server did not answer PING: {last_error}")
