"""bin/plugin-hook, run directly as the agent runs it: the engine's Python
environment is built in CLAUDE_PLUGIN_DATA, detached and under a lock, and
the engine is never off in silence.

- Parallel first events start one build; none waits for it; the one that
  started it says so, every SessionStart while it runs says so, other
  events print nothing.
- A failed build is said at every SessionStart and tried again after a
  wait that grows with the failures in a row; a good build ends it.
- A lock whose builder is gone (or hung, or that never got an owner) is
  taken over at once; a live builder's lock is left alone.
- A data folder or a lock that cannot be made is not a build in progress:
  each SessionStart says so.
- A ready environment whose interpreter is gone is rebuilt, not run (exit
  127 at every event).
- A ready environment runs the engine's hook.
"""

import json
import os
import subprocess
import sys
import time

import pytest

from support.plugin import START, TOOL, gated_python, plugin_env, run_hook, said, start_hook, wait_for, wait_gone, warm_cache


def _build_ends(data):
    """Wait for the detached build to finish: its lock gone."""
    wait_for(data / "bootstrap.log")
    wait_gone(data / "bootstrap.lock")


def _failed(data):
    version, count, when = (data / "bootstrap.failed").read_text().split("\n")[:3]
    return version, int(count), int(when)


def _age_failure(data, seconds):
    """Move the last failure `seconds` into the past."""
    version, count, _ = _failed(data)
    (data / "bootstrap.failed").write_text(f"{version}\n{count}\n{int(time.time()) - seconds}\n")


def test_parallel_first_events_start_one_build_and_none_waits_for_it(tmp_path):
    env = plugin_env(tmp_path, PATH=gated_python(tmp_path))
    data = tmp_path / "data"
    procs = [start_hook(env) for _ in range(4)]
    outs = [p.communicate(json.dumps(TOOL), timeout=60) for p in procs]
    # every event ended (exit 0) while the build still waits for `go`
    assert [p.returncode for p in procs] == [0, 0, 0, 0] and all(not e for _, e in outs)
    assert (data / "bootstrap.lock").is_dir()
    messages = [said(o) for o, _ in outs if o.strip()]
    assert len(messages) == 1 and "preparing" in messages[0], outs
    # while it builds: every session that starts is told, a tool event prints nothing
    for _ in range(2):
        rc, out, err = run_hook(env, START)
        assert rc == 0 and not err and "still being prepared" in said(out)
    assert run_hook(env, TOOL) == (0, "", "")
    # the build fails: every SessionStart says so (not once), tool events stay quiet, no build starts
    (tmp_path / "go").touch()
    wait_for(data / "bootstrap.failed")
    wait_gone(data / "bootstrap.lock")
    for _ in range(3):
        rc, out, _ = run_hook(env, START)
        assert rc == 0 and "could not be prepared" in said(out) and "1 failure(s) in a row" in said(out)
    assert run_hook(env, TOOL) == (0, "", "")
    assert not (data / "bootstrap.lock").exists() and _failed(data)[1] == 1
    assert "no venv for you" in (data / "bootstrap.log").read_text()


def test_a_failed_build_is_tried_again_after_a_wait_that_grows(tmp_path):
    (tmp_path / "go").touch()  # the gated python3 fails at once
    env = plugin_env(tmp_path, PATH=gated_python(tmp_path))
    data = tmp_path / "data"
    assert "preparing" in said(run_hook(env, TOOL)[1])
    _build_ends(data)
    assert _failed(data)[1] == 1
    # within the first wait (1 minute): told, not tried
    assert "tries again in 1 minute(s)" in said(run_hook(env, START)[1])
    assert not (data / "bootstrap.lock").exists() and _failed(data)[1] == 1
    # past it: the next event (any) tries again, and says so
    _age_failure(data, 61)
    assert "again after 1 failure(s)" in said(run_hook(env, TOOL)[1])
    _build_ends(data)
    assert _failed(data)[1] == 2
    # the second wait is 2 minutes: 61 s is not enough, 121 s is
    _age_failure(data, 61)
    assert "tries again in 1 minute(s)" in said(run_hook(env, START)[1]) and _failed(data)[1] == 2
    _age_failure(data, 121)
    assert "again after 2 failure(s)" in said(run_hook(env, START)[1])
    _build_ends(data)
    assert _failed(data)[1] == 3
    # a good build ends it (the third wait is 4 minutes)
    good = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=sys.executable)
    _age_failure(data, 241)
    assert "again after 3 failure(s)" in said(run_hook(good, TOOL)[1])
    _build_ends(data)
    assert (data / "venv" / ".plugin-ready").is_file() and not (data / "bootstrap.failed").exists()


def _dead_pid():
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("owner,age_minutes", [
    (lambda: f"{_dead_pid()} {int(time.time())}", 0),  # its builder is gone: stale at once
    (lambda: f"{os.getpid()} {int(time.time()) - 31 * 60}", 0),  # its builder runs past 30 minutes: hung
    (lambda: None, 2),  # no owner ever written, two minutes old
], ids=["builder-gone", "builder-hung", "no-owner"])
def test_a_stale_lock_is_taken_over_at_once(tmp_path, owner, age_minutes):
    env = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=sys.executable)
    data = tmp_path / "data"
    lock = data / "bootstrap.lock"
    lock.mkdir(parents=True)
    line = owner()
    if line is not None:
        (lock / "owner").write_text(line + "\n")
    past = time.time() - age_minutes * 60
    os.utime(lock, (past, past))
    rc, out, _ = run_hook(env, TOOL)
    assert rc == 0 and "preparing" in said(out), out
    _build_ends(data)
    assert (data / "venv" / ".plugin-ready").is_file(), (data / "bootstrap.log").read_text()


def test_a_live_builders_lock_is_left_alone(tmp_path):
    env = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=sys.executable)
    lock = tmp_path / "data" / "bootstrap.lock"
    lock.mkdir(parents=True)
    owner = f"{os.getpid()} {int(time.time()) - 60}\n"  # this process, a build of a minute
    (lock / "owner").write_text(owner)
    rc, out, _ = run_hook(env, START)
    assert rc == 0 and "still being prepared" in said(out)
    assert run_hook(env, TOOL) == (0, "", "")
    assert (lock / "owner").read_text() == owner
    assert not (tmp_path / "data" / "bootstrap.log").exists()  # no build started


def test_a_data_folder_or_lock_that_cannot_be_made_is_said_at_each_session_start(tmp_path):
    # a folder no one can create (even root), named with a quote, a backslash and a line break
    env = plugin_env(tmp_path)
    env["CLAUDE_PLUGIN_DATA"] = '/proc/engine "plugin"\\data\nx'
    for _ in range(2):
        rc, out, _ = run_hook(env, START)
        msg = said(out)
        assert rc == 0 and "cannot create its data folder" in msg and 'engine "plugin"\\data' in msg, out
    assert run_hook(env, TOOL) == (0, "", "")
    # a data folder where the lock cannot be made (a file is in its way): not a build in progress
    env = plugin_env(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "bootstrap.lock").write_text("")
    for _ in range(2):
        rc, out, _ = run_hook(env, START)
        assert rc == 0 and "cannot create its lock" in said(out), out
    assert run_hook(env, TOOL) == (0, "", "")


def _python_at(path):
    """An interpreter at `path`: a script that runs this one (as a venv's
    bin/python runs its base)."""
    path.write_text(f"#!/bin/sh\nexec '{sys.executable}' \"$@\"\n")
    path.chmod(0o755)
    return path


def test_an_environment_whose_interpreter_is_gone_is_rebuilt(tmp_path):
    cache_dir = warm_cache(tmp_path)
    data = tmp_path / "data"
    first = _python_at(tmp_path / "python-a")
    env = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=first, ENGINE_CACHE_DIR=cache_dir)
    assert "preparing" in said(run_hook(env, TOOL)[1])
    _build_ends(data)
    assert (data / "venv" / ".plugin-ready").is_file()
    first.unlink()  # the interpreter the environment was built on is gone (an OS upgrade, a removed pyenv)
    second = _python_at(tmp_path / "python-b")
    env = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=second, ENGINE_CACHE_DIR=cache_dir)
    rc, out, err = run_hook(env, START)
    assert rc == 0 and f"interpreter {first} is gone: rebuilding" in said(out), (rc, out, err)
    _build_ends(data)
    rc, out, err = run_hook(env, START)
    assert rc == 0, err
    assert "Effort policy" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_a_ready_environment_runs_the_engine_hook(tmp_path):
    cache_dir = warm_cache(tmp_path)
    env = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=sys.executable, ENGINE_CACHE_DIR=cache_dir)
    assert "preparing" in said(run_hook(env, START)[1])
    _build_ends(tmp_path / "data")
    rc, out, err = run_hook(env, START)
    assert rc == 0, err
    assert "Effort policy" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
