"""How the run deals its tests to xdist's workers (tests/conftest.py
`deal_tests_in_small_chunks`): the slow end-to-end tests come first, and
must spread over every worker instead of all going to the first one.

A run of the suite is simulated with xdist's own `load` scheduler: three
workers, this suite's shape (84 slow tests first, most of a second to a
few seconds and some of 10-30 s, as the real agents' runs are; then about
3,100 of 30 ms), each worker asking for more as its tests end."""

import heapq
import types

import pytest

from conftest import SCHEDULE_CHUNK, deal_tests_in_small_chunks

LoadScheduling = pytest.importorskip("xdist.scheduler").LoadScheduling

SLOW, FAST = 84, 3_097
SLOW_SECONDS = (28, 0.8, 3.5, 1.2, 14, 0.5, 2.4, 6, 1.9, 0.7, 11, 2.9)  # in turn
FAST_SECONDS = 0.03


def _seconds(index):
    return SLOW_SECONDS[index % len(SLOW_SECONDS)] if index < SLOW else FAST_SECONDS


IDEAL = sum(map(_seconds, range(SLOW + FAST))) / 3  # every worker busy to the end


def _options(maxschedchunk):
    return types.SimpleNamespace(dist="load", maxschedchunk=maxschedchunk, tx=["3*popen"])


class _Config:
    def __init__(self, options):
        self.option = options

    def getoption(self, name):
        return getattr(self.option, name)

    getvalue = getoption


class _Worker:
    """What the scheduler sees of a worker: the tests it is sent."""

    def __init__(self, name):
        self.name, self.sent, self.shutting_down = name, [], False
        self.gateway = types.SimpleNamespace(id=name)

    def send_runtest_some(self, indices):
        self.sent.extend(indices)

    def shutdown(self):
        self.shutting_down = True


def _run(options, workers=3):
    """Simulate the run: ({worker: slow tests it ran}, the run's seconds)."""
    collection = [f"t{i}" for i in range(SLOW + FAST)]
    sched = LoadScheduling(_Config(options))
    nodes = [_Worker(f"gw{i}") for i in range(workers)]
    for node in nodes:
        sched.add_node(node)
        sched.add_node_collection(node, collection)
    sched.schedule()
    done = {node: 0 for node in nodes}
    clock = [(0.0, i) for i in range(workers)]  # (when the worker is free, which)
    slow_ran = {node.name: 0 for node in nodes}
    end = 0.0
    while clock:
        now, i = heapq.heappop(clock)
        node = nodes[i]
        if done[node] == len(node.sent):
            continue  # nothing more for it: the scheduler has shut it down
        index = node.sent[done[node]]
        done[node] += 1
        seconds = _seconds(index)
        slow_ran[node.name] += index < SLOW
        end = max(end, now + seconds)
        sched.mark_test_complete(node, index, duration=seconds)
        heapq.heappush(clock, (now + seconds, i))
    assert sorted(i for node in nodes for i in node.sent) == list(range(SLOW + FAST))
    return slow_ran, end


def test_the_slow_tests_spread_over_every_worker_and_the_workers_end_together():
    options = _options(None)
    deal_tests_in_small_chunks(_Config(options))
    assert options.maxschedchunk == SCHEDULE_CHUNK
    slow_ran, end = _run(options)
    assert all(n >= SLOW // 6 for n in slow_ran.values()), slow_ran
    assert end < 1.1 * IDEAL, (end, IDEAL)


def test_xdists_own_first_deal_gives_every_slow_test_to_one_worker():
    # why the chunk is set: xdist's first deal is a block of a quarter of each
    # worker's share, and the slow tests fit in the first block
    slow_ran, end = _run(_options(None))
    assert sorted(slow_ran.values()) == [0, 0, SLOW]
    assert end > 1.3 * IDEAL, (end, IDEAL)


def test_a_chunk_the_run_chose_is_kept_and_other_distributions_are_left_alone():
    chosen = _options(50)
    deal_tests_in_small_chunks(_Config(chosen))
    assert chosen.maxschedchunk == 50
    by_file = types.SimpleNamespace(dist="loadfile", maxschedchunk=None)
    deal_tests_in_small_chunks(_Config(by_file))
    assert by_file.maxschedchunk is None
