"""The turn a prompt counted is the turn it uses (issue 23, finding 13).

Prompts of one session run in parallel on an empty compiled-profile cache:
each counts its turn in the session's file state before the profile is
known, waits for the one process that compiles it, then runs its handlers.
Every prompt must run them with the turn it counted, never the state's
count at that later moment (which would hand the last turn to every
prompt that counted before the compile ended, and with it the cadence).

Real `engine hook` processes at once, with the file state and with a real
redis-server (where the file counts are folded into Redis's count)."""

import re

import pytest

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk_cold, redis_server  # noqa: F401 - fixtures

PROMPTS = 21
EVERY = 7  # the rules go in at turns 7, 14 and 21


def _world(h):
    h.rule("b.md", "# B\nMarker TURNRULE: name branches after the issue.\n")
    # Only the rules handler, on a turn cadence of its own.
    return shared_profile(profile_text({"UserPromptSubmit": [
        {"name": "rules", "every_turns": EVERY, "every_tokens": 0},
        {"name": "instructions", "enabled": False}]}, name="turns"))


def _check(h, runs):
    """Each injection names a distinct turn that is a multiple of EVERY; with
    no prompt left out, all of them.  (A prompt that gave up waiting for the
    compile, or reached its deadline, runs no handler and says so in the
    log: on a machine loaded past its cores some do.)"""
    for r in runs:
        r.assert_ok()
    turns = sorted(int(m) for r in runs if "TURNRULE" in (r.context or "")
                   for m in re.findall(r"\[Rules refresh, turn (\d+)", r.context)[:1])
    assert len(turns) == len(set(turns)), f"one turn handed to several prompts: {turns}"
    assert all(t % EVERY == 0 and 0 < t <= PROMPTS for t in turns), turns
    cut = [l for l in h.log_lines() if "not ready" in l or "deadline" in l]
    if not cut:
        assert turns == list(range(EVERY, PROMPTS + 1, EVERY)), (turns, h.log_lines())


@pytest.mark.slow
def test_parallel_prompts_on_a_cold_cache_each_use_the_turn_they_counted(hk_cold):
    h = hk_cold
    prof = _world(h)
    runs = h.hooks_parallel([h.prompt(i) for i in range(PROMPTS)], profile=prof)
    _check(h, runs)
    assert h.file_turn() == PROMPTS


@pytest.mark.slow
def test_parallel_cold_prompts_with_redis_each_use_the_turn_they_counted(hk_cold, redis_server):
    import shutil

    h = hk_cold
    prof = _world(h)
    h.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    first = 3
    for i in range(first):  # the session's first prompts: Redis holds the count
        h.hook(h.prompt(i), profile=prof).assert_silent()
    r = redis_server.client()
    key = f"rules-engine:session:{h.session}"
    assert r.hget(key, "turn") == str(first).encode()
    shutil.rmtree(h.cache / "profiles")  # cold again (an engine upgrade, an evicted entry)
    runs = h.hooks_parallel([h.prompt(i) for i in range(PROMPTS - first)], profile=prof)
    _check(h, runs)
    assert r.hget(key, "turn") == str(PROMPTS).encode(), r.hgetall(key)
