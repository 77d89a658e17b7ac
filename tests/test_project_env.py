"""A project's variables are not the user's (engine/hooks/projectenv.py).

Measured (pipelines/agents/*.yaml `project_environment`): Claude Code 2.1.330
puts the `env` of the project's `.claude/settings.json` and
`.claude/settings.local.json` into every hook's environment, over its own;
Gemini CLI 0.61.0, in a trusted folder, the variables of the first
`.gemini/.env` or `.env` from the project's folder up that are not set
already; Codex CLI 0.169.0 and Copilot CLI 1.0.102 none (a project's `.env`,
`.codex/.env`, `.codex/config.toml` shell_environment_policy, `.github/.env`
reached no hook).  Such a variable naming the profile, the state or cache
folder, the Redis server or the off switch would let a cloned repository
choose them as if it were the user: the hook drops each one the project's
files name, and runs as if it were not set.
"""

import json
import os
import re
from pathlib import Path

import pytest

import forkrun
from engine.agents import table
from engine.agents.projectenv import ANY, declared
from engine.base.paths import USER_VARIABLES
from hook_fixtures import HookEnv, warm_template

REPO = Path(__file__).resolve().parent.parent
CLAUDE, GEMINI, CODEX = (table.get(n) for n in ("claude-code", "gemini", "codex"))
EFFORT_USERS, EFFORT_PROJECTS = "[Effort policy: medium]", "[Effort policy: low]"


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- what a project's files name


def test_claude_codes_two_settings_files_name_their_env(tmp_path):
    _write(tmp_path / ".claude" / "settings.json", json.dumps({"env": {"ENGINE_PROFILE": "x"}, "hooks": {}}))
    _write(tmp_path / ".claude" / "settings.local.json", json.dumps({"env": {"ENGINE_STATE_DIR": "/y", "N": 1}}))
    assert declared(CLAUDE, [str(tmp_path)], "/nonexistent") == {"ENGINE_PROFILE", "ENGINE_STATE_DIR", "N"}
    # the agent's project root and the hook's folder are both looked at
    other = tmp_path / "other"
    _write(other / ".claude" / "settings.json", json.dumps({"env": {"ENGINE_REDIS_URL": "redis://x"}}))
    assert "ENGINE_REDIS_URL" in declared(CLAUDE, [str(tmp_path), str(other)], "/nonexistent")


@pytest.mark.parametrize("content", ["{not json", json.dumps({"env": {}}) + " " * (1 << 20)], ids=["not-json", "over-cap"])
def test_a_settings_file_that_cannot_be_read_whole_may_name_anything(tmp_path, content):
    _write(tmp_path / ".claude" / "settings.json", content)
    assert declared(CLAUDE, [str(tmp_path)], "/nonexistent") is ANY


@pytest.mark.parametrize("make", [os.mkfifo, lambda p: p.symlink_to("/dev/zero"), lambda p: p.symlink_to(p),
                                  lambda p: p.symlink_to("gone"), os.mkdir],
                         ids=["fifo", "dev-zero", "link-loop", "broken-link", "folder"])
def test_what_the_agent_cannot_read_either_names_nothing_and_costs_nothing(tmp_path, make):
    (tmp_path / ".claude").mkdir()
    make(tmp_path / ".claude" / "settings.json")
    assert declared(CLAUDE, [str(tmp_path)], "/nonexistent") == set()


def test_gemini_reads_the_first_env_file_from_the_project_up(tmp_path):
    home, project = tmp_path / "home", tmp_path / "home" / "src" / "project"
    project.mkdir(parents=True)
    assert declared(GEMINI, [str(project)], str(home)) == set()
    _write(home / ".env", "ENGINE_PROFILE=users-own\n")  # the user's own file: not the project's
    assert declared(GEMINI, [str(project)], str(home)) == set()
    _write(home / "src" / ".env", "export ENGINE_STATE_DIR=/x\n")  # above the project, not the home folder
    assert declared(GEMINI, [str(project)], str(home)) == {"ENGINE_STATE_DIR"}
    _write(project / ".env", "# a comment\nENGINE_REDIS_URL = redis://x  # inline\nXDG_CONFIG_HOME: /y\nnot a line\n")
    assert declared(GEMINI, [str(project)], str(home)) == {"ENGINE_REDIS_URL", "XDG_CONFIG_HOME"}
    _write(project / ".gemini" / ".env", "ENGINE_HOOKS_PASSTHROUGH='1'\n")  # looked for first, in each folder
    assert declared(GEMINI, [str(project)], str(home)) == {"ENGINE_HOOKS_PASSTHROUGH"}


def test_a_byte_order_mark_is_a_blank_to_geminis_env_parser_and_here(tmp_path):
    """Gemini CLI's dotenv parser skips JavaScript's \\s around a name, and
    U+FEFF is one (Python's isspace is false for it): each of these lines
    sets its variable for the hooks."""
    bom = "\ufeff"
    _write(tmp_path / ".env", f"OK=1\n{bom}ENGINE_PROFILE=mine.yaml\nexport{bom}ENGINE_STATE_DIR=st\n"
                              f"ENGINE_REDIS_URL{bom}=redis://x\n")
    assert declared(GEMINI, [str(tmp_path)], "/nonexistent") == {"OK", "ENGINE_PROFILE", "ENGINE_STATE_DIR",
                                                                  "ENGINE_REDIS_URL"}


def test_an_agent_that_takes_no_project_variables_names_none(tmp_path):
    _write(tmp_path / ".env", "ENGINE_PROFILE=x\n")
    _write(tmp_path / ".codex" / ".env", "ENGINE_PROFILE=x\n")
    assert declared(CODEX, [str(tmp_path)], "/nonexistent") == set()


# Named by the engine only to set them, never read as the user's: the replay
# world points XDG_DATA_HOME at its own folder (engine/replay/world.py).
ONLY_SET = {"XDG_DATA_HOME"}


def test_every_variable_the_engine_reads_as_the_users_is_guarded():
    """Every ENGINE_ or XDG_ name any module of the engine writes, however
    it reads it (os.environ, os.getenv, a constant), is on the guarded list;
    the list's own definition does not count."""
    named = set()
    for path in (REPO / "engine").rglob("*.py"):
        text = path.read_text()
        if path == REPO / "engine" / "base" / "paths.py":
            text = re.sub(r"(?s)^USER_VARIABLES = \(.*?\)\n", "", text, flags=re.M)
        named |= set(re.findall(r"""["']((?:ENGINE|XDG)_[A-Z0-9_]+)["']""", text))
    assert {"ENGINE_PROFILE", "ENGINE_CONTENT_CACHE", "XDG_CACHE_HOME"} <= named, sorted(named)  # the scan sees them
    assert named - ONLY_SET <= set(USER_VARIABLES), sorted(named - ONLY_SET - set(USER_VARIABLES))


# ---------------------------------------------------------------- what the hook does with them


def _hostile_settings(w, outside, fmt="claude"):
    """The project's agent settings choose its own profile (effort low), a
    state folder outside it, and the hooks off."""
    profile = _write(w.project / ".engine" / "mine.yaml",
                     "kind: profile\nname: mine\nextends: default\nhooks:\n  effort: low\n")
    chosen = {"ENGINE_PROFILE": str(profile), "ENGINE_STATE_DIR": str(outside), "ENGINE_HOOKS_PASSTHROUGH": "1"}
    if fmt == "claude":
        _write(w.project / ".claude" / "settings.json", json.dumps({"env": chosen}))
    else:  # "gemini", or "gemini-bom": each name after a U+FEFF, a blank to Gemini's parser
        blank = "\ufeff" if fmt == "gemini-bom" else ""
        _write(w.project / ".gemini" / ".env", "".join(f"{blank}{k}={v}\n" for k, v in chosen.items()))
    return chosen


def _default_log(w):
    """The hook log of the default state folder under the test's HOME."""
    path = w.home / ".local" / "state" / "rules-engine" / "hook.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_the_hook_ignores_what_the_projects_settings_chose(tmp_path):
    warm_template()
    w = HookEnv(tmp_path)
    outside = tmp_path / "outside-state"
    chosen = _hostile_settings(w, outside)
    run = w.hook(w.event("SessionStart"), env=chosen)  # as the agent runs it: the project's values set
    run.assert_ok()
    assert EFFORT_USERS in run.context and EFFORT_PROJECTS not in run.context, run
    assert not outside.exists()
    log = _default_log(w)  # the state folder the project chose is not the user's: the default one serves
    assert "set ENGINE_HOOKS_PASSTHROUGH, ENGINE_PROFILE, ENGINE_STATE_DIR for the hooks" in log, log


def test_the_agents_version_variable_a_project_sets_is_dropped(tmp_path):
    """Audit: AI_AGENT, the version the engine takes when the transcript names
    none (which answers the agent is sent), was not guarded: a project's
    settings `env` chose it, and one of "²" digits failed a handler."""
    from engine.hooks.projectenv import engine_variables

    assert "AI_AGENT" in engine_variables(table.agents())  # from the agent's YAML, `version.env`
    warm_template()
    w = HookEnv(tmp_path)
    chosen = {"AI_AGENT": "claude-code_2-\u00b2-330_harness"}
    _write(w.project / ".claude" / "settings.json", json.dumps({"env": chosen}))
    w.hook(w.event("SessionStart"), env=chosen).assert_ok()
    assert any("set AI_AGENT for the hooks: the project's, not yours" in line for line in w.log_lines()), w.log_lines()


def test_the_gemini_hook_ignores_what_a_projects_env_file_hides_behind_a_byte_order_mark(tmp_path):
    warm_template()
    w = HookEnv(tmp_path)
    profile = _write(w.project / ".engine" / "mine.yaml",
                     "kind: profile\nname: mine\nextends: default\nhooks:\n  effort: low\n")
    _write(w.project / ".env", f"\ufeffENGINE_PROFILE={profile}\n")
    event = json.dumps({"hook_event_name": "SessionStart", "session_id": w.session, "source": "startup",
                        "cwd": str(w.project), "transcript_path": str(w.transcript)}).encode()
    run = w.engine("hook", "--agent", "gemini", stdin=event, env={"ENGINE_PROFILE": profile})  # as Gemini gives it
    assert run.returncode == 0, run
    assert EFFORT_USERS in run.stdout and EFFORT_PROJECTS not in run.stdout, run
    assert any("set ENGINE_PROFILE for the hooks: the project's, not yours" in line for line in w.log_lines())


def test_the_users_own_variables_are_kept(tmp_path):
    warm_template()
    w = HookEnv(tmp_path)
    _write(w.project / ".claude" / "settings.json", json.dumps({"env": {"SOMETHING_ELSE": "1"}}))
    profile = _write(tmp_path / "users" / "mine.yaml", "kind: profile\nname: mine\nextends: default\nhooks:\n  effort: low\n")
    run = w.hook(w.event("SessionStart"), env={"ENGINE_PROFILE": str(profile)})
    run.assert_ok()
    assert EFFORT_PROJECTS in run.context, run
    assert not any("not yours" in line for line in w.log_lines())
    # and the off switch is the user's too
    off = w.hook(w.event("SessionStart"), env={"ENGINE_HOOKS_PASSTHROUGH": "1"})
    assert off.returncode == 0 and off.stdout == "", off


def test_a_command_an_agents_shell_runs_ignores_them_too_and_says_so(cli, tmp_path):
    """`engine compress` here, as any command (a stub's read-back, Gemini's
    tail call): the project's `.env` names a cache folder outside it, which
    the command's environment carries (as Gemini's shell would)."""
    outside = tmp_path / "outside-cache"
    _write(cli.cwd / ".env", f"ENGINE_CACHE_DIR={outside}\n")
    rule = _write(cli.cwd / "rules.md", "# Rules\nAlways run the tests before you commit.\n")
    run = cli("compress", rule, "--level", "light", env={"ENGINE_CACHE_DIR": outside})
    assert run.returncode == 0 and "Always run the tests" in run.out, run
    assert not outside.exists()
    assert run.err.strip() == ("engine: note: this project's agent settings set ENGINE_CACHE_DIR for this command: "
                               "the project's, not yours; ignored"), run


def test_a_removed_working_folder_holds_no_project_and_the_users_variables_stay(tmp_path):
    """A shell whose folder was removed under it: no project's files to read,
    so nothing is the project's (and no error is misreported)."""
    import subprocess
    import sys

    gone, state = tmp_path / "gone", tmp_path / "state"
    gone.mkdir()
    code = "import sys; from engine.cli.main import main; sys.exit(main(sys.argv[1:]))"
    env = dict(os.environ, ENGINE_STATE_DIR=str(state), PYTHONPATH=str(REPO))
    env.pop("ENGINE_PROFILE", None)
    for args, stdin in ((["--version"], ""), (["hook"], json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": str(tmp_path),
                                                                      "session_id": "s1", "prompt": "go on"}))):
        proc = subprocess.run(["sh", "-c", f'cd "{gone}" && rmdir "{gone}" && exec "$0" -c "$@"', sys.executable,
                               code, *args], input=stdin, capture_output=True, text=True, env=env, timeout=60)
        gone.mkdir()
        assert proc.returncode == 0 and not proc.stderr, proc
    # the hook counted the prompt in the user's state folder: the variable stayed the user's
    assert list((state / "sessions").glob("s1*.json")), sorted(state.rglob("*"))
    assert not (state / "hook.log").exists() or "not yours" not in (state / "hook.log").read_text()


def test_the_doctor_names_what_the_projects_settings_set(cli):
    _write(cli.cwd / ".claude" / "settings.json", json.dumps({"env": {"ENGINE_PROFILE": "x", "OTHER": "1"}}))
    _write(cli.cwd / ".env", "ENGINE_REDIS_URL=redis://x\n")  # Gemini's, not Claude Code's
    run = cli("doctor", "--json", "--agent", "claude-code", "--agent", "codex", "--agent", "gemini")
    assert run.returncode == 0, run
    reports = {a["name"]: a for a in json.loads(run.out)["agents"]}
    assert {n: a["project_variables"] for n, a in reports.items()} == {
        "claude-code": ["ENGINE_PROFILE"], "codex": [], "gemini": ["ENGINE_REDIS_URL"]}
    assert any("set ENGINE_PROFILE for the hooks: ignored" in line for line in reports["claude-code"]["missing"])
    assert not any("agent settings" in line for line in reports["codex"]["missing"])
    _write(cli.cwd / ".claude" / "settings.json", " " * (1 << 20) + "{}")  # too large to look into
    run = cli("doctor", "--agent", "claude-code")
    assert "any of the engine's variables for the hooks: ignored" in run.out, run


# ---------------------------------------------------------------- with the real agents


@pytest.mark.slow
def test_claude_code_runs_the_users_engine_whatever_the_project_settings_env_says(tmp_path):
    from support.agent import install_hooks, request_text, run_agent, text

    warm_template()
    w = HookEnv(tmp_path / "w")
    agent_env = {"ENGINE_STATE_DIR": w.state, "ENGINE_CACHE_DIR": w.cache}
    install_hooks(w.home, w.project, agent_env)
    outside = tmp_path / "outside-state"
    _hostile_settings(w, outside)
    run = run_agent("hi", w.home, w.project, [text("Hello.")], env=agent_env)
    assert run.returncode == 0 and run.output and not run.output.get("is_error"), str(run)
    first = request_text(run.requests[0])
    assert EFFORT_USERS in first and EFFORT_PROJECTS not in first, first[:3000]
    assert not outside.exists()
    # The agent gave the hooks the project's ENGINE_STATE_DIR over the user's
    # (w.state), which is then not known: the default state folder serves.
    log = _default_log(w)
    assert "ENGINE_STATE_DIR for the hooks: the project's, not yours" in log, log


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["gemini", "gemini-bom"])
def test_gemini_runs_the_users_engine_whatever_the_projects_env_file_says(tmp_path, fmt):
    import subprocess

    from support import gemini_api
    from support.gemini import run_gemini
    from support.offline import base_env
    from support.standin import say

    warm_template()
    w = HookEnv(tmp_path / "w")
    subprocess.run(["git", "init", "-q", str(w.project)], check=True)
    env = {"ENGINE_CACHE_DIR": str(w.cache)}  # no state folder of the user's: the .env's would be taken
    proc = forkrun.completed(["install", "--agent", "gemini", "--user"], cwd=w.project, env=base_env(w.home, env),
                             timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outside = tmp_path / "outside-state"
    _hostile_settings(w, outside, fmt=fmt)
    run = run_gemini("hi", w.home, w.project, [say("Hello.")], env=env)
    assert run.returncode == 0, str(run)
    first = gemini_api.request_text(run.requests[0])
    assert EFFORT_USERS in first and EFFORT_PROJECTS not in first, first[:3000]
    assert not outside.exists()
