"""The repository as a Claude Code plugin marketplace (.claude-plugin/,
hooks/hooks.json, commands/, bin/plugin-hook).

- The plugin's hooks are the ones `engine install` writes (events, matcher,
  timeout) and its commands are the /pin-* files it writes.
- bin/plugin-hook run directly: tests/test_plugin_bootstrap.py.
- End to end (slow): the real agent installs the plugin from this checkout
  as a local marketplace (`claude plugin marketplace add PATH`, `claude
  plugin install rules-engine@rules-engine`) into a throwaway HOME, and a
  scripted offline session runs its hooks: the first event starts the
  bootstrap, later sessions get the SessionStart injection `engine install`
  gives. The real build (python3 -m venv, then pip install of the plugin's
  folder) runs once as on a user's machine: the engine and its dependencies
  come from the package index pip is configured with, nothing from this
  interpreter's site-packages or the base interpreter's.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import forkrun
from support.agent import REPO, MessagesAPI, agent_env, find_claude, request_text, run_agent, text, tool, tool_results
from support.plugin import HOOK, START, plugin_env, run_hook, wait_for, wait_gone

# what engine install's hooks inject at a session's start (tests/test_real_agent.py), source line first
EFFORT = ("SessionStart hook additional context: [from rules-engine profile default, handler session_start/effort_guidance: "
          "see `engine profile show`]\n[Effort policy: medium]")


# ---------------------------------------------------------------- the manifests


def test_plugin_hooks_are_the_ones_engine_install_writes():
    from engine.agents.table import get
    from engine.core.profile import load_profile
    from engine.hooks.entries import group_for, plan
    from engine.hooks.install import profile_events

    hooks = load_profile("default").hooks
    events = profile_events(hooks)
    claude = get("claude-code")
    wanted, skipped = plan(claude, events)
    assert skipped == ["before_model"], "Claude Code has no event before each model request"
    plugin = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    assert list(plugin["hooks"]) == [name for _, name in wanted]
    command = '"${CLAUDE_PLUGIN_ROOT}/bin/plugin-hook" --agent claude-code'
    for neutral, name in wanted:
        assert plugin["hooks"][name] == [group_for(claude, neutral, name, command, hooks["install_timeout_seconds"])], name
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


def test_ci_runs_the_linter_and_the_type_checker():
    ci = [line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    assert "python3 -m ruff check ." in ci and "python3 -m mypy" in ci


# ---------------------------------------------------------------- end to end


def _claude(args, home, cwd):
    """`claude ARGS` in the throwaway HOME; its API is the local stand-in
    (with the key and no base URL the plugin commands spend ~18 s trying to
    reach the real service)."""
    with MessagesAPI() as api:
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
    wait_for(data / "venv" / ".plugin-ready")
    assert "ready: rules-engine" in (data / "bootstrap.log").read_text()

    # a later session: the hooks run the plugin's own engine and inject as engine install does
    later = run_agent("say hi again", home, project, [tool("Bash", command="echo hi", description="say hi"),
                                                        text("Again.")], env=env)
    assert later.returncode == 0 and later.result == "Again.", str(later)
    assert EFFORT in request_text(later.requests[0]), request_text(later.requests[0])[:3000]
    assert tool_results(later.requests[1]) == ["hi"]
    # a directory marketplace runs the plugin from its folder (CLAUDE_PLUGIN_ROOT), others from the cache
    # copy; the engine's bytecode (under the environment's folder, mirroring the source's path) says which
    ran = [folder for folder in (tmp_path / "market", root)
           if list((data / "venv" / "pycache" / str(folder).lstrip("/") / "engine").glob("*.pyc"))]
    assert ran, "the engine did not run from the plugin's folder"
    assert not list((tmp_path / "market").glob("engine/__pycache__")) and not list(root.glob("engine/__pycache__")), \
        "bytecode written into the plugin's own folder"
    assert not (home / ".claude" / "settings.json").read_text().count("engine-hook")  # no engine install
    # engine doctor sees the plugin where Claude Code recorded it, and asks for no engine install
    doctor = forkrun.completed(["doctor", "--json", "--agent", "claude-code"], cwd=project, env=agent_env(home),
                               timeout=120)
    (report,) = json.loads(doctor.stdout)["agents"]
    assert report["plugin"]["on"] is True and not [line for line in report["missing"] if "hooks" in line], report


@pytest.mark.slow
def test_the_real_environment_is_a_venv_with_the_plugin_installed(tmp_path):
    """The build a user's machine runs: `python3 -m venv` (python3 first on
    the PATH: this test venv's, so whatever interpreter the suite runs on),
    then pip installs the plugin's folder with its dependencies from the
    package index. No override makes it see this interpreter's packages or
    the base interpreter's (pip --no-compile only spares the suite's CPU)."""
    root = _source_copy(tmp_path / "plugin")
    bindir = Path(sys.executable).parent
    env = plugin_env(tmp_path, CLAUDE_PLUGIN_ROOT=root, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
                     ENGINE_PLUGIN_PIP_ARGS="--no-compile", ENGINE_CACHE_DIR=tmp_path / "engine-cache")
    for name in ("ENGINE_PLUGIN_PYTHON", "ENGINE_PLUGIN_VENV_ARGS", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONPYCACHEPREFIX"):
        env.pop(name, None)  # no PYTHONPYCACHEPREFIX either: the hook's interpreter is isolated (-I) and
        # ignores it, so the engine's bytecode goes into the venv once, for every command below
    hook = root / "bin" / "plugin-hook"
    assert "preparing" in run_hook(env, START, cwd=tmp_path, hook=hook)[1]
    data = tmp_path / "data"
    wait_for(data / "bootstrap.log")
    wait_gone(data / "bootstrap.lock", 600)
    log = (data / "bootstrap.log").read_text()
    assert (data / "venv" / ".plugin-ready").exists(), log
    venv_python = data / "venv" / "bin" / "python"
    cfg = (data / "venv" / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg, cfg
    assert (data / "venv" / "bin" / "engine").exists()  # the package's commands are in the venv
    # its engine compiles the built-in profile once outside a hook (compiled profiles are keyed by the
    # engine's own files: this installed copy's are not the checkout's), as a loaded machine needs
    rule = tmp_path / "warm.md"
    rule.write_text("# Warm\nAlways warm the cache.\n")
    warm = subprocess.run([str(data / "venv" / "bin" / "engine"), "compress", str(rule), "--level", "standard"],
                          env=env, capture_output=True, text=True, cwd=str(tmp_path), timeout=300)
    assert warm.returncode == 0, warm.stderr
    rc, out, err = run_hook(env, START, cwd=tmp_path, hook=hook)
    assert rc == 0, err
    assert "Effort policy" in json.loads(out)["hookSpecificOutput"]["additionalContext"]
    # the engine and every dependency it imports come from the plugin's venv
    code = ("import engine.cli.main, yaml, jsonschema, regex, jinja2, tiktoken, zstandard\n"
            "print('\\n'.join(m.__file__ for m in (engine, yaml, jsonschema, regex, jinja2, tiktoken, zstandard)))")
    where = subprocess.run([str(venv_python), "-c", code], env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert where.returncode == 0, where.stderr
    files = where.stdout.split()
    assert len(files) == 7 and all(f.startswith(str(data / "venv")) for f in files), files
