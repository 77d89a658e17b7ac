"""The real agents run the hooks the engine's other forms install, offline
(tests/support/offline.py): the Gemini CLI extension (extensions/gemini/,
linked) runs the engine's hooks, and Codex and Copilot CLI install this
repository as a plugin whose hooks name them.  (The hooks `engine install --agent NAME`
writes, their trust and `engine doctor`'s report of them firing:
tests/test_agents_e2e.py.)

Each runs an agent once, in parallel under xdist; each takes 2-10 s."""

import json
import subprocess
import sys

import pytest

import forkrun
from hook_fixtures import HookEnv, warm_template
from support import gemini_api
from support.agent import REPO
from support.codex import codex_command, list_hooks
from support.copilot import copilot_command, copilot_hooks, run_copilot
from support.gemini import gemini_command, run_gemini
from support.hooks import LogHook
from support.offline import base_env
from support.plugin import START, run_hook, wait_for
from support.responses_api import request_text
from support.standin import say

# What the built-in profile's SessionStart answers (its effort guidance).
EFFORT = "[Effort policy: medium]"


def _world(tmp_path):
    """HOME and a project, the engine's state and a warm compiled-profile cache."""
    warm_template()
    w = HookEnv(tmp_path / "world")
    w.env_extra = {"ENGINE_STATE_DIR": str(w.state), "ENGINE_CACHE_DIR": str(w.cache)}
    return w


def _engine(w, *args):
    """`engine ARGS` as the user runs it: HOME and the agents' homes as the agents see them."""
    env = base_env(w.home, w.env_extra)
    proc = forkrun.completed(args, cwd=w.project, env=env, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, f"engine {args}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _doctor(w, agent):
    (report,) = json.loads(_engine(w, "doctor", "--json", "--agent", agent))["agents"]
    return report


def _scope(report, scope):
    return next(s for s in report["hooks"] if s["scope"] == scope)


# The hooks `engine install --agent NAME` writes, run by each real agent, with
# the trust the install asks for and what `engine doctor` then reports:
# tests/test_agents_e2e.py (its sessions show the features too).


@pytest.mark.slow
def test_the_gemini_extension_runs_the_engines_hooks(tmp_path):
    w = _world(tmp_path)
    ext = REPO / "extensions" / "gemini"
    linked = gemini_command(["extensions", "link", str(ext), "--consent"], w.home, w.project)
    assert linked.returncode == 0 and "linked successfully" in linked.stderr, str(linked)
    # the extension runs this clone's bin/plugin-hook, which prepares its environment once
    # (ENGINE_PLUGIN_PYTHON: a launcher on this interpreter, as tests/test_plugin.py builds it)
    env = {**w.env_extra, "ENGINE_PLUGIN_PYTHON": sys.executable}
    data = w.home / ".local" / "share" / "rules-engine-plugin"
    assert run_hook(base_env(w.home, env), START, cwd=w.project, hook=REPO / "bin" / "plugin-hook")[0] == 0
    wait_for(data / "venv" / ".plugin-ready")
    run = run_gemini("go", w.home, w.project, [say("ok")], env=env)
    assert run.returncode == 0, str(run)
    first = gemini_api.request_text(run.requests[0])
    assert "<hook_context>" in first and EFFORT in first, first[-2000:]
    assert _doctor(w, "gemini")["plugin"]["on"] is True, "engine doctor sees the extension where Gemini recorded it"


@pytest.mark.slow
def test_codex_installs_this_repository_as_a_plugin_whose_hooks_name_codex(tmp_path):
    from test_plugin import _source_copy

    w = _world(tmp_path)
    source = _source_copy(tmp_path / "market")
    assert codex_command(["plugin", "marketplace", "add", str(source)], w.home, w.project).returncode == 0
    added = codex_command(["plugin", "add", "rules-engine@rules-engine"], w.home, w.project)
    assert added.returncode == 0, str(added)
    listed = list_hooks(w.home, w.project)
    assert sorted(h["key"] for h in listed) == sorted(
        f"rules-engine@rules-engine:hooks/codex.json:{label}:0:0" for label in
        ("user_prompt_submit", "session_start", "subagent_start", "pre_tool_use", "post_tool_use", "stop",
          "session_end"))  # no pre_compact: Codex takes no compaction instructions, no handler acts there
    root = w.home / ".codex" / "plugins" / "cache" / "rules-engine" / "rules-engine" / "0.1.0"
    assert {h["command"] for h in listed} == {f'"{root}/bin/plugin-hook" --agent codex'}
    assert _doctor(w, "codex")["plugin"]["on"] is True, "engine doctor sees the plugin where Codex recorded it"


@pytest.mark.slow
def test_copilot_installs_this_repository_as_a_plugin_whose_hooks_name_copilot(tmp_path):
    """Copilot CLI reads a Claude Code plugin too (.claude-plugin/, hooks/hooks.json:
    measured with 1.0.102, it runs those hooks with a payload in Claude Code's
    words, which the engine would take for Claude Code's); the manifest it
    looks for first, .github/plugin/plugin.json, names hooks/copilot.json,
    whose commands name Copilot and each event.  A plugin's hooks are the
    user's: they run in a folder Copilot was never told to trust, where the
    project's own .github/hooks do not.  `engine doctor` sees the plugin
    and does not ask for an `engine install` as well."""
    from test_plugin import _source_copy

    w = _world(tmp_path)
    source = _source_copy(tmp_path / "market")
    for args in (["plugin", "marketplace", "add", str(source)], ["plugin", "install", "rules-engine@rules-engine"]):
        done = copilot_command(args, w.home, w.project)
        assert done.returncode == 0, str(done)
    # the plugin's environment, prepared once where Copilot keeps the plugin's data (measured)
    env = {**w.env_extra, "ENGINE_PLUGIN_PYTHON": sys.executable}
    data = w.home / ".copilot" / "plugin-data" / "rules-engine" / "rules-engine"
    prepare = {**env, "CLAUDE_PLUGIN_ROOT": str(source), "CLAUDE_PLUGIN_DATA": str(data)}
    assert run_hook(base_env(w.home, prepare), START, cwd=w.project, hook=source / "bin" / "plugin-hook")[0] == 0
    wait_for(data / "venv" / ".plugin-ready")
    project_hook = LogHook(tmp_path / "project-hook")
    run = run_copilot("go", w.home, w.project, [say("ok")], hooks=copilot_hooks(project_hook, ["sessionStart"]),
                      env={**env, "COPILOT_ALLOW_ALL": "false"})
    assert run.returncode == 0, str(run)
    first = request_text(run.requests[0])
    assert first.count(EFFORT) == 1, first[-2000:]
    assert project_hook.events() == [], "the folder is not trusted: its own hooks are skipped"
    report = _doctor(w, "copilot")
    assert report["firing"]["answered"] == 1, "the engine answered as Copilot's hook"
    # the plugin as Copilot recorded it, and no `engine install` asked for: it would run every event twice
    assert report["plugin"]["on"] is True and not [line for line in report["missing"] if "hooks" in line], report


@pytest.mark.skipif(not __import__("os").environ.get("ENGINE_TEST_AGENT_FACTS"),
                    reason="a measured fact about an agent: set ENGINE_TEST_AGENT_FACTS=1 to check it")
@pytest.mark.slow
def test_fact_codex_reads_a_projects_hooks_only_in_a_trusted_project(tmp_path):
    """tests/support/AGENTS-MEASURED.md, "Hook trust" (pipelines/agents/codex.yaml trust_check.project_trust)."""
    w = _world(tmp_path)
    subprocess.run(["git", "init", "-q", str(w.project)], check=True)
    _engine(w, "install", "--agent", "codex", "--project")
    assert list_hooks(w.home, w.project) == []
    (w.home / ".codex" / "config.toml").write_text(f'[projects."{w.project}"]\ntrust_level = "trusted"\n')
    (sub := w.project / "sub").mkdir()
    for cwd in (w.project, sub):
        listed = list_hooks(w.home, cwd)
        assert {h["key"].rsplit(":", 3)[0] for h in listed} == {str(w.project / ".codex" / "hooks.json")}
        assert {h["source"] for h in listed} == {"project"}
    assert _scope(_doctor(w, "codex"), "project")["trust"]["state"] == "untrusted", "the hooks themselves are not"
