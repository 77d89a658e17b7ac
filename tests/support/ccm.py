"""Fixtures of the content-cache tests: the built-in settings, a store in
the test's temporary folder, and processes forked to run at one moment."""

import os

import pytest

from engine.ccm import config
from engine.ccm.store import Store


@pytest.fixture(scope="module")
def settings():
    return config.load(config.builtin_path())


@pytest.fixture
def store(settings, tmp_path):
    return Store(settings, str(tmp_path / "ccm"), log=lambda m: None)


def forked_at_once(n, work):
    """Exit codes of n processes forked from this one that run work(i) all
    at the same moment (each waits for the start pipe to close)."""
    go_r, go_w = os.pipe()
    pids = []
    for i in range(n):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                os.close(go_w)
                os.read(go_r, 1)
                work(i)
                code = 0
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        pids.append(pid)
    os.close(go_r)
    os.close(go_w)  # go
    return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
