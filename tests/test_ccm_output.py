"""Large Bash output replaced at PostToolUse (`updatedToolOutput`, handler
ccm_output) where the session's agent version takes it, the PreToolUse
rewrite only for older agents, and the `engine cache run` wrapper behaving
as the agent's Bash tool (issue 14, item 2)."""

import json
import os
import signal
import subprocess
import sys

import pytest

import forkrun
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIG = "".join(f"line {i} \u00e9t\u00e9 \u2713\n" for i in range(400))  # non-ASCII, over 2000 bytes


def transcript(hk, version):
    hk.write_transcript([
        {"type": "user", "version": version, "sessionId": hk.session, "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "version": version, "sessionId": hk.session,
         "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01", "name": "Bash",
                                                         "input": {"command": "python3 gen.py"}}]}},
        {"type": "queue-operation", "operation": "dequeue"},  # a line without a version
    ])


def post(hk, stdout=BIG, stderr="", command="python3 gen.py", **resp):
    r = {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False, "noOutputExpected": False}
    r.update(resp)
    return hk.event("PostToolUse", tool_name="Bash", tool_input={"command": command, "description": "d"},
                    tool_response=r)


def pre(hk, command="find . -name '*.py'"):
    return hk.event("PreToolUse", tool_name="Bash", tool_input={"command": command},
                    permission_mode="bypassPermissions")


def env(hk):
    return {"CLAUDE_PROJECT_DIR": hk.project, "CLAUDE_CONFIG_DIR": hk.home / ".claude"}


def test_large_output_is_replaced_by_the_stub_in_bash_shape(hk):
    """Old code: PostToolUse never answered; a large output of an unlisted
    command reached the model whole."""
    transcript(hk, "2.1.330")
    run = hk.hook(post(hk, stderr="warning: slow\n", interrupted=False), env=env(hk)).assert_ok()
    out = run.json
    assert set(out) == {"hookSpecificOutput"}
    spec = out["hookSpecificOutput"]
    assert set(spec) == {"hookEventName", "updatedToolOutput"} and spec["hookEventName"] == "PostToolUse"
    new = spec["updatedToolOutput"]
    assert set(new) == {"stdout", "stderr", "interrupted", "isImage"}
    assert new["stderr"] == "" and new["interrupted"] is False and new["isImage"] is False
    stub = new["stdout"]
    assert stub.startswith("[CCM_CACHED]") and "command: python3 gen.py" in stub and len(stub) < 1000
    key = stub.split("key: sha256:")[1].split()[0]
    shown = hk.engine("cache", "show", key)
    assert shown.returncode == 0
    # byte-exact: stdout then stderr, as the model would have read them
    raw = forkrun.completed(["cache", "show", key], env=hk.env(), cwd=str(hk.project), timeout=60, text=False).stdout
    assert raw == (BIG + "warning: slow\n").encode("utf-8")


def test_interrupted_is_kept_as_given(hk):
    transcript(hk, "2.1.330")
    new = hk.hook(post(hk, interrupted=True), env=env(hk)).json["hookSpecificOutput"]["updatedToolOutput"]
    assert new["interrupted"] is True


@pytest.mark.parametrize("why,kw", [
    ("small output", dict(stdout="ok\n")),
    ("the agent persisted it itself", dict(persistedOutputPath="/x/tool-results/a.txt", persistedOutputSize=40000)),
    ("an image", dict(isImage=True)),
    ("the wrapper already handled it", dict(command="engine cache run -- find .")),
    ("a secret is never cached", dict(stdout=BIG + "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
                                      + "ghp_" + "A1b2C3d4E5" * 4 + "\n")),
])
def test_output_left_as_it_is(hk, why, kw):
    transcript(hk, "2.1.330")
    hk.hook(post(hk, **kw), env=env(hk)).assert_silent()


def test_subagent_output_is_left_as_it_is(hk):
    transcript(hk, "2.1.330")
    hk.hook(dict(post(hk), agent_id="a1"), env=env(hk)).assert_silent()


def test_reading_a_cached_output_back_is_never_cached_again(hk):
    """Old: the stub's own read-back (`ENGINE cache show KEY --lines
    1:200`), whose output is over the threshold whenever 200 lines are,
    was stored again and replaced by a stub of its own; the model reading
    it got a stub again, for ever, and its first words were learned, so an
    older agent's next read-back went through the wrapper and was stubbed
    there.  Now the engine's read-back (by its script or `-m engine.cli`,
    piped on or not) reaches the model whole, is not learned, and is not
    rewritten where learned words would match it."""
    from engine.ccm.selfcmd import engine_shell

    transcript(hk, "2.1.330")
    key = hk.hook(post(hk), env=env(hk)).json["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    key = key.split("key: sha256:")[1].split()[0]
    shown = forkrun.completed(["cache", "show", key, "--lines", "1:200"], env=hk.env(), cwd=str(hk.project),
                              timeout=60, text=True).stdout
    assert len(shown.encode()) > 2000
    reads = [f"{engine_shell()} cache show {key} --lines 1:200", f"engine cache show sha256:{key} | head -300",
             f"{sys.executable} -I -m engine.cli cache stub {key}"]
    for command in reads:
        hk.hook(post(hk, stdout=shown, command=command), env=env(hk)).assert_silent()
    learned = hk.engine("cache", "learned", "--project", str(hk.project))
    patterns = [line.split("\t")[0].strip() for line in learned.stdout.splitlines()[1:]]
    assert learned.returncode == 0 and patterns == ["python3 gen.py"], learned.stdout  # the first call's only
    # an older agent, where the read-back's first words were learned from another command of theirs
    transcript(hk, "2.1.100")
    hk.hook(post(hk, command=f"{sys.executable} -I gen.py"), env=env(hk)).assert_ok()
    assert f"{sys.executable} -I" in hk.engine("cache", "learned", "--project", str(hk.project)).stdout
    assert " cache run " in hk.hook(pre(hk, f"{sys.executable} -I gen.py"), env=env(hk)).json[
        "hookSpecificOutput"]["updatedInput"]["command"]
    hk.hook(pre(hk, f"{sys.executable} -I -m engine.cli cache show {key} --lines 1:200"), env=env(hk)).assert_silent()


def test_the_wrapper_prints_a_read_back_as_it_is(tmp_path, monkeypatch):
    """Old: `engine cache run -- 'ENGINE cache show KEY'` stored the
    read-back and printed a stub of it in its place."""
    import io

    from engine.ccm import config
    from engine.ccm.runner import cached_text
    from engine.ccm.selfcmd import engine_shell

    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "state"))
    data = BIG.encode()
    for command in (f"{engine_shell()} cache show {'a' * 64} --lines 1:200", "make test"):
        got = cached_text(io.BytesIO(data), len(data), command, str(tmp_path), None, None, 0, config.load())
        assert (got is None) == (command != "make test"), (command, got)


@pytest.mark.parametrize("version", ["2.1.100", "2.1.163", "2.1.170", "2.1.177", None])
def test_old_or_known_bad_version_uses_the_rewrite(hk, version):
    """Nothing at PostToolUse; PreToolUse rewrites through the wrapper."""
    if version:
        transcript(hk, version)
    hk.hook(post(hk), env=env(hk)).assert_silent()
    out = hk.hook(pre(hk), env=env(hk)).json["hookSpecificOutput"]
    assert " cache run " in out["updatedInput"]["command"] and "permissionDecision" not in out


@pytest.mark.parametrize("version", ["2.1.121", "2.1.178", "2.1.330", "3.0.0"])
def test_supported_version_replaces_after_the_call_and_wraps_only_what_a_failure_would_cut(hk, version):
    """A command neither listed nor learned passes untouched and its output
    is replaced after it ran.  A listed one (`find`) goes through the
    wrapper whatever the version: should it fail, the agent cuts its output
    before its hook sees it (failed_cut_above_bytes of claude-code.yaml)."""
    transcript(hk, version)
    hk.hook(pre(hk, "python3 gen.py"), env=env(hk)).assert_silent()
    assert "updatedToolOutput" in hk.hook(post(hk), env=env(hk)).json["hookSpecificOutput"]
    assert " cache run " in hk.hook(pre(hk), env=env(hk)).json["hookSpecificOutput"]["updatedInput"]["command"]


def test_version_from_the_last_line_that_has_one(tmp_path):
    from engine.agents import table
    from engine.agents.capability import supported
    from engine.agents.version import from_transcript

    p = tmp_path / "t.jsonl"
    p.write_text(json.dumps({"version": "2.1.100"}) + "\n" + json.dumps({"version": "2.1.330", "x": "y"}) + "\n"
                 + json.dumps({"type": "summary"}) + "\n")
    assert from_transcript(str(p)) == "2.1.330"
    spec = table.get("claude-code").answer("replace_output")
    assert supported(spec, "2.1.330") and not supported(spec, "2.1.170") and not supported(spec, "2.1.100")
    assert not supported(spec, "garbage") and not supported(spec, None)
    assert from_transcript(str(tmp_path / "missing.jsonl")) is None


def test_a_ccm_output_handler_outside_post_tool_use_is_a_validation_error(hk):
    prof = hk.root / "p.yaml"
    prof.write_text("kind: profile\nname: p\nextends: default\nhooks:\n  events:\n    PreToolUse:\n"
                    "      - name: wrong_place\n        kind: ccm_output\n")
    r = hk.engine("validate", prof)
    assert r.returncode != 0 and "wrong_place" in (r.stdout + r.stderr) and "post_tool" in (r.stdout + r.stderr)
    assert "Traceback" not in r.stderr


# -- the wrapper, as the agent's Bash tool runs a command --------------------

def cache_run(tmp_path, command, timeout=60):
    env = dict(os.environ, HOME=str(tmp_path / "home"), PYTHONPATH=REPO, SHELL="/bin/sh",
               ENGINE_CACHE_DIR=str(tmp_path / "cache"), ENGINE_STATE_DIR=str(tmp_path / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "xdg"), CLAUDE_CONFIG_DIR=str(tmp_path / "cfg"))
    words = [command] if isinstance(command, str) else command
    return subprocess.run([sys.executable, "-m", "engine.cli", "cache", "run", "--cwd", str(tmp_path), "--", *words],
                          capture_output=True, env=env, cwd=str(tmp_path), timeout=timeout)


def test_a_command_and_its_arguments_are_run_as_they_are(tmp_path):
    """Old code joined the words with blanks: `-- sh -c 'echo a; echo b'`
    ran `sh -c echo a; echo b` (an empty line, then b)."""
    r = cache_run(tmp_path, ["sh", "-c", "echo a; echo b", "x"])
    assert r.returncode == 0 and r.stdout == b"a\nb\n", r
    r = cache_run(tmp_path, ["printf", "%s|", "two words", "it's"])
    assert r.stdout == b"two words|it's|", r


def test_wrapper_runs_bash_whatever_shell_is(tmp_path):
    """Old code ran $SHELL (here /bin/sh, dash): `[[ ]]` failed."""
    r = cache_run(tmp_path, "[[ abc == a* ]] && echo yes; arr=(1 2 3); echo ${#arr[@]}")
    assert r.returncode == 0 and r.stdout == b"yes\n3\n", r


def test_wrapper_keeps_stderr_apart(tmp_path):
    """Old code merged stderr into stdout."""
    r = cache_run(tmp_path, "echo out; echo err >&2; exit 3")
    assert r.returncode == 3
    assert r.stdout == b"out\n" and b"err\n" in r.stderr and b"err" not in r.stdout


def test_wrapper_large_stderr_gets_its_own_stub_on_stderr(tmp_path):
    r = cache_run(tmp_path, "echo small; seq 1 3000 >&2")
    assert r.stdout == b"small\n" and r.stderr.startswith(b"[CCM_CACHED]")
    key = r.stderr.decode().split("key: sha256:")[1].split()[0]
    # from the project the command ran in, as the same user (the same per-user secret)
    shown = forkrun.completed(["cache", "show", key], env=dict(os.environ, PYTHONPATH=REPO, HOME=str(tmp_path / "home"),
                                    ENGINE_CACHE_DIR=str(tmp_path / "cache"), ENGINE_STATE_DIR=str(tmp_path / "state"),
                                    XDG_CONFIG_HOME=str(tmp_path / "xdg")),
                           cwd=str(tmp_path), timeout=60, text=False)
    assert shown.stdout == "".join(f"{i}\n" for i in range(1, 3001)).encode()


def test_wrapper_does_not_wait_for_a_background_job(tmp_path):
    """Old code read the pipe to end of file, which `sleep 30 &` holds open:
    it waited 30 s.  The generous timeout is the failure, not a speed check."""
    try:
        r = cache_run(tmp_path, "sleep 30 & echo $! > bg.pid; echo started", timeout=20)
    finally:
        try:
            os.kill(int((tmp_path / "bg.pid").read_text()), signal.SIGTERM)  # the job this test started
        except (OSError, ValueError):
            pass
    assert r.returncode == 0 and r.stdout == b"started\n"


def test_wrapper_exit_status_and_signal(tmp_path):
    assert cache_run(tmp_path, "exit 42").returncode == 42
    assert cache_run(tmp_path, "kill -TERM $$").returncode == 128 + signal.SIGTERM
