""".ci/run writes nothing into HOME: .ci/home (which it sources first) gives
every step a throwaway HOME, XDG folders, agent config folder and pip and
npm caches, turns the agent's telemetry and non-essential traffic off,
still reads the user's own pip and npm settings in place, removes the
throwaway folder at exit, and fails the run, naming the path, when the real
home changed anyway.  The agent's `plugin validate` (a CI step) writes its
state into HOME: under .ci/home, into the throwaway one."""

import json
import os
import subprocess
import sys

from support.agent import REPO, find_claude

PROBE = f"'{sys.executable}' -c 'import json, os; print(json.dumps(dict(os.environ)))'"


def _real_home(tmp_path):
    home = tmp_path / "real-home"
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text("[global]\ntimeout = 60\n")
    (home / ".npmrc").write_text("fund=false\n")
    return home


def _entries(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_mtime_ns, p.stat().st_size) for p in folder.rglob("*"))


def _ci(tmp_path, home, script):
    """`bash -c '. .ci/home; SCRIPT'` in the checkout, HOME=home, temporary
    folders under tmp_path/t."""
    (tmp_path / "t").mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("XDG_", "CLAUDE", "PIP_CONFIG_FILE", "npm_config", "ENGINE_TESTS_REAL_HOME"))}
    env.update(HOME=str(home), TMPDIR=str(tmp_path / "t"))
    return subprocess.run(["bash", "-c", f". .ci/home; {script}"], cwd=str(REPO), env=env, capture_output=True,
                          text=True, timeout=120)


def test_every_step_runs_in_a_throwaway_home_removed_at_exit(tmp_path):
    home = _real_home(tmp_path)
    before = _entries(home)
    run = _ci(tmp_path, home, f'{PROBE}; touch "$HOME/made-by-a-step"; mkdir -p "$XDG_CACHE_HOME/pip"')
    assert run.returncode == 0, run.stderr
    env = json.loads(run.stdout)
    throwaway = env["HOME"][:-len("/home")]
    assert throwaway.startswith(str(tmp_path / "t" / "rules-engine-ci.")), env["HOME"]
    for name in ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "CLAUDE_CONFIG_DIR",
                 "PIP_CACHE_DIR", "npm_config_cache"):
        assert env[name].startswith(throwaway + "/"), (name, env[name])
    for name in ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING",
                 "DISABLE_AUTOUPDATER"):
        assert env[name] == "1", name
    assert env["ENGINE_TESTS_REAL_HOME"] == str(home)  # the tests' own check watches the real home
    assert env["PIP_CONFIG_FILE"] == str(home / ".config" / "pip" / "pip.conf")
    assert env["npm_config_userconfig"] == str(home / ".npmrc")
    assert not os.path.exists(throwaway)  # gone with the run
    assert _entries(home) == before


def test_a_run_that_changes_the_real_home_fails_and_names_the_path(tmp_path):
    home = _real_home(tmp_path)
    run = _ci(tmp_path, home, 'touch "$REAL_HOME/.leaked-by-a-step"')
    assert run.returncode == 1 and ".leaked-by-a-step" in run.stderr, run.stderr
    run = _ci(tmp_path, home, 'rm "$REAL_HOME/.npmrc"')
    assert run.returncode == 1 and ".npmrc" in run.stderr, run.stderr
    # a step's own failure keeps its status
    assert _ci(tmp_path, _real_home(tmp_path / "other"), "exit 3").returncode == 3


def test_the_agents_plugin_validate_writes_into_the_throwaway_home_only(tmp_path):
    claude = find_claude()
    plain = tmp_path / "plain-home"
    plain.mkdir()
    # as .ci/run ran it before: the agent keeps its state in the HOME it is given
    bare = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "XDG_"))}
    run = subprocess.run([str(claude), "plugin", "validate", "--strict", "."], cwd=str(REPO), capture_output=True,
                         text=True, timeout=120, env=dict(bare, HOME=str(plain), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert list(plain.iterdir()), "the agent wrote nothing into HOME: this test would check nothing"
    home = tmp_path / "real-home"
    home.mkdir()
    run = _ci(tmp_path, home, f"'{claude}' plugin validate --strict .")
    assert run.returncode == 0, run.stdout + run.stderr
    assert list(home.iterdir()) == []
