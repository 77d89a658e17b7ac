"""A pytest plugin for bench/suite.py --per-test: each test's CPU, its own
(the worker's) and its children's (the hook commands, agents and tools it
started and waited for; "forked": those of them tests/forkrun.py forked),
with its start and wall time, one JSON line per test into
$ENGINE_BENCH_PERTEST_DIR/<worker pid>.jsonl.  A process a test leaves
running (a detached bootstrap) is not a child it waited for: the machine's
figure of bench/suite.py counts it, this does not.
"""

import json
import os
import resource
import time

import pytest

_OUT = []


def _cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _forkrun():
    import sys

    return sys.modules.get("forkrun")


def _forked_cpu():
    """The `engine` children tests/forkrun.py's zygote forked for the test
    (which it reports: they are the zygote's children, not the worker's)."""
    forkrun = _forkrun()
    return forkrun.CHILD_CPU[0] if forkrun else 0.0


def _by_command():
    """{command: [children, CPU seconds]} of those children so far."""
    forkrun = _forkrun()
    return {k: list(v) for k, v in forkrun.CHILD_CPU_BY_COMMAND.items()} if forkrun else {}


def _since(before, after):
    """What each command's children cost between two _by_command() readings."""
    out = {}
    for name, (n, cpu) in after.items():
        n0, cpu0 = before.get(name, (0, 0.0))
        if n > n0:
            out[name] = [n - n0, round(cpu - cpu0, 4)]
    return out


def _write(row):
    if not _OUT:
        folder = os.environ["ENGINE_BENCH_PERTEST_DIR"]
        _OUT.append(open(os.path.join(folder, f"{os.getpid()}.jsonl"), "a", encoding="utf-8"))  # noqa: SIM115
    _OUT[0].write(json.dumps(row) + "\n")
    _OUT[0].flush()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    own, waited, forked, t0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN), _forked_cpu(), time.monotonic()
    commands = _by_command()
    yield
    forked = _forked_cpu() - forked
    _write({"id": item.nodeid, "slow": item.get_closest_marker("slow") is not None,
            "start": t0, "wall": time.monotonic() - t0, "own": _cpu(resource.RUSAGE_SELF) - own,
            "kids": _cpu(resource.RUSAGE_CHILDREN) - waited + forked, "forked": forked,
            "commands": _since(commands, _by_command())})
