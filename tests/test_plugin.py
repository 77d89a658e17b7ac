"""The repository as a Claude Code plugin marketplace (.claude-plugin/,
hooks/hooks.json, commands/, bin/plugin-hook).

- The plugin's hooks are the ones `engine install` writes (events, matcher,
  timeout) and its commands are the /pin-* files it writes.
- bin/plugin-hook, run directly: the first events build the engine's
  environment in CLAUDE_PLUGIN_DATA detached and under a lock (one event
  says so in a systemMessage, the others print nothing, all exit 0 before
  the build is done); a failed build is told once; a ready one runs the hook.
- End to end (slow): the real agent installs the plugin from this checkout
  as a local marketplace (`claude plugin marketplace add PATH`, `claude
  plugin install rules-engine@rules-engine`) into a throwaway HOME, and a
  scripted offline session runs its hooks: the first event starts the
  bootstrap, later sessions get the SessionStart injection `engine install`
  gives. The real venv path (python3 -m venv + pip install of the plugin's
  folder) runs once with --system-site-packages and pip --no-deps: the
  engine's dependencies come from this interpreter's site-packages, only the
  build backend (setuptools) from the package index pip is configured with.
"""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.agent import REPO, FakeAPI, agent_env, find_claude, request_text, run_agent, text, tool, tool_results

HOOK = REPO / "bin" / "plugin-hook"
# what engine install's hooks inject at a session's start (tests/test_real_agent.py), source line first
EFFORT = ("SessionStart hook additional context: [from rules-engine profile default, handler SessionStart/effort_guidance: "
          "see `engine profile show`]\n[Effort policy: medium]")
START = {"hook_event_name": "SessionStart", "session_id": "s1", "source": "startup"}


# ---------------------------------------------------------------- the manifests


def test_plugin_hooks_are_the_ones_engine_install_writes():
    from engine.core.profile import load_profile
    from engine.hooks.install import TOOL_EVENTS

    hooks = load_profile("default").hooks
    events = [e for e, hs in hooks["events"].items() if any(h.get("enabled", True) is not False for h in hs)]
    plugin = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    assert list(plugin["hooks"]) == events
    for event, groups in plugin["hooks"].items():
        assert len(groups) == 1, event
        (group,) = groups
        assert group.get("matcher") == ("*" if event in TOOL_EVENTS else None), event
        assert group["hooks"] == [{"type": "command", "command": '"${CLAUDE_PLUGIN_ROOT}/bin/plugin-hook"',
                                   "timeout": hooks["install_timeout_seconds"]}], event
    assert os.access(HOOK, os.X_OK)


def test_plugin_commands_are_the_pin_commands_engine_install_writes():
    from engine.ccm import config

    wanted = config.load()["pins"]["slash_commands"]
    shipped = {p.stem: p.read_text(encoding="utf-8") for p in (REPO / "commands").glob("*.md")}
    assert set(shipped) == set(wanted)
    for name, text_ in shipped.items():
        front, _, body = text_.partition("\n---\n")
        assert front.startswith("---\ndescription: "), name  # what /help shows
        assert body == wanted[name].rstrip("\n") + "\n", name


def test_the_repository_is_a_marketplace_listing_the_plugin():
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert {"name", "owner", "plugins"} <= set(market)
    (entry,) = market["plugins"]
    assert entry["name"] == plugin["name"] == "rules-engine"
    assert (REPO / entry["source"] / ".claude-plugin" / "plugin.json").resolve() == \
        (REPO / ".claude-plugin" / "plugin.json").resolve()


def test_ci_validates_the_plugin_with_the_agent():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "plugin validate --strict ." in ci


# ---------------------------------------------------------------- bin/plugin-hook


def _env(tmp, **extra):
    env = agent_env(tmp / "home", {"CLAUDE_PLUGIN_ROOT": REPO, "CLAUDE_PLUGIN_DATA": tmp / "data", **extra})
    env.pop("PYTHONPATH", None)  # the engine comes from the plugin's environment only
    return env


def _hook(env, event=START, cwd=None):
    return subprocess.Popen([str(HOOK)], env=env, cwd=str(cwd or env["HOME"]), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait(path, seconds=120):
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


def _gated_python(tmp):
    """A `python3` first on the PATH that waits for the file `go`, then fails:
    a build that is still running, then one that failed."""
    bindir = tmp / "gated-bin"
    bindir.mkdir()
    fake = bindir / "python3"
    fake.write_text(f"#!/bin/sh\nwhile [ ! -e '{tmp}/go' ]; do sleep 0.05; done\necho no venv for you >&2\nexit 1\n")
    fake.chmod(0o755)
    return f"{bindir}{os.pathsep}{os.environ['PATH']}"


def test_parallel_first_events_one_message_none_waits_for_the_build(tmp_path):
    (tmp_path / "home").mkdir()
    env = _env(tmp_path, PATH=_gated_python(tmp_path))
    procs = [_hook(env) for _ in range(4)]
    outs = [p.communicate(json.dumps(START), timeout=60) for p in procs]
    # every event ended (exit 0) while the build still waits for `go`
    assert [p.returncode for p in procs] == [0, 0, 0, 0]
    assert (tmp_path / "data" / "bootstrap.lock").is_dir()
    said = [json.loads(o) for o, _ in outs if o.strip()]
    assert len(said) == 1, outs
    assert set(said[0]) == {"systemMessage"} and "preparing" in said[0]["systemMessage"]
    assert all(not e for _, e in outs)
    # while it builds, an event prints nothing
    p = _hook(env)
    assert p.communicate(json.dumps(START), timeout=60) == ("", "") and p.returncode == 0
    # the build fails: the next event says so once, then nothing; no retry
    (tmp_path / "go").touch()
    _wait(tmp_path / "data" / "bootstrap.failed")
    _wait_gone(tmp_path / "data" / "bootstrap.lock")
    outs = []
    for _ in range(2):
        p = _hook(env)
        outs.append(p.communicate(json.dumps(START), timeout=60))
        assert p.returncode == 0
    assert "could not be prepared" in json.loads(outs[0][0])["systemMessage"]
    assert outs[1] == ("", "")
    assert "no venv for you" in (tmp_path / "data" / "bootstrap.log").read_text()


def _wait_gone(path, seconds=120):
    end = time.monotonic() + seconds
    while path.exists():
        assert time.monotonic() < end, f"{path} never went"
        time.sleep(0.05)


def test_a_ready_environment_runs_the_engine_hook(tmp_path):
    (tmp_path / "home").mkdir()
    env = _env(tmp_path, ENGINE_PLUGIN_PYTHON=sys.executable)
    p = _hook(env)
    assert "preparing" in p.communicate(json.dumps(START), timeout=60)[0]
    _wait(tmp_path / "data" / "venv" / ".plugin-ready")
    _wait_gone(tmp_path / "data" / "bootstrap.lock")
    p = _hook(env)
    out, err = p.communicate(json.dumps(START), timeout=60)
    assert p.returncode == 0, err
    assert "Effort policy" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


# ---------------------------------------------------------------- end to end


def _claude(args, home, cwd):
    """`claude ARGS` in the throwaway HOME; its API is the local stand-in
    (with the key and no base URL the plugin commands spend ~18 s trying to
    reach the real service)."""
    with FakeAPI() as api:
        proc = subprocess.run([str(find_claude()), *args], cwd=str(cwd), env=agent_env(home, {"ANTHROPIC_BASE_URL": api.url}),
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"claude {' '.join(args)}\n{proc.stdout}\n{proc.stderr}"
    return proc


def _source_copy(dest):
    """The checkout's files as a clone would have them (no .git, .agent,
    caches or build output), so nothing is written into the checkout."""
    skip = shutil.ignore_patterns(".git", ".agent", "__pycache__", "*.egg-info", "build", "dist", ".venv",
                                  ".pytest_cache", ".hypothesis", "results")
    shutil.copytree(REPO, dest, ignore=skip)
    return dest


def _install_plugin(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    source = _source_copy(tmp_path / "market")
    _claude(["plugin", "marketplace", "add", str(source)], home, project)
    _claude(["plugin", "install", "rules-engine@rules-engine", "--scope", "user"], home, project)
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    (entry,) = installed["plugins"]["rules-engine@rules-engine"]
    return home, project, Path(entry["installPath"])


def _data_dir(home):
    found = [p for p in (home / ".claude" / "plugins" / "data").glob("*") if p.is_dir()]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.slow
def test_the_plugin_installed_by_the_agent_bootstraps_then_injects(tmp_path):
    find_claude()
    home, project, root = _install_plugin(tmp_path)
    assert root.is_relative_to(home) and (root / "bin" / "plugin-hook").is_file()
    # no PYTHONPATH: the engine comes from the plugin only; bytecode shows which copy ran
    env = {"ENGINE_PLUGIN_PYTHON": sys.executable, "PYTHONPATH": None, "PYTHONDONTWRITEBYTECODE": None,
           "PYTHONPYCACHEPREFIX": None}

    # first session: its first event starts the bootstrap and injects nothing
    first = run_agent("say hi", home, project, [tool("Bash", command="echo hi", description="say hi"),
                                                  text("It said hi.")], env=env)
    assert first.returncode == 0 and first.result == "It said hi.", str(first)
    assert EFFORT not in request_text(first.requests[0])
    assert tool_results(first.requests[1]) == ["hi"]
    data = _data_dir(home)
    _wait(data / "venv" / ".plugin-ready")
    assert "ready: rules-engine" in (data / "bootstrap.log").read_text()

    # a later session: the hooks run the plugin's own engine and inject as engine install does
    later = run_agent("say hi again", home, project, [tool("Bash", command="echo hi", description="say hi"),
                                                        text("Again.")], env=env)
    assert later.returncode == 0 and later.result == "Again.", str(later)
    assert EFFORT in request_text(later.requests[0]), request_text(later.requests[0])[:3000]
    assert tool_results(later.requests[1]) == ["hi"]
    # a directory marketplace runs the plugin from its folder (CLAUDE_PLUGIN_ROOT), others from the cache copy
    assert list(tmp_path.glob("market/engine/__pycache__/*.pyc")) or list(root.glob("engine/__pycache__/*.pyc")), \
        "the engine did not run from the plugin's folder"
    assert not (home / ".claude" / "settings.json").read_text().count("engine-hook")  # no engine install


@pytest.mark.slow
def test_the_real_environment_is_a_venv_with_the_plugin_installed(tmp_path):
    """python3 -m venv + pip install of the plugin's folder; the engine's
    dependencies come from this interpreter's site-packages (--no-deps)."""
    (tmp_path / "home").mkdir()
    root = _source_copy(tmp_path / "plugin")
    bindir = Path(sys.executable).parent
    env = _env(tmp_path, CLAUDE_PLUGIN_ROOT=root, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
               ENGINE_PLUGIN_VENV_ARGS="--system-site-packages",
               ENGINE_PLUGIN_PIP_ARGS="--no-deps")
    env.pop("ENGINE_PLUGIN_PYTHON", None)
    p = subprocess.Popen([str(root / "bin" / "plugin-hook")], env=env, cwd=str(tmp_path), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "preparing" in p.communicate(json.dumps(START), timeout=60)[0]
    data = tmp_path / "data"
    _wait_gone(data / "bootstrap.lock", 600)
    assert (data / "venv" / ".plugin-ready").exists(), (data / "bootstrap.log").read_text()
    assert (data / "venv" / "bin" / "engine").exists()  # the package's commands are in the venv
    p = subprocess.Popen([str(root / "bin" / "plugin-hook")], env=env, cwd=str(tmp_path), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(json.dumps(START), timeout=60)
    assert p.returncode == 0, err
    assert "Effort policy" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    where = subprocess.run([str(data / "venv" / "bin" / "python"), "-c", "import engine; print(engine.__file__)"],
                           env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert where.stdout.strip().startswith(str(data / "venv")), where
