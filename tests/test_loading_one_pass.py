"""Loading in one pass: a hook event chooses its profile once (which file,
which origin, what it left out), keys it, then takes it from the cache or
compiles and stores it.  The event is fed to engine.hooks.dispatch.main in a
fresh interpreter whose profile.choice, cache reads and compile are counted."""

import json

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk, hk_cold  # noqa: F401 - fixtures

PROBE = r"""
import io, json, sys
from engine.core import cache, profile
from engine.hooks import dispatch

calls = {}

def counted(module, name):
    real = getattr(module, name)

    def wrapper(*a, **kw):
        calls[name] = calls.get(name, 0) + 1
        return real(*a, **kw)

    setattr(module, name, wrapper)

for name in ("choice", "profile_of", "hooks_of"):
    counted(profile, name)
for name in ("load", "load_plain", "compile_once"):
    counted(cache, name)
out = io.StringIO()
rc = dispatch.main(json.loads(sys.argv[1]), stdin=io.StringIO(sys.stdin.read()), stdout=out)
sys.__stdout__.write(json.dumps({"rc": rc, "out": out.getvalue(), "calls": calls}))
"""

EVERY = profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1}]})


def _probe(env, event, profile=None):
    code = "import sys; sys.argv[1:] = [%r]\n" % json.dumps(profile) + PROBE
    run = env.python(code, stdin=json.dumps(event).encode())
    assert run.returncode == 0, str(run)
    return json.loads(run.stdout)


def _rules(env):
    env.rule("a.md", "# A\nMarker ALPHA: run the tests in order to be safe.\n")


def test_a_quiet_event_chooses_once_and_reads_only_the_hooks_settings(hk):
    _rules(hk)
    hk.hook(hk.prompt(1)).assert_silent()  # warms this profile's entries
    res = _probe(hk, hk.event("Stop"))
    assert res["rc"] == 0 and res["out"] == "", res
    assert res["calls"] == {"choice": 1, "load_plain": 1}, res


def test_an_injecting_event_chooses_once(hk):
    """The refresh's compressor and trust take the dispatcher's choice."""
    _rules(hk)
    prof = str(shared_profile(EVERY))
    hk.hook(hk.prompt(1), profile=prof).assert_ok()
    res = _probe(hk, hk.prompt(2), prof)
    assert "ALPHA" in json.loads(res["out"])["hookSpecificOutput"]["additionalContext"], res
    assert res["calls"]["choice"] == 1, res
    assert "compile_once" not in res["calls"], res


def test_a_cold_event_chooses_once_and_compiles_once(hk_cold):
    _rules(hk_cold)
    res = _probe(hk_cold, hk_cold.event("Stop"))
    assert res["rc"] == 0, res
    calls = res["calls"]
    assert calls["choice"] == 1 and calls["compile_once"] == 1, res
    assert calls["hooks_of"] == 1 and calls["profile_of"] == 1, res
    # warm now: the next event reads the hooks settings the compile stored
    assert _probe(hk_cold, hk_cold.event("Stop"))["calls"] == {"choice": 1, "load_plain": 1}


def test_a_cold_injecting_event_compiles_once_though_the_refresh_names_the_level(hk_cold):
    """The refresh asks for the profile at its level by name (`standard`),
    the dispatcher at the profile's own level: the same compiled profile,
    compiled once and kept under both keys."""
    _rules(hk_cold)
    prof = str(shared_profile(EVERY))
    res = _probe(hk_cold, hk_cold.prompt(1), prof)
    assert "ALPHA" in json.loads(res["out"])["hookSpecificOutput"]["additionalContext"], res
    assert res["calls"]["compile_once"] == 1, res
