"""`engine install --agent NAME` and `engine uninstall --agent NAME` for
each agent (pipelines/agents/NAME.yaml `install:`), `--detect`, and the
hook command's --agent/--event, on real files in a throwaway HOME.  The
real agents running these hooks: tests/test_agents_e2e.py."""

import itertools
import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from engine.ccm.selfcmd import interpreter_options
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

# The environment of every command here: no agent's home variable of the machine's.
NO_AGENT_VARS = {"CODEX_HOME": None, "COPILOT_HOME": None, "GEMINI_CLI_TRUSTED_FOLDERS_PATH": None}
# Where each agent's hooks go, relative to HOME (user) or the project.
FILES = {
    ("claude-code", "user"): ".claude/settings.json", ("claude-code", "project"): ".claude/settings.json",
    ("codex", "user"): ".codex/hooks.json", ("codex", "project"): ".codex/hooks.json",
    ("gemini", "user"): ".gemini/settings.json", ("gemini", "project"): ".gemini/settings.json",
    ("copilot", "user"): ".copilot/hooks/rules-engine.json", ("copilot", "project"): ".github/hooks/rules-engine.json",
}
# The built-in profile's events each agent has, in its own names (the profile's order).
EVENTS = {
    "claude-code": ["UserPromptSubmit", "SessionStart", "SubagentStart", "PreToolUse", "PostToolUse",
                    "PostToolUseFailure", "Stop", "PreCompact", "SessionEnd"],
    # no PreCompact: Codex takes no answer there and compacts between requests (no handler acts there)
    "codex": ["UserPromptSubmit", "SessionStart", "SubagentStart", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"],
    "gemini": ["BeforeAgent", "SessionStart", "BeforeTool", "AfterTool", "AfterAgent", "BeforeModel", "SessionEnd"],
    "copilot": ["userPromptSubmitted", "sessionStart", "subagentStart", "preToolUse", "postToolUse",
                "postToolUseFailure", "agentStop", "preCompact", "sessionEnd"],
}
# The built-in profile's events each agent lacks (install says so).
LACKS = {"claude-code": "before_model", "codex": "tool_failure, before_model",
         "gemini": "subagent_start, tool_failure, pre_compact", "copilot": "before_model"}
TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "BeforeTool", "AfterTool"}


def _path(hk, agent, scope):
    return (hk.home if scope == "user" else hk.project) / FILES[(agent, scope)]


def _engine(hk, *args, env=None):
    run = hk.engine(*args, env={**NO_AGENT_VARS, **(env or {})})
    assert "Traceback" not in run.stderr, str(run)
    return run


def _handlers(agent, data):
    """(event, group, handler) of every handler in an agent's hook file."""
    out = []
    for event, groups in data["hooks"].items():
        for group in groups:
            for handler in ([group] if agent == "copilot" else group["hooks"]):
                out.append((event, group, handler))
    return out


@pytest.mark.parametrize("agent,scope", sorted(FILES))
def test_each_agent_gets_its_own_shape_where_its_yaml_says(hk, agent, scope):
    run = _engine(hk, "install", "--agent", agent, f"--{scope}")
    assert run.returncode == 0, str(run)
    path = _path(hk, agent, scope)
    data = json.loads(path.read_text())
    assert list(data["hooks"]) == EVENTS[agent]
    for event, group, handler in _handlers(agent, data):
        command = handler["bash" if agent == "copilot" else "command"]
        argv = shlex.split(command)
        # the interpreter, isolated, on the engine-hook script beside it, then the options
        base = [sys.executable, *interpreter_options()]
        assert argv[:len(base)] == base and os.path.isabs(argv[len(base)]), command
        argv = argv[len(base) + 1:]
        assert argv[:2] == ["--agent", agent], command
        # Copilot's payload does not name its event: the command does
        assert argv[2:] == (["--event", event] if agent == "copilot" else []), command
        timeout = handler["timeoutSec" if agent == "copilot" else "timeout"]
        assert timeout == (10000 if agent == "gemini" else 10), "the profile's 10 s in the agent's unit"
        wants_matcher = agent != "copilot" and event in TOOL_EVENTS
        assert group.get("matcher") == ("*" if wants_matcher else None), (event, group)
        # Gemini's BeforeModel hooks run one after another, each given the request as the one before left it
        assert group.get("sequential") == (True if event == "BeforeModel" else None), (event, group)
    if agent == "copilot":
        assert data["version"] == 1
    if agent == "gemini":
        assert {h["name"] for _, _, h in _handlers(agent, data)} == {f"rules-engine-{e}" for e in EVENTS[agent]}
    skipped = [line for line in run.stdout.splitlines() if line.startswith("skipped")]
    assert [line.partition(": ")[2] for line in skipped] == [LACKS[agent]], run.stdout
    # what the user must still do: trusting the hooks in Codex, the folder in Gemini and Copilot
    todo = run.stdout.partition("to do before the hooks run:")[2]
    needs = {"codex": "trust", "gemini": "trusted folder" if scope == "project" else None,
             "copilot": "trusted folder" if scope == "project" else None}.get(agent)
    assert (needs in todo) if needs else not todo, run.stdout


def _users_file(agent):
    """A settings file as a user wrote it by hand: their own hook in one of
    our events, keys and spacing no JSON writer would choose."""
    theirs = ({"type": "command", "bash": "/opt/guard  --strict", "timeoutSec": 5} if agent == "copilot" else
              {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard  --strict"}]})
    event = EVENTS[agent][2]
    head = '{"version": 1,\n' if agent == "copilot" else "{\n"
    return (head + '   "zeta" :  [1,2,  3],\n   "hooks":{ "' + event + '": [' + json.dumps(theirs) + "] },\n"
            '   "alpha":"\\u00e9t\\u00e9"\n}\n')


@pytest.mark.parametrize("agent,scope", [("claude-code", "project"), ("codex", "user"), ("gemini", "user"),
                                         ("gemini", "project"), ("copilot", "project"), ("copilot", "user")])
def test_install_then_uninstall_gives_back_the_users_file_byte_for_byte(hk, agent, scope):
    path = _path(hk, agent, scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    original = _users_file(agent).encode()
    path.write_bytes(original)
    assert _engine(hk, "install", "--agent", agent, f"--{scope}").returncode == 0
    installed = json.loads(path.read_text())
    assert installed["zeta"] == [1, 2, 3] and len(_handlers(agent, installed)) == len(EVENTS[agent]) + 1
    assert _engine(hk, "install", "--agent", agent, f"--{scope}").stdout.count("already installed") == 1
    run = _engine(hk, "uninstall", "--agent", agent, f"--{scope}")
    assert run.returncode == 0 and "hooks removed" in run.stdout, str(run)
    assert path.read_bytes() == original, path.read_text()


@pytest.mark.parametrize("agent,scope", sorted(FILES))
def test_install_then_uninstall_leaves_no_file_and_no_folder_it_created(hk, agent, scope):
    base = hk.home if scope == "user" else hk.project
    (base / ".github").mkdir()
    (base / ".github" / "CODEOWNERS").write_text("* @me\n")
    before = sorted(str(p.relative_to(base)) for p in base.rglob("*"))
    assert _engine(hk, "install", "--agent", agent, f"--{scope}").returncode == 0
    assert _path(hk, agent, scope).exists()
    run = _engine(hk, "uninstall", "--agent", agent, f"--{scope}")
    assert run.returncode == 0 and "so it is gone" in run.stdout, str(run)
    assert sorted(str(p.relative_to(base)) for p in base.rglob("*")) == before


def test_claude_codes_extras_come_from_its_yaml_and_only_with_it(hk):
    prof = hk.root / "p.yaml"
    prof.write_text("kind: profile\nname: p\nextends: default\nhooks:\n  autocompact_pct: 70\n")
    for agent in ("codex", "gemini", "claude-code"):
        assert _engine(hk, "install", "--agent", agent, "--project", "--profile", str(prof)).returncode == 0
    gemini = json.loads((hk.project / ".gemini" / "settings.json").read_text())
    assert "env" not in gemini and not (hk.project / ".gemini" / "commands").exists()
    assert not (hk.project / ".codex" / "commands").exists()
    claude = json.loads((hk.project / ".claude" / "settings.json").read_text())
    assert claude["env"] == {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "70"}
    assert sorted(p.name for p in (hk.project / ".claude" / "commands").iterdir()) == [
        "pin-end.md", "pin-last.md", "pin-next.md", "pin-start.md"]
    for agent in ("codex", "gemini", "claude-code"):
        assert _engine(hk, "uninstall", "--agent", agent, "--project").returncode == 0
    assert os.listdir(hk.project) == [], "every file and folder install wrote is gone"


def test_uninstall_keeps_handlers_that_only_look_like_ours_in_every_shape(hk):
    engine = hk.root / "bin" / "engine-hook"
    looks = {
        "copilot": {"type": "command", "bash": f"{engine} --agent copilot --event sessionStart", "timeoutSec": 9,
                    "comment": "mine"},
        "gemini": {"type": "command", "name": "mine", "command": f"{engine} --agent gemini --verbose", "timeout": 5},
        "codex": {"type": "prompt", "command": f"{engine} --agent codex", "timeout": 5},
    }
    for agent, handler in looks.items():
        event = EVENTS[agent][1]
        group = handler if agent == "copilot" else {"hooks": [handler]}
        path = _path(hk, agent, "project")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"hooks": {event: [group]}}))
        assert _engine(hk, "install", "--agent", agent, "--project").returncode == 0
        assert _engine(hk, "uninstall", "--agent", agent, "--project").returncode == 0
        assert json.loads(path.read_text()) == {"hooks": {event: [group]}}, agent


def test_an_agents_file_the_engine_cannot_rewrite_is_one_line_and_left_alone(hk):
    path = _path(hk, "gemini", "user")
    path.parent.mkdir(parents=True)
    # a comment Gemini reads (tests/test_settings_comments.py), a trailing comma it refuses as well
    text = '{\n  // my comment\n  "general": {},\n}\n'
    path.write_text(text)
    run = _engine(hk, "install", "--agent", "gemini", "--user")
    assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1, str(run)
    assert "settings.json:4:1: settings file is not valid JSON" in run.stderr, str(run)
    assert "nothing was changed" in run.stderr
    assert path.read_text() == text and os.listdir(path.parent) == ["settings.json"]
    run = _engine(hk, "install", "--agent", "cursor")
    assert run.returncode == 1 and "no agent named 'cursor'" in run.stderr and "codex" in run.stderr, str(run)


def _tree(folder):
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() and not p.is_symlink() else str(p.is_symlink())
            for p in sorted(folder.rglob("*"))}


def test_a_project_hooks_folder_linking_out_of_the_project_is_refused(hk):
    """A cloned repository ships .github/hooks -> the user's own Copilot hooks:
    install and uninstall refuse it in one line and write nothing anywhere."""
    users = hk.home / ".copilot" / "hooks"
    users.mkdir(parents=True)
    (users / "rules-engine.json").write_text('{"version": 1, "hooks": {}}\n')
    (hk.project / ".github").mkdir()
    (hk.project / ".github" / "hooks").symlink_to(os.path.relpath(users, hk.project / ".github"))
    (hk.home / ".claude").mkdir()  # --detect finds Claude Code (installed first) and Copilot
    before, project = _tree(hk.home), _tree(hk.project)
    for command, which in itertools.product(("install", "uninstall"), (("--agent", "copilot"), ("--detect",))):
        run = _engine(hk, command, *which, "--project", env={"PATH": _fake_agents(hk, [])})
        assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1, str(run)
        assert run.stderr.startswith(".github/hooks/rules-engine.json: ") and "outside the project" in run.stderr
        assert _tree(hk.home) == before and _tree(hk.project) == project, "nothing written, for no agent"


def _fake_agents(hk, commands):
    """A PATH holding only these agents' commands (each prints a version)."""
    bindir = hk.root / "fakebin"
    bindir.mkdir(exist_ok=True)
    for name in commands:
        script = bindir / name
        script.write_text("#!/bin/sh\necho 1.2.3\n")
        script.chmod(0o755)
    return str(bindir)


def test_detect_installs_for_every_agent_found_and_lists_each_file(hk):
    path = _fake_agents(hk, ["codex", "gemini"])
    (hk.home / ".copilot").mkdir()  # found by its home folder alone
    run = _engine(hk, "install", "--detect", "--user", env={"PATH": path})
    assert run.returncode == 0, str(run)
    headers = [line for line in run.stdout.splitlines() if line.endswith(":") and not line.startswith(" ")
               and line not in ("wrote:", "to do before the hooks run:")]
    assert headers == ["Codex CLI:", "Copilot CLI:", "Gemini CLI:"], run.stdout
    listed = [line.split()[0] for line in run.stdout.splitlines() if line.startswith("  /")]
    for agent in ("codex", "copilot", "gemini"):
        assert str(_path(hk, agent, "user")) in listed, run.stdout
    assert not (hk.home / ".claude").exists(), "Claude Code is not on this machine"
    run = _engine(hk, "uninstall", "--detect", "--user", env={"PATH": path})
    assert run.returncode == 0 and run.stdout.count("hooks removed") == 3, str(run)
    assert sorted(os.listdir(hk.home)) == [".copilot"]
    os.rmdir(hk.home / ".copilot")
    empty = hk.root / "empty"
    empty.mkdir()
    run = _engine(hk, "install", "--detect", env={"PATH": str(empty)})
    assert run.returncode == 1 and "found no agent" in run.stderr, str(run)


def test_detect_changes_no_agent_when_one_agents_file_is_broken(hk):
    """--detect installed Codex, then stopped at Gemini's broken file with
    "nothing was changed": every agent's file is read before any is written."""
    path = _fake_agents(hk, ["codex", "gemini"])
    gemini = _path(hk, "gemini", "user")
    gemini.parent.mkdir(parents=True)
    gemini.write_text('{"general": {},}\n')
    for command in ("install", "uninstall"):
        run = _engine(hk, command, "--detect", "--user", env={"PATH": path})
        assert run.returncode == 1 and "settings.json:1:" in run.stderr and "nothing was changed" in run.stderr, str(run)
        assert "Codex CLI:" not in run.stdout, run.stdout
        assert sorted(os.listdir(hk.home)) == [".gemini"] and os.listdir(gemini.parent) == ["settings.json"]


def test_the_hook_command_passes_its_agent_and_event_to_the_dispatcher(monkeypatch, tmp_path):
    import importlib

    monkeypatch.chdir(tmp_path)  # a folder without agent settings

    from engine.hooks import dispatch

    cli = importlib.import_module("engine.cli.main")

    seen = []
    monkeypatch.setattr(dispatch, "main", lambda profile=None, **kw: seen.append((profile, kw)) or 0)
    monkeypatch.delenv("ENGINE_HOOKS_PASSTHROUGH", raising=False)
    assert cli.main(["hook", "--agent", "copilot", "--event=sessionStart", "--profile", "/p/x.yaml"]) == 0
    assert cli.main(["hook", "--profile=default"]) == 0
    nothing = []  # no variable of the engine's that a project set (tests/test_project_env.py)
    assert seen == [("/p/x.yaml", {"agent": "copilot", "event_name": "sessionStart", "dropped": nothing}),
                    ("default", {"agent": None, "event_name": None, "dropped": nothing})]
    assert cli.hook_options(["--agent"]) == {}, "a hook never fails on its own arguments"


@pytest.mark.parametrize("agent", list(EVENTS))
def test_the_installed_command_answers_the_agents_session_start(hk, agent):
    """The command the install wrote, run as the agent runs it (through the
    shell, its program and all), answers a session start in the agent's own
    payload with the built-in profile's effort guidance."""
    import subprocess

    from engine.agents import table

    assert _engine(hk, "install", "--agent", agent, "--project").returncode == 0
    data = table.get(agent).data
    name = next(e for e, neutral in data["events"].items() if neutral == "session_start")
    handler = next(h for e, _, h in _handlers(agent, json.loads(_path(hk, agent, "project").read_text())) if e == name)
    command = handler["bash" if agent == "copilot" else "command"]
    fields = data["payload"]
    payload = {fields["session"]: "s-installed", fields["cwd"]: str(hk.project),
               fields["source"]: next(k for k, v in data["session_sources"].items() if v == "startup")}
    if data.get("event_key"):
        payload[data["event_key"]] = name
    run = subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                         cwd=str(hk.project), env=hk.env(NO_AGENT_VARS), timeout=60)
    assert run.returncode == 0 and "Effort policy" in run.stdout, (command, run)


def test_distribution_hooks_are_the_ones_engine_install_writes():
    """The Codex plugin (.codex-plugin/plugin.json -> hooks/codex.json), the
    Copilot CLI plugin (.github/plugin/plugin.json -> hooks/copilot.json, each
    command naming its event as `engine install --agent copilot` writes it)
    and the Gemini extension (extensions/gemini/) run bin/plugin-hook for the
    events `engine install --agent` writes, in the same groups."""
    from engine.agents.table import get
    from engine.core.profile import load_profile
    from engine.hooks.entries import group_for, plan
    from engine.hooks.install import installed_events

    repo = Path(__file__).resolve().parent.parent
    hooks = load_profile("default").hooks
    manifest = json.loads((repo / ".codex-plugin" / "plugin.json").read_text())
    claude = json.loads((repo / ".claude-plugin" / "plugin.json").read_text())
    assert (manifest["name"], manifest["version"]) == (claude["name"], claude["version"])
    copilot = json.loads((repo / ".github" / "plugin" / "plugin.json").read_text())
    assert (copilot["name"], copilot["version"]) == (claude["name"], claude["version"])
    from engine.core.settings import plain

    assert plain()["doctor"]["plugin_name"] == claude["name"], "the name engine doctor looks for in the agents' records"
    extension = json.loads((repo / "extensions" / "gemini" / "gemini-extension.json").read_text())
    assert (extension["name"], extension["version"]) == (claude["name"], claude["version"])
    for agent, file, command in (
            ("codex", repo / manifest["hooks"], '"${PLUGIN_ROOT}/bin/plugin-hook" --agent codex'),
            ("copilot", repo / copilot["hooks"], '"${COPILOT_PLUGIN_ROOT}/bin/plugin-hook" --agent copilot --event {event}'),
            ("gemini", repo / "extensions" / "gemini" / "hooks" / "hooks.json",
             '"${extensionPath}${/}..${/}..${/}bin${/}plugin-hook" --agent gemini')):
        spec = get(agent)
        wanted, _ = plan(spec, installed_events(hooks, spec))  # none where no handler acts for the agent
        shipped = json.loads(file.read_text())["hooks"]
        assert shipped == {name: [group_for(spec, neutral, name, command.replace("{event}", name), hooks["install_timeout_seconds"])]
                           for neutral, name in wanted}, agent


def test_an_agent_document_whose_install_part_cannot_work_is_refused_where_it_is_wrong(hk):
    repo = Path(__file__).resolve().parent.parent
    text = (repo / "pipelines" / "agents" / "codex.yaml").read_text()
    broken = text.replace('command: "{command}", timeout: "{timeout}"}]}', 'run: "{command}x", timeout: "{timeout}"}]}')
    broken = broken.replace("labels: {SessionStart: session_start,", "labels: {SessionBegins: session_start,")
    assert broken.count("{command}x") == 1 and "SessionBegins" in broken
    path = hk.root / "agent.yaml"
    path.write_text(broken)
    run = hk.engine("validate", str(path))
    assert run.returncode == 1, str(run)
    lines = run.stderr.splitlines()
    assert len(lines) == 2 and all(line.startswith(f"{path}:") for line in lines), run.stderr
    assert sum('install.group names no "{command}"' in line for line in lines) == 1, lines
    assert sum("'SessionBegins'" in line for line in lines) == 1, lines


def test_the_events_install_writes_are_the_profiles_in_each_agents_words():
    """agent_events/tool_events (the seam's view of install): a profile
    naming events in neutral words or in Claude Code's gets each agent's
    own names, in the profile's order, without the ones it lacks, a
    disabled handler's, or one where no handler can act for it (the
    compaction's instructions, which only Claude Code's answer carries);
    the matcher events are the agent's YAML's."""
    from engine.hooks.install import agent_events, tool_events

    hooks = {"events": {"post_tool": [{"kind": "ccm_output"}], "SessionStart": [{"kind": "effort_guidance"}],
                        "tool_failure": [{"kind": "tool_memory_record"}],
                        "Stop": [{"kind": "context_monitor", "enabled": False}],
                        "pre_compact": [{"kind": "compact_instructions", "enabled": True}]}}
    assert agent_events(hooks) == ["PostToolUse", "SessionStart", "PostToolUseFailure", "PreCompact"]
    assert agent_events(hooks, "copilot") == ["postToolUse", "sessionStart", "postToolUseFailure"]
    assert agent_events(hooks, "codex") == ["PostToolUse", "SessionStart"]
    assert agent_events(hooks, "gemini") == ["AfterTool", "SessionStart"]
    hooks["events"]["pre_compact"].append({"kind": "growth_refresh", "handlers": ["rules"]})  # its background summary
    assert agent_events(hooks, "copilot")[-1] == "preCompact" and "PreCompact" not in agent_events(hooks, "codex")
    assert tool_events() == {"PreToolUse", "PostToolUse", "PostToolUseFailure"}
    assert tool_events("gemini") == {"BeforeTool", "AfterTool"}
    assert tool_events("copilot") == set()


def test_detect_leaves_an_agent_whose_plugin_is_on_and_a_named_install_says_it_runs_twice(hk):
    """Copilot CLI 1.0.102 records the engine's plugin as on in its
    settings.json (enabledPlugins, measured): `engine install --detect`
    leaves it as it is (its hooks would run every event twice) and says
    how to install anyway; `--agent copilot` installs, and says so."""
    path = _fake_agents(hk, ["codex", "copilot"])
    record = hk.home / ".copilot" / "settings.json"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text('{"enabledPlugins": {"rules-engine@rules-engine": true}}')
    run = _engine(hk, "install", "--detect", "--user", env={"PATH": path})
    assert run.returncode == 0, str(run)
    assert (f"{record}: the engine's plugin is on; not installed again, or every event would run twice "
            "(engine install --agent copilot installs anyway)") in run.stdout, run.stdout
    assert _path(hk, "codex", "user").exists() and not _path(hk, "copilot", "user").exists()
    run = _engine(hk, "install", "--agent", "copilot", "--user", env={"PATH": path})
    assert run.returncode == 0 and _path(hk, "copilot", "user").exists(), str(run)
    assert (f"note: the engine's plugin is on as well ({record}): every event runs twice; keep one (engine "
            "uninstall --agent copilot --user, or turn the plugin off)") in run.stderr, run.stderr
