"""The real agents run the hooks the engine installs for them, offline
(tests/support/offline.py): Codex CLI, Gemini CLI and Copilot CLI each start
one session with the hooks `engine install --agent NAME` wrote, and the
session's start reaches the engine; `engine doctor` then says the hooks are
installed, trusted (Codex: by the hashes its own app server reports) and
firing.  The Gemini CLI extension (extensions/gemini/, linked) runs the
engine's hooks the same way, and Codex installs this repository as a plugin
whose hooks name Codex.

One run per agent, in parallel under xdist; each takes 2-10 s."""

import json
import subprocess
import sys

import pytest

from hook_fixtures import HookEnv, warm_template
from support import gemini_api, responses_api
from support.agent import REPO
from support.codex import codex_command, list_hooks, run_codex, trust_hooks
from support.copilot import events_of, run_copilot
from support.gemini import gemini_command, run_gemini
from support.offline import base_env
from support.plugin import START, run_hook, wait_for
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
    proc = subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=str(w.project), env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, f"engine {args}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _doctor(w, agent):
    (report,) = json.loads(_engine(w, "doctor", "--json", "--agent", agent))["agents"]
    return report


def _scope(report, scope):
    return next(s for s in report["hooks"] if s["scope"] == scope)


@pytest.mark.slow
def test_codex_runs_the_hooks_engine_install_wrote_once_they_are_trusted(tmp_path):
    w = _world(tmp_path)
    out = _engine(w, "install", "--agent", "codex", "--user")
    assert "open /hooks and trust" in out
    listed = trust_hooks(w.home, w.project)  # what Codex's /hooks dialog writes into config.toml
    assert len(listed) == 6 and all("--agent codex" in h["command"] for h in listed)
    assert _scope(_doctor(w, "codex"), "user")["trust"]["state"] == "trusted", "our hash is Codex's"
    run = run_codex("go", w.home, w.project, [say("ok")], env=w.env_extra, bypass_hook_trust=False)
    assert run.returncode == 0, str(run)
    assert EFFORT in responses_api.request_text(run.requests[0]), "SessionStart reached the engine, and its answer the model"
    firing = _doctor(w, "codex")["firing"]
    assert (firing["sessions"], firing["answered"]) == (1, 1), firing


@pytest.mark.slow
def test_gemini_runs_the_hooks_engine_install_wrote(tmp_path):
    w = _world(tmp_path)
    _engine(w, "install", "--agent", "gemini", "--user")
    run = run_gemini("go", w.home, w.project, [say("ok")], env=w.env_extra)
    assert run.returncode == 0, str(run)
    first = gemini_api.request_text(run.requests[0])
    assert "<hook_context>" in first and EFFORT in first, first[-2000:]
    report = _doctor(w, "gemini")
    assert (report["firing"]["sessions"], report["firing"]["answered"]) == (1, 1), report["firing"]
    assert _scope(report, "user")["trust"]["state"] == "not needed"


def _engine_saw(w, session):
    """The engine read an event of this session: its record of answering,
    or a line of its hook log (an event it could not use yet)."""
    from engine.core.records import session_key

    log = w.state / "hook.log"
    return (w.state / "records" / f"{session_key(session)}.ndjson").exists() or (
        log.exists() and log.read_text().strip() != "")


@pytest.mark.slow
def test_copilot_runs_the_hooks_engine_install_wrote_into_the_repository(tmp_path):
    w = _world(tmp_path)
    out = _engine(w, "install", "--agent", "copilot", "--project")
    assert "trusted folder" in out
    run = run_copilot("go", w.home, w.project, [say("ok")], env=w.env_extra)  # COPILOT_ALLOW_ALL=true: trusted
    assert run.returncode == 0, str(run)
    records = events_of(run)
    ended = {r["data"]["hookType"]: r["data"] for r in records if r["type"] == "hook.end"}
    assert {"sessionStart", "userPromptSubmitted", "agentStop", "sessionEnd"} <= set(ended), sorted(ended)
    assert all(d["success"] for d in ended.values()), ended
    (start,) = [r for r in records if r["type"] == "session.start"]
    assert _engine_saw(w, start["data"]["sessionId"])
    report = _doctor(w, "copilot")
    assert _scope(report, "project")["installed"][:2] == ["userPromptSubmitted", "sessionStart"]
    assert _scope(report, "project")["trust"]["state"] == "untrusted", "COPILOT_ALLOW_ALL is no trust on record"


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
        ("user_prompt_submit", "session_start", "pre_tool_use", "post_tool_use", "stop", "pre_compact"))
    root = w.home / ".codex" / "plugins" / "cache" / "rules-engine" / "rules-engine" / "0.1.0"
    assert {h["command"] for h in listed} == {f'"{root}/bin/plugin-hook" --agent codex'}


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
