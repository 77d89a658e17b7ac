"""tests/forkrun.py, the harness most end-to-end tests run `engine` with: a
child forked from the worker's zygote is a process of its own, with the
folder, environment, input, output and exit status it was given."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

import forkrun

pytestmark = pytest.mark.skipif(not forkrun.ENABLED, reason="every call is a fresh interpreter here (ENGINE_TEST_FORK=0, or no pidfd)")


def test_a_child_is_its_own_process_with_what_it_was_given(tmp_path):
    env = dict(os.environ, ENGINE_CACHE_DIR=str(tmp_path / "cache"), ENGINE_STATE_DIR=str(tmp_path / "state"))
    ok = forkrun.completed(["--version"], cwd=tmp_path, env=env)
    assert ok.returncode == 0 and ok.stdout.strip() and ok.stderr == "", ok
    bad = forkrun.completed(["no-such-command"], cwd=tmp_path, env=env)
    assert bad.returncode == 1 and bad.stdout == "" and "no-such-command" in bad.stderr, bad
    # its folder and environment: a relative path is read from the folder given
    (tmp_path / "r.md").write_text("# R\nYou must always run the tests.\n", encoding="utf-8")
    run = forkrun.completed(["compress", "r.md", "--level", "off"], cwd=tmp_path, env=env)
    assert run.returncode == 0 and "You must always run the tests." in run.stdout, run
    assert (tmp_path / "cache").is_dir(), "the child used the cache folder of the environment it was given"


def test_the_workers_own_environment_when_none_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "mine"))
    (tmp_path / "r.md").write_text("# R\nAlways run the tests.\n", encoding="utf-8")
    assert forkrun.completed(["compress", "r.md"], cwd=tmp_path).returncode == 0
    assert (tmp_path / "mine").is_dir(), "the child had the zygote's environment, not the worker's"


def test_children_at_once_each_get_their_own_input_and_output(tmp_path):
    env = dict(os.environ, ENGINE_CACHE_DIR=str(tmp_path / "cache"))
    texts = [f"# T{i}\nRule number {i} must hold.\n".encode() for i in range(12)]
    results = forkrun.run_many(["compress", "-", "--level", "off"], texts, cwd=str(tmp_path), env=env)
    assert [rc for rc, _, _ in results] == [0] * 12
    assert [f"Rule number {i} must hold." in out.decode() for i, (_, out, _) in enumerate(results)] == [True] * 12


def test_a_child_past_its_timeout_is_killed(tmp_path):
    marker = f"sleep 30.{os.getpid()}"  # a name of its own, to find the command the killed child started
    env = dict(os.environ, ENGINE_CACHE_DIR=str(tmp_path / "cache"), ENGINE_STATE_DIR=str(tmp_path / "state"))
    start = time.monotonic()
    child = forkrun.spawn(["cache", "run", "--cwd", str(tmp_path), "--", marker], str(tmp_path), env)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            child.communicate(b"", 1)
        assert time.monotonic() - start < 20
        with pytest.raises(ProcessLookupError):
            os.kill(child.pid, 0)  # reaped by the zygote: gone
    finally:
        subprocess.run(["pkill", "-f", marker], check=False)


def test_a_child_redacts_with_the_secret_rules_the_zygote_read(tmp_path, monkeypatch):
    """The zygote builds the redactors of the built-in secret rules once
    (every hook's log lines go through one, a failed tool's output through
    the tool memory's): a child redacts with them, without reading the
    rules from its cache folder again (5.5 ms of CPU a hook)."""
    from engine.core import cache

    env = dict(os.environ, ENGINE_CACHE_DIR=str(tmp_path / "cache"), ENGINE_STATE_DIR=str(tmp_path / "state"),
               HOME=str(tmp_path / "home"))
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    event = {"hook_event_name": f"Nope {secret}", "session_id": "s1", "cwd": str(tmp_path)}  # said in the log
    run = forkrun.completed(["hook", "--agent", "claude-code"], input=json.dumps(event), cwd=tmp_path, env=env)
    assert run.returncode == 0, run
    log = (tmp_path / "state" / "hook.log").read_text(encoding="utf-8")
    assert "unknown event" in log and secret not in log and "ghp_" not in log, log
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))
    kept = Path(cache.entry_path(("redact-rules", "secrets"), ".json"))
    assert kept.parent.is_dir() and not kept.exists(), sorted(kept.parent.iterdir())
    # the session report's, [secret] in place of each secret (the context monitor reads reports)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "sessionId": "s1", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": f"Error: bad token {secret}"}]}}) + "\n",
        encoding="utf-8")
    run = forkrun.completed(["session", "report", str(transcript), "--json"], cwd=tmp_path, env=env)
    assert run.returncode == 0 and "[secret]" in run.stdout and secret not in run.stdout, run
    assert not kept.exists(), sorted(kept.parent.iterdir())
