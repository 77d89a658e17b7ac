"""Issue 23, item 10: `engine cache run` (the older agents' path) keeps the
agent's shell and leaves nothing running.  A command that calls a function
or alias of the agent's shell snapshot is never rewritten through the
wrapper (whose bash has none of them), and a signal to the wrapper reaches
the command's whole process group.  Real processes: the agent's shell
(bash sourcing a snapshot written as the agent writes it) and the wrapper.
Each bug-class test fails on b085972."""

import json
import os
import shlex
import signal
import subprocess
import sys
import time

import pytest

from engine.ccm import config, runner
from engine.ccm.intercept import decide
from engine.ccm.learned import learn

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The user's shell setup the snapshots are taken of (functions, aliases).
USER_SHELL = r"""
buildall () { seq 1 2600 | sed 's/^/compiled unit /'; }
make () { command make -s "$@"; }
helper-with-dash () { :; }
alias tree='tree -C'
alias lsx='ls -la --group-directories-first'
"""
# How Claude Code 2.1.330 writes a bash snapshot (its own snapshot script,
# read in the binary): options, each function as `eval %q`, aliases with `--`.
SNAPSHOT_2_1_330 = r"""
SNAPSHOT_FILE="$1"
echo "# Snapshot file" >| "$SNAPSHOT_FILE"
echo "unalias -a 2>/dev/null || true" >> "$SNAPSHOT_FILE"
echo "# Functions" >> "$SNAPSHOT_FILE"
declare -F | while read func; do
  func=${func##* }
  [[ "$func" == _[!_]* ]] || printf 'eval %q > /dev/null 2>&1\n' "$(declare -f "$func")" >> "$SNAPSHOT_FILE"
done
echo "shopt -s expand_aliases" >> "$SNAPSHOT_FILE"
echo "# Aliases" >> "$SNAPSHOT_FILE"
alias -p | sed -e 's/^alias -- /alias /' -e 's/^alias /alias -- /' >> "$SNAPSHOT_FILE"
"""
# The form older versions wrote: each function base64-encoded.
SNAPSHOT_BASE64 = r"""
SNAPSHOT_FILE="$1"
declare -F | cut -d' ' -f3 | while read func; do
  encoded=$(declare -f "$func" | base64)
  echo "eval \"\$(echo '$encoded' | base64 -d)\" > /dev/null 2>&1" >> "$SNAPSHOT_FILE"
done
alias -p >> "$SNAPSHOT_FILE"
"""


def _write_snapshot(path, script):
    subprocess.run(["bash", "-c", "shopt -s expand_aliases\n" + USER_SHELL + script, "snap", str(path)],
                   check=True, capture_output=True, timeout=30)


@pytest.fixture(scope="module")
def settings():
    return config.load(config.builtin_path())


@pytest.fixture
def world(tmp_path, monkeypatch):
    home, proj = tmp_path / "home", tmp_path / "proj"
    (home / ".claude" / "shell-snapshots").mkdir(parents=True)
    (proj / ".git").mkdir(parents=True)
    snapshot = home / ".claude" / "shell-snapshots" / "snapshot-bash-1764140000000-q7x2fa.sh"
    _write_snapshot(snapshot, SNAPSHOT_2_1_330)
    env = dict(os.environ, HOME=str(home), PYTHONPATH=REPO, ENGINE_CACHE_DIR=str(tmp_path / "cache"),
               ENGINE_STATE_DIR=str(tmp_path / "state"), CLAUDE_CONFIG_DIR=str(home / ".claude"),
               CLAUDE_PROJECT_DIR=str(proj))
    for name in ("HOME", "ENGINE_CACHE_DIR", "ENGINE_STATE_DIR", "CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR"):
        monkeypatch.setenv(name, env[name])
    return type("W", (), {"home": home, "proj": proj, "env": env, "snapshot": snapshot, "tmp": tmp_path})


def _event(command, cwd):
    # no transcript: an agent whose version is not known, so the rewrite is the path
    return {"session_id": "s-shell", "transcript_path": "", "cwd": str(cwd), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "toolu_9",
            "permission_mode": "bypassPermissions"}


def _as_the_agent_runs_it(world, command, settings):
    """What the agent's Bash tool runs for `command` after PreToolUse: its
    snapshot sourced, then the command, or the rewrite the hook answered."""
    d = decide(_event(command, world.proj), settings)
    run = d["input"]["command"] if d else command
    script = 'source "$1" 2>/dev/null || true\neval "$2" < /dev/null'
    return d, subprocess.run(["bash", "-c", script, "agent-shell", str(world.snapshot), run], capture_output=True,
                             env=world.env, cwd=str(world.proj), timeout=60)


def test_a_command_calling_a_snapshot_function_keeps_working(world, settings):
    """b085972: the learned command `buildall` (a function of the user's
    shell) was rewritten through the wrapper, whose bash has no such
    function: `command not found`."""
    learn(config.folder(settings), str(world.proj), "buildall", 50_000, settings["learned"])
    decision, ran = _as_the_agent_runs_it(world, "buildall", settings)
    assert decision is None
    assert ran.returncode == 0, ran
    assert ran.stdout == "".join(f"compiled unit {i}\n" for i in range(1, 2601)).encode()


@pytest.mark.parametrize("command", ["make -j4 all", "tree -L 2 src", "git log | tree", "find . -type f | lsx",
                                     "find \"$(lsx)\" -newer x"])
def test_commands_whose_simple_commands_start_with_a_snapshot_name_are_left_alone(world, settings, command):
    assert decide(_event(command, world.proj), settings) is None


def test_other_commands_are_still_rewritten(world, settings):
    d = decide(_event("find . -name '*.log'", world.proj), settings)
    assert " cache run " in d["input"]["command"]
    os.unlink(world.snapshot)  # no snapshot: nothing to keep
    assert " cache run " in decide(_event("make -j4 all", world.proj), settings)["input"]["command"]


@pytest.mark.parametrize("script", [SNAPSHOT_2_1_330, SNAPSHOT_BASE64], ids=["eval-q", "base64"])
def test_the_names_a_snapshot_defines_are_read_from_each_form(tmp_path, script):
    from engine.ccm.snapshot import names_in

    path = tmp_path / "snap.sh"
    _write_snapshot(path, script)
    assert {"buildall", "make", "helper-with-dash", "tree", "lsx"} <= names_in(path.read_text())


def test_the_names_of_a_zsh_snapshot_and_the_agents_own_stand_ins():
    from engine.ccm.snapshot import names_in

    text = ("# Functions\nbuildall () {\n\tseq 1 3\n}\nfunction pkill {\n  command pkill \"$@\"\n}\n"
            "if ! hash rg 2>/dev/null; then\n  alias rg='/opt/agent/rg'\nfi\nalias -- gs='git status'\n")
    assert names_in(text) == {"buildall", "pkill", "rg", "gs"}


def test_command_words_are_the_first_word_of_each_simple_command():
    from engine.ccm.snapshot import command_words

    assert command_words("A=1 B=2 make -j4 && cd x; ! rg 'a|b' | sort `which tree` \"$(lsx)\"") == [
        "make", "cd", "rg", "sort", "which", "lsx"]


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def _written_pids(pids, n):
    """The `n` process ids the command wrote to the file `pids`, each alive."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not pids.exists() or len(pids.read_text().split()) < n):
        time.sleep(0.02)
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == n and all(_alive(p) for p in started)
    return started


def _left_alive(started):
    """Those of `started` still alive after a grace of up to 10 s."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(p) for p in started):
        time.sleep(0.02)
    return [p for p in started if _alive(p)]


def test_sigterm_to_the_wrapper_ends_everything_the_command_started(world):
    """b085972: SIGTERM to `engine cache run` ended the wrapper and left the
    command's processes running."""
    pids = world.tmp / "pids"
    command = (f"sleep 311 & echo $! >> {pids}; (sleep 312; echo late) & echo $! >> {pids}; "
               f"echo $$ >> {pids}; wait")
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "cache", "run", "--cwd", str(world.proj), "--", command],
                            env=world.env, cwd=str(world.proj), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started = []
    try:
        started = _written_pids(pids, 3)
        os.kill(proc.pid, signal.SIGTERM)  # the wrapper this test started, only
        out, _err = proc.communicate(timeout=60)
        assert not _left_alive(started), "the command's processes outlived the wrapper"
        assert proc.returncode == 128 + signal.SIGTERM and b"late" not in out  # it ends as the command did
    finally:
        for pid in started:  # what this test started, if anything was left
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_command_keeps_the_variables_the_project_set_and_its_stderr_is_its_own(world):
    """The wrapper dropped the engine's variables a project's agent settings
    set (`env` of .claude/settings.json) from the command it runs, and added
    a note to its stderr: in the agent's own shell the command has them."""
    (world.proj / ".claude").mkdir()
    project_cache = world.tmp / "project-cache"
    (world.proj / ".claude" / "settings.json").write_text(
        json.dumps({"env": {"ENGINE_CACHE_DIR": str(project_cache), "ENGINE_PROFILE": "theirs"}}))
    env = dict(world.env, ENGINE_CACHE_DIR=str(project_cache), ENGINE_PROFILE="theirs")
    command = 'echo "[$ENGINE_CACHE_DIR] [$ENGINE_PROFILE]"; echo to-stderr >&2; seq 1 1000'
    done = subprocess.run([sys.executable, "-m", "engine.cli", "cache", "run", "--cwd", str(world.proj), "--",
                           "echo \"[$ENGINE_CACHE_DIR] [$ENGINE_PROFILE]\" >&2"],
                          env=env, cwd=str(world.proj), capture_output=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr == f"[{project_cache}] [theirs]\n".encode()  # the command's stderr, nothing added
    big = subprocess.run([sys.executable, "-m", "engine.cli", "cache", "run", "--cwd", str(world.proj), "--", command],
                         env=env, cwd=str(world.proj), capture_output=True, timeout=120)
    assert big.stderr == b"to-stderr\n" and b"[CCM_CACHED]" in big.stdout
    assert not project_cache.exists()  # the engine itself still ignores the project's cache folder


def test_the_agent_killing_its_shell_group_ends_the_command_too(world):
    """The agent ends a shell call at its timeout by killing its shell's
    process group with SIGKILL.  The wrapper, killed so, forwarded nothing,
    and the command (in a group of its own) ran on for ever."""
    pids = world.tmp / "pids"
    command = f"sleep 321 | cat & echo $! >> {pids}; echo $$ >> {pids}; sleep 322"
    wrapper = " ".join(shlex.quote(p) for p in [sys.executable, "-m", "engine.cli", "cache", "run", "--", command])
    agent_shell = subprocess.Popen(["bash", "-c", wrapper], env=world.env, cwd=str(world.proj),
                                   start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started, group = [], None
    try:
        started = _written_pids(pids, 2)
        group = os.getpgid(started[1])
        # the watchdog leads the command's group and was there first: no
        # moment of the command is unwatched (it was started after the
        # command, and a wrapper killed in between left the command running)
        assert _command_line(group)[1:] == ["-c", runner.WATCHDOG]
        assert _start_tick(group) <= _start_tick(started[1])
        os.killpg(agent_shell.pid, signal.SIGKILL)  # the agent's timeout: the group of the shell this test started
        agent_shell.wait(timeout=60)
        assert not _left_alive(started), "the command outlived the agent's shell"
    finally:
        if group is not None:  # the command's group: what this test started, if anything was left
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _command_line(pid):
    with open(f"/proc/{pid}/cmdline", "rb") as fh:
        return [a.decode() for a in fh.read().split(b"\0")[:-1]]


def _start_tick(pid):
    """When the process started, in clock ticks since boot (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return int(fh.read().rsplit(b")", 1)[1].split()[19])
