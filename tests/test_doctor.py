"""`engine doctor`: each agent found, its version (its own `--version`,
bounded), whether the engine's hooks are installed, trusted and firing, the
mechanism of each feature, and what is missing; on a throwaway HOME with
each agent's hooks installed by `engine install`, the agents themselves
stood in for by scripts that print their versions.  The real agents:
tests/test_agents_e2e.py."""

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture
from test_install_agents import NO_AGENT_VARS

# What each agent's `--version` prints (tests/support/AGENTS-MEASURED.md, Claude Code 2.1.330).
VERSIONS = {"claude": "2.1.330 (Claude Code)", "codex": "codex-cli 0.169.0", "gemini": "0.61.0",
            "copilot": "GitHub Copilot CLI 1.0.102."}


def _agents_on_path(hk, printed=VERSIONS):
    bindir = hk.root / "agents-bin"
    bindir.mkdir(exist_ok=True)
    for name, text in printed.items():
        (bindir / name).write_text(f"#!/bin/sh\nprintf '%s\\n' '{text}'\n")
        (bindir / name).chmod(0o755)
    return {**NO_AGENT_VARS, "PATH": str(bindir)}


def _doctor(hk, env, *args):
    run = hk.engine("doctor", "--json", *args, env=env)
    assert run.returncode == 0 and "Traceback" not in run.stderr, str(run)
    return {a["name"]: a for a in json.loads(run.stdout)["agents"]}


def _scope(report, scope):
    return next(s for s in report["hooks"] if s["scope"] == scope)


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_doctor_on_a_home_with_each_agent_installed(hk):
    env = _agents_on_path(hk)
    for agent, scope in (("claude-code", "user"), ("codex", "user"), ("gemini", "project"), ("copilot", "project")):
        assert hk.engine("install", "--agent", agent, f"--{scope}", env=env).returncode == 0
    project = str(hk.project)
    _write(hk.home / ".gemini" / "trustedFolders.json", json.dumps({project + "/x": "TRUST_PARENT"}))
    _write(hk.home / ".copilot" / "config.json", '// managed\n{"trusted_folders": ["%s"]}\n' % project)
    found = _doctor(hk, env)
    assert sorted(found) == ["claude-code", "codex", "copilot", "gemini"]
    assert {n: a["version"]["value"] for n, a in found.items()} == {
        "claude-code": "2.1.330", "codex": "0.169.0", "gemini": "0.61.0", "copilot": "1.0.102"}
    claude, codex, gemini, copilot = (found[n] for n in ("claude-code", "codex", "gemini", "copilot"))
    assert _scope(claude, "user")["trust"]["state"] == "not needed"
    assert _scope(codex, "user")["trust"]["state"] == "untrusted"
    assert any("not trusted" in line and "/hooks" in line for line in codex["missing"]), codex["missing"]
    assert not any(".;" in line for line in codex["missing"]), "each sentence of the to-do ends once"
    assert _scope(gemini, "project")["trust"]["state"] == "trusted"
    assert _scope(copilot, "project")["trust"]["state"] == "trusted"
    assert _scope(copilot, "user")["installed"] == [] and _scope(gemini, "user")["installed"] == []
    # no PreCompact: Codex takes no answer there and compacts between requests, so no handler acts there
    assert _scope(codex, "user")["installed"] == ["UserPromptSubmit", "SessionStart", "SubagentStart", "PreToolUse",
                                                   "PostToolUse", "Stop", "SessionEnd"]
    assert "preCompact" in _scope(copilot, "project")["installed"], "its summary comes beside the turn"
    # which mechanism each feature uses, from the agent's answers
    cache = {n: next(f for f in a["features"] if f["name"] == "content cache") for n, a in found.items()}
    assert cache["codex"]["mechanism"] == "decision=block, reason"
    assert cache["copilot"]["mechanism"] == "modifiedResult.textResultForLlm"
    assert cache["gemini"]["mechanism"] == "hookSpecificOutput.tailToolCallRequest.args.command"
    assert cache["claude-code"]["mechanism"] == "hookSpecificOutput.updatedToolOutput.stdout"
    assert cache["claude-code"]["note"] is None
    decisions = {n: next(f for f in a["features"] if f["name"] == "tool decisions") for n, a in found.items()}
    assert decisions["codex"]["mechanism"] == ("hookSpecificOutput.permissionDecision, "
                                               "hookSpecificOutput.permissionDecisionReason, only allow, deny")
    assert decisions["gemini"]["mechanism"] == "decision, reason, only deny" and decisions["gemini"]["note"] is None
    assert decisions["copilot"]["mechanism"] == "permissionDecision, permissionDecisionReason, only allow, deny"
    # rules for one request: Gemini's, at its BeforeModel; listed for no agent without it (none needs it)
    one = {n: [f for f in a["features"] if f["name"] == "rules for one request"] for n, a in found.items()}
    assert [(f["mechanism"], f["events"], f["note"]) for f in one["gemini"]] == [
        ("hookSpecificOutput.llm_request.messages", ["before_model"], None)]
    assert one["claude-code"] == one["codex"] == one["copilot"] == []
    assert not any("rules for one request" in line for a in found.values() for line in a["missing"])


def test_doctor_text_names_what_is_missing_and_escapes_what_an_agent_printed(hk):
    env = _agents_on_path(hk, {"codex": "codex-cli 0.169.0 \x1b]52;c;aGk=\x07\x1b[2J"})
    run = hk.engine("doctor", env=env)
    assert run.returncode == 0, str(run)
    assert "\x1b" not in run.stdout + run.stderr and "\x07" not in run.stdout
    assert "Codex CLI (command " in run.stdout and "version: 0.169.0" in run.stdout
    assert "no hooks installed: engine install --agent codex" in run.stdout
    assert "Gemini CLI" not in run.stdout, "an agent not found is not reported"
    hk.engine("install", "--agent", "claude-code", "--user", env=env)
    run = hk.engine("doctor", "--agent", "claude-code", env=env)
    assert "version: ? (its command is not on the PATH)" in run.stdout, run.stdout
    assert "hooks" in run.stdout and "trust: not needed" in run.stdout


def test_an_old_claude_code_is_told_its_output_replacement_is_missing_or_broken(hk):
    for printed, note in (("2.1.100 (Claude Code)", "needs version 2.1.121 or later"),
                          ("2.1.170 (Claude Code)", "broken in this version: claude-code#68951")):
        found = _doctor(hk, _agents_on_path(hk, {"claude": printed}))
        (cache,) = [f for f in found["claude-code"]["features"] if f["name"] == "content cache"]
        assert cache["note"].startswith(note), cache


# Measured with Codex CLI 0.169.0: the currentHash its app server (hooks/list)
# reported for these hooks of a hooks.json (tests/support/codex.py list_hooks).
# SessionEnd's is that of its identity with timeout 3 (timeoutSec 3), not 10.
_ENDING = "/tmp/tv/bin/engine-hook --agent codex --profile /tmp/engine-hook-tests-pp2a32uy/profiles/p-6c484cd49d772136.yaml"
CODEX_HASHES = [
    ("SessionStart", {"hooks": [{"type": "command", "command": "/x/engine-hook --agent codex", "timeout": 10}]},
     "sha256:8bad383d10e80f8ba4a0cc7a23b99abb4fca7d1cf0272bd8cf4ae53832dfd803"),
    ("PostToolUse", {"matcher": "*", "hooks": [{"type": "command", "command": "/x/engine-hook --agent codex",
                                                "timeout": 10}]},
     "sha256:68f7c44ae10bbbb3abd5819d2fce51392ed7a62333b1402e8e0c6efd745380e2"),
    ("SessionEnd", {"hooks": [{"type": "command", "command": _ENDING, "timeout": 10}]},
     "sha256:543c26fdd5675f70f441c8439bce58dce94b5701f7513934d169290a671fbb2b"),
]


def _codex_hash(event, group):
    """hook_hash as the trust check calls it: the event's label, and the
    timeout Codex gives the event's hook (timeout_caps)."""
    from engine.agents.table import get
    from engine.hooks.agenttrust import hook_hash

    codex = get("codex").data
    spec = codex["install"]["trust_check"]
    return hook_hash(spec, spec["labels"][event], group, group["hooks"][0], "matcher", codex["timeout_caps"].get(event))


@pytest.mark.parametrize("event,group,expected", CODEX_HASHES)
def test_the_hash_of_a_hook_is_the_one_codex_computes(event, group, expected):
    assert _codex_hash(event, group) == expected


def test_codex_trust_is_told_per_hook_from_its_config(hk):
    from engine.agents.table import get

    env = _agents_on_path(hk, {"codex": "codex-cli 0.169.0"})
    assert hk.engine("install", "--agent", "codex", "--user", env=env).returncode == 0
    hooks_file = hk.home / ".codex" / "hooks.json"
    data = json.loads(hooks_file.read_text())
    spec = get("codex").data["install"]["trust_check"]

    def state(lines, bom=""):
        _write(hk.home / ".codex" / "config.toml", "")
        (hk.home / ".codex" / "config.toml").write_bytes((bom + 'model = "x"\n' + "".join(lines)).encode("utf-8"))
        return _scope(_doctor(hk, env)["codex"], "user")["trust"]

    entries = []
    for event, groups in data["hooks"].items():
        label = spec["labels"][event]
        value = _codex_hash(event, groups[0])
        entries.append(f'\n[hooks.state."{hooks_file}:{label}:0:0"]\ntrusted_hash = "{value}"\n')
    assert state(entries)["state"] == "trusted"
    assert state(entries, bom="\ufeff")["state"] == "trusted", "Codex reads a config.toml opening with a BOM"
    assert state(entries[1:])["state"] == "partly"
    stale = entries[0].rsplit('"sha256:', 1)[0] + '"sha256:' + "0" * 64 + '"\n'
    assert state([stale] + entries[1:])["state"] == "modified"
    assert state(["[hooks\n"])["state"] == "unknown"  # not TOML: said, never raised


def test_codex_trust_through_a_linked_codex_home_names_the_real_folder(hk):
    """Codex canonicalizes CODEX_HOME: with it a link (a dotfiles folder),
    its /hooks trust keys name the real hooks.json (measured, hooks/list),
    and doctor reads them so."""
    from engine.agents.table import get

    real = hk.home / "dotfiles" / "codex"
    real.mkdir(parents=True)
    (hk.home / "codex-link").symlink_to(real)
    env = {**_agents_on_path(hk, {"codex": "codex-cli 0.169.0"}), "CODEX_HOME": str(hk.home / "codex-link")}
    assert hk.engine("install", "--agent", "codex", "--user", env=env).returncode == 0
    data = json.loads((real / "hooks.json").read_text())
    spec = get("codex").data["install"]["trust_check"]
    _write(real / "config.toml", "".join(
        f'[hooks.state."{real / "hooks.json"}:{spec["labels"][event]}:0:0"]\n'
        f'trusted_hash = "{_codex_hash(event, groups[0])}"\n' for event, groups in data["hooks"].items()))
    assert _scope(_doctor(hk, env)["codex"], "user")["trust"]["state"] == "trusted"


def test_folder_trust_rules_of_gemini_and_copilot(hk, monkeypatch):
    from engine.agents.table import get
    from engine.hooks.agenttrust import check

    monkeypatch.setenv("HOME", str(hk.home))
    for var in NO_AGENT_VARS:
        monkeypatch.delenv(var, raising=False)
    project = hk.project / "app"
    project.mkdir()
    gemini = hk.home / ".gemini" / "trustedFolders.json"
    for rules, want in (({str(hk.project): "TRUST_FOLDER"}, "trusted"),
                        ({str(project / "src"): "TRUST_PARENT"}, "trusted"),
                        ({str(hk.project): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"}, "untrusted"),
                        ({str(project) + "-other": "TRUST_FOLDER"}, "untrusted"),
                        # Gemini 0.61.0 (isPathTrusted): the longest rule path wins, a TRUST_PARENT's own
                        ({str(project): "DO_NOT_TRUST", str(project) + "/src": "TRUST_PARENT"}, "trusted")):
        _write(gemini, "// comment\n" + json.dumps(rules))
        assert check(get("gemini"), "project", str(project), "x", {})["state"] == want, rules
    assert check(get("gemini"), "user", str(project), "x", {})["state"] == "not needed"
    copilot = hk.home / ".copilot" / "config.json"
    (link := hk.root / "app-link").symlink_to(project)
    # Copilot 1.0.102 (measured, copilot.yaml covers): a listed folder trusts the folders below it; links followed
    for config, want in (({"trustedFolders": [str(project)]}, "trusted"), ({"trusted_folders": [str(hk.project)]},
                                                                           "trusted"), ({}, "untrusted"),
                         ({"trusted_folders": [str(link)]}, "trusted"), ({"trusted_folders": [str(project / "src")]},
                                                                        "untrusted"),
                         ({"trusted_folders": [str(project) + "-other"]}, "untrusted")):
        _write(copilot, json.dumps(config))
        assert check(get("copilot"), "project", str(project), "x", {})["state"] == want, config


def test_firing_is_read_from_the_engines_records_of_the_agents_sessions(hk, monkeypatch):
    from engine.agents.table import get
    from engine.core import records
    from engine.hooks import firing

    monkeypatch.setenv("HOME", str(hk.home))
    monkeypatch.setenv("ENGINE_STATE_DIR", str(hk.state))
    for var in NO_AGENT_VARS:
        monkeypatch.delenv(var, raising=False)
    ids = [str(uuid.uuid4()) for _ in range(3)]
    files = {
        "claude-code": hk.home / ".claude" / "projects" / "-p" / f"{ids[0]}.jsonl",
        "codex": hk.home / ".codex" / "sessions" / "2026" / "11" / "26" / f"rollout-2026-11-26T08-40-28-{ids[1]}.jsonl",
        "copilot": hk.home / ".copilot" / "session-state" / ids[2] / "events.jsonl",
        "gemini": hk.home / ".gemini" / "tmp" / "p" / "chats" / "session-2026-11-26T08-40-abcd1234.jsonl",
    }
    gemini_id = "abcd1234-0000-4000-8000-000000000000"
    for name, path in files.items():
        _write(path, json.dumps({"sessionId": gemini_id, "projectHash": "ab12", "kind": "main"}) + "\n"
               if name == "gemini" else "{}\n")
        sid = firing.session_id(get(name), str(path))
        assert sid == {"claude-code": ids[0], "codex": ids[1], "copilot": ids[2], "gemini": gemini_id}[name]
    old = files["codex"].with_name(f"rollout-2026-11-25T08-00-00-{uuid.uuid4()}.jsonl")
    _write(old, "{}\n")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    assert records.append(ids[1], "SessionStart", [records.injection("effort_guidance", 120, records.settings())])
    report = firing.report(get("codex"), 5, 65536)
    assert (report["sessions"], report["answered"]) == (2, 1) and report["last"]
    assert firing.report(get("codex"), 1, 65536)["answered"] == 1, "the newest session first"
    assert firing.report(get("copilot"), 5, 65536)["answered"] == 0
    # a Gemini session resumed in a later minute has two chat files: one session
    # (tests/support/AGENTS-MEASURED.md)
    assert records.append(gemini_id, "SessionStart", [records.injection("effort_guidance", 120, records.settings())])
    stray = files["gemini"].with_name("session-2026-11-26T08-41-abcd1234.jsonl")
    _write(stray, json.dumps({"sessionId": gemini_id, "projectHash": "ab12", "kind": "main"}) + "\n")
    gemini = firing.report(get("gemini"), 5, 65536)
    assert (gemini["sessions"], gemini["answered"]) == (1, 1), gemini


def test_asking_an_agent_its_version_is_bounded(hk):
    from engine.agents.table import get
    from engine.hooks.versioncmd import ask

    bindir = hk.root / "slow"
    bindir.mkdir()
    cases = {"sleeps": "sleep 30", "floods": "yes 1.2.3", "fails": "echo nope; exit 3",
             "spawns": "(sleep 30 &) ; echo 4.5.6",
             "warns": "echo 'WARNING: helper 9.9 not made' >&2; sleep 0.2; echo 'codex-cli 0.169.0'",
             "on_stderr": "echo 'tool 7.8.9' >&2"}
    for name, body in cases.items():
        (bindir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bindir / name).chmod(0o755)
    agent, pattern = get("codex"), "[0-9]+(?:\\.[0-9]+)+"
    start = time.monotonic()
    slow = ask(str(bindir / "sleeps"), agent, 300, 4096, pattern)
    assert time.monotonic() - start < 5 and slow["value"] is None and "took more than 300 ms" in slow["error"]
    flood = ask(str(bindir / "floods"), agent, 2000, 4096, pattern)
    assert flood["value"] == "1.2.3" and flood["error"] is None
    assert "no version" in ask(str(bindir / "fails"), agent, 2000, 4096, pattern)["error"]
    assert ask(str(bindir / "spawns"), agent, 500, 4096, pattern)["value"] == "4.5.6", "a child left behind holds no one up"
    assert "cannot run" in ask(str(bindir / "absent"), agent, 2000, 4096, pattern)["error"]
    # a warning printed first on the error output does not hide the version on the standard output
    assert ask(str(bindir / "warns"), agent, 2000, 4096, pattern) == {
        "value": "0.169.0", "text": "codex-cli 0.169.0", "error": None}
    assert ask(str(bindir / "on_stderr"), agent, 2000, 4096, pattern)["value"] == "7.8.9"


def test_a_mechanism_names_the_fields_carrying_the_engines_words_not_the_agents_kept_values():
    from engine.hooks.doctor import mechanism

    spec = {"template": {"out": {"body": "{text}", "flag": "{original.flag}", "kind": "{event}", "n": 0},
                         "verdict": "{decision}", "mode": "replace"}}
    assert mechanism(spec) == "out.body, verdict, mode=replace"
    assert mechanism({"plain": True, "template": {"x": "{text}"}}) == "plain text on the hook's output"


def test_a_trust_record_that_is_a_fifo_is_unknown_not_waited_on(hk):
    """Codex's config.toml as a FIFO: its size says 0, and doctor opened it
    and waited for a writer that never came."""
    env = _agents_on_path(hk, {"codex": VERSIONS["codex"]})
    assert hk.engine("install", "--agent", "codex", "--user", env=env).returncode == 0
    os.mkfifo(hk.home / ".codex" / "config.toml")
    run = hk.engine("doctor", "--json", "--agent", "codex", env=env, timeout=60)
    assert run.returncode == 0, str(run)
    trust = _scope(json.loads(run.stdout)["agents"][0], "user")["trust"]
    assert trust["state"] == "unknown" and "not a regular file" in trust["why"], trust


def test_codex_project_trust_covers_its_repository_as_codex_reads_it(tmp_path):
    """Codex 0.169.0 (measured, hooks/list, offline): a trusted git root
    trusts every folder below it in the repository; a trusted folder above
    the root does not count, nor one trusted through a link's path (the
    working folder is taken by its real path).  Doctor looked up the exact
    folder only, so a session in a subfolder of a trusted repository was
    reported untrusted."""
    from engine.agents.table import get
    from engine.hooks.agenttrust import _project_trusted

    pt = get("codex").data["install"]["trust_check"]["project_trust"]
    outer = tmp_path / "work"
    repo = outer / "repo"
    deep = repo / "sub" / "deep"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    (tmp_path / "link").symlink_to(repo)

    def trusted(names, folder):
        return _project_trusted({"projects": {str(n): {"trust_level": "trusted"} for n in names}}, pt, str(folder))

    assert trusted([repo], deep) and trusted([repo], repo) and trusted([repo / "sub"], deep)
    assert trusted([repo], tmp_path / "link" / "sub"), "the working folder by its real path"
    assert not trusted([outer], deep), "above the repository's root"
    assert not trusted([tmp_path / "link"], deep), "a link's path is not the folder's"
    assert not trusted([repo / "sub" / "deep"], repo / "sub"), "a folder below does not trust the one above"
    plain = tmp_path / "plain" / "child"
    plain.mkdir(parents=True)
    assert not trusted([tmp_path / "plain"], plain), "no repository: the folder itself only"


def test_the_commands_whose_failing_output_claude_code_cuts_and_the_rules_let_the_cache_keep_are_said(hk):
    """Claude Code cuts a failing command's large output before its hook
    (failed_cut_above_bytes of its YAML): only a command its permission
    rules prove runs without asking goes through the engine's cache.  The
    doctor says which of the listed commands do and which do not; nothing
    for an agent that takes no such rewrite (Codex: no permission rules it
    can read)."""
    env = _agents_on_path(hk)
    _write(hk.home / ".claude" / "settings.json", json.dumps({"permissions": {"allow": ["Bash(make:*)", "Bash(pytest:*)"]}}))
    found = _doctor(hk, env)
    claude = found["claude-code"]
    assert claude["wrapped"]["allowed"] == ["pytest", "make"] and "npm test" in claude["wrapped"]["not_allowed"]
    (line,) = [m for m in claude["missing"] if "cuts a failing command's large output" in m]
    assert "cuts a failing command's large output" in line and "let only pytest, make of the commands" in line
    assert "not find," in line and line.endswith("(a rule such as Bash(cargo test:*))")
    assert found["codex"]["wrapped"] is None
    _write(hk.home / ".claude" / "settings.json", json.dumps({"permissions": {"allow": ["Bash"]}}))
    claude = _doctor(hk, env)["claude-code"]
    assert claude["wrapped"]["not_allowed"] == [] and not [m for m in claude["missing"] if "cuts a failing" in m]


def test_the_engines_hooks_copied_from_another_agents_settings_are_said_to_do_nothing(hk):
    """`gemini hooks migrate --from-claude` copies the engine's Claude Code
    hooks into the project's .gemini/settings.json under Gemini's event
    names, their commands as they were (measured with Gemini CLI 0.61.0):
    they name Claude Code, so the engine stays out of Gemini's runs of them.
    The doctor counts them as no Gemini hooks and says what to do."""
    env = _agents_on_path(hk, {"gemini": VERSIONS["gemini"]})
    assert hk.engine("install", "--project", env=env).returncode == 0
    claude = json.loads((hk.project / ".claude" / "settings.json").read_text())
    command = claude["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    migrated = {event: [{"hooks": [{"command": command, "type": "command", "timeout": 10}]}]
                for event in ("BeforeAgent", "SessionStart", "AfterTool", "PostToolUseFailure")}
    _write(hk.project / ".gemini" / "settings.json", json.dumps({"hooks": migrated}))
    project = _scope(_doctor(hk, env, "--agent", "gemini")["gemini"], "project")
    assert (project["installed"], project["named_for"]) == ([], ["claude-code"]), project
    run = hk.engine("doctor", "--agent", "gemini", env=env)
    assert ("project hooks name claude-code, not gemini (copied from that agent's settings): the engine does "
            "nothing there; engine install --agent gemini --project puts this agent's own in their place") in run.stdout
    assert "no hooks installed: engine install --agent gemini" in run.stdout


@pytest.mark.parametrize("answered,said", [
    (0, "no hooks installed: engine install --agent codex --user (or --project)"),
    (2, "no hooks of engine install, yet the engine answered in 2 of the last 3 session(s): from a plugin or an "
        "extension (then engine install as well would run every event twice), or taken out since (then engine "
        "install --agent codex --user (or --project))"),
])
def test_an_agent_whose_hooks_come_from_a_plugin_is_not_told_to_install_them_again(answered, said):
    """No hooks in the agent's settings: where the engine still answered in
    its recent sessions (a plugin, an extension), an `engine install` as well
    would run every event twice, and the doctor says so."""
    from engine.agents.table import get
    from engine.hooks.doctor import missing

    report = {"command": "codex", "version": {"value": "0.169.0", "error": None}, "hooks": [], "features": [],
              "firing": {"sessions": 3, "answered": answered}, "wrapped": None, "project_variables": []}
    assert missing(get("codex"), report) == [said]


# Where each agent recorded the engine's plugin as on, measured: `claude plugin
# install --scope user` (2.1.330), `copilot plugin install` (1.0.102), `codex
# plugin add` (0.169.0), `gemini extensions link` (0.61.0).
PLUGIN_RECORDS = {
    "claude-code": ("settings.json", '{"enabledPlugins": {"rules-engine@rules-engine": true}}'),
    "copilot": ("settings.json", '{"extraKnownMarketplaces": {}, "enabledPlugins": {"rules-engine@rules-engine": true}}'),
    "codex": ("config.toml", '[marketplaces.rules-engine]\nsource_type = "local"\n\n'
                             '[plugins."rules-engine@rules-engine"]\nenabled = true\n'),
    "gemini": ("extensions/rules-engine/.gemini-extension-install.json", '{"source": "/x", "type": "link"}'),
}


@pytest.mark.parametrize("agent", sorted(PLUGIN_RECORDS))
def test_the_plugin_is_seen_and_with_engine_install_as_well_said_to_run_every_event_twice(hk, agent):
    """With the engine's plugin (or extension) on, the doctor asks for no
    `engine install`; with engine install's hooks as well, it says that every
    event runs twice and how to keep one."""
    env = _agents_on_path(hk, {})
    off = _doctor(hk, env, "--agent", agent)[agent]
    assert off["plugin"]["on"] is False
    assert any(line.startswith("no hooks installed") for line in off["missing"]), off["missing"]
    name, text = PLUGIN_RECORDS[agent]
    record = Path(off["plugin"]["file"]) if agent != "gemini" else Path(off["plugin"]["file"]) / Path(name).name
    assert record.as_posix().endswith(name), (record, name)  # where the agent keeps it, under its home
    _write(record, text)
    on = _doctor(hk, env, "--agent", agent)[agent]
    assert on["plugin"]["on"] is True and not [line for line in on["missing"] if "hooks" in line], on["missing"]
    assert hk.engine("install", "--agent", agent, "--user", env=env).returncode == 0
    both = _doctor(hk, env, "--agent", agent)[agent]
    assert [line for line in both["missing"] if "twice" in line] == [
        f"the engine's plugin is on ({on['plugin']['file']}) and engine install's hooks are in "
        f"{_scope(both, 'user')['file']}: every event runs twice; keep one (engine uninstall --agent {agent} "
        "--user, or turn the plugin off)"], both["missing"]
    run = hk.engine("doctor", "--agent", agent, env=env)
    assert "  plugin: on (" in run.stdout, run.stdout


def test_a_claude_code_plugin_installed_for_one_project_is_on_there_only(hk):
    """`claude plugin install NAME@MARKET --scope project` (2.1.330, measured)
    records the install in the user's plugins/installed_plugins.json with the
    project's folder (and enabledPlugins in the project's own settings, which
    the doctor does not read: a repository writes those)."""
    env = _agents_on_path(hk, {})
    record = Path(_doctor(hk, env, "--agent", "claude-code")["claude-code"]["plugin"]["file"]).parent
    installs = lambda folder: json.dumps({"version": 2, "plugins": {"rules-engine@rules-engine": [
        {"scope": "project", "installPath": "/x/cache/rules-engine/rules-engine/0.1.0", "version": "0.1.0",
         "projectPath": str(folder)}]}})
    _write(record / "plugins" / "installed_plugins.json", installs(hk.root / "another-project"))
    assert _doctor(hk, env, "--agent", "claude-code")["claude-code"]["plugin"]["on"] is False
    _write(record / "plugins" / "installed_plugins.json", installs(hk.project))
    on = _doctor(hk, env, "--agent", "claude-code")["claude-code"]["plugin"]
    assert on == {"file": str(record / "plugins" / "installed_plugins.json"), "on": True, "why": None}


CLAUDE_MONITORS = ["post_tool context_monitor_tools", "tool_failure context_monitor_failures", "stop context_monitor"]


def _unreachable(hk, agent, *args):
    env = _agents_on_path(hk, {})
    found = _doctor(hk, env, "--agent", agent, *args)[agent]
    run = hk.engine("doctor", "--agent", agent, *args, env=env)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run
    return found["unreachable_thresholds"], found["notes"], run.stdout


ALL_THREE = ["post_tool context_monitor_tools", "stop context_audit", "stop context_monitor"]


@pytest.mark.parametrize("setting, never, monitors", [
    (None, [70, 80, 90], ALL_THREE),  # its default, 0.5 of the window
    (0, [70, 80, 90], ALL_THREE),  # Gemini takes a 0 as unset
    (0.75, [80, 90], ["post_tool context_monitor_tools", "stop context_monitor"]),  # the audit's 70 fires
    (0.95, [], []),
])
def test_doctor_says_which_context_monitor_thresholds_gemini_never_lets_fire(hk, setting, never, monitors):
    """Gemini CLI 0.61.0 compresses at model.compressionThreshold of its
    window, 0.5 by default: none of the monitor's 70/80/90 ever fires, and
    before, engine doctor said nothing of it.  The user's own settings file
    moves the point, and the doctor reads it."""
    if setting is not None:
        _write(hk.home / ".gemini" / "settings.json", json.dumps({"model": {"compressionThreshold": setting}}))
    found, notes, text = _unreachable(hk, "gemini")
    if not never:
        assert found is None and notes == [] and "  notes:" not in text, (found, text)
        return
    assert sorted({t for m in found["monitors"] for t in m["thresholds"]}) == never, found
    assert [f"{m['event']} {m['name']}" for m in found["monitors"]] == monitors, found
    pct = int((setting or 0.5) * 100)
    why = (f"model.compressionThreshold {setting} in {hk.home / '.gemini' / 'settings.json'}" if setting else
           "its default; model.compressionThreshold not set")
    [line] = notes
    assert line == (f"context monitor threshold(s) {', '.join(f'{t}%' for t in never)} can never fire: Gemini CLI "
                    f"compacts its context at {int(1048576 * (setting or 0.5)):,} of 1,048,576 tokens ({pct}%, {why}); "
                    f"lower them below {pct}% in your profile (`thresholds` of "
                    f"{', '.join('hooks.events.' + m for m in monitors)}), or raise model.compressionThreshold in "
                    "Gemini CLI's settings"), line
    assert f"  notes:\n    - {line}\n" in text, text


@pytest.mark.parametrize("override, at, never", [
    (None, 167000, [90]),  # 200,000 less 20,000 of output less 13,000
    ("70", 125999, [70, 80, 90]),  # 70% of 180,000, floored as its JavaScript does (0.7 * 180000): earlier
    ("95", 167000, [90]),  # later than its own: not taken
])
def test_doctor_says_which_context_monitor_thresholds_claude_code_never_lets_fire(hk, override, at, never):
    """Claude Code 2.1.332 auto-compacts at 167,000 of 200,000 tokens
    (83.5%): the monitor's 90% never fires.  CLAUDE_AUTOCOMPACT_PCT_OVERRIDE
    in a settings file's env only makes it earlier."""
    if override is not None:
        _write(hk.home / ".claude" / "settings.json", json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": override}}))
    found, [line], text = _unreachable(hk, "claude-code")
    assert (found["tokens"], found["value"]) == (at, override if at != 167000 else None), found
    monitors = CLAUDE_MONITORS + (["stop context_audit"] if 70 in never else [])
    assert sorted(f"{m['event']} {m['name']}" for m in found["monitors"]) == sorted(monitors), found
    assert sorted({t for m in found["monitors"] for t in m["thresholds"]}) == never, found
    assert line.startswith(f"context monitor threshold(s) {', '.join(f'{t}%' for t in never)} can never fire: "
                           f"Claude Code compacts its context at {at:,} of 200,000 tokens ({round(at / 2000, 1):g}%, "), line
    assert line.endswith("(env.CLAUDE_AUTOCOMPACT_PCT_OVERRIDE can only make it compact earlier)"), line
    assert line in text


def test_doctor_says_nothing_of_thresholds_below_where_the_agent_compacts(hk):
    """A profile whose monitors warn below 50% fires for every agent: no note;
    Codex (94.7%) needs none with the built-in thresholds either."""
    low = "\n".join(f"    {event}:" + "".join(f"\n      - {{name: {name}, thresholds: [30, 45]}}" for name in names)
                    for event, names in (("post_tool", ["context_monitor_tools"]), ("tool_failure",
                                         ["context_monitor_failures"]), ("stop", ["context_audit", "context_monitor"])))
    profile = _write(hk.root / "low.yaml", f"kind: profile\nname: low\nextends: default\nhooks:\n  events:\n{low}\n")
    for agent in ("gemini", "claude-code"):
        assert _unreachable(hk, agent, "--profile", str(profile))[:2] == (None, []), agent
    assert _unreachable(hk, "codex")[:2] == (None, [])


def test_doctor_calls_no_threshold_unreachable_for_an_agent_compacting_beside_the_turn(hk):
    """Copilot CLI starts a compaction at 80% of its prompt limit (measured,
    copilot.yaml), but compacts beside the turn: its context grows past
    that until the summary comes, so 80 and 90 may still fire.  Its point
    is declared; doctor says nothing of its thresholds."""
    from engine.agents.table import get

    copilot = get("copilot")
    assert copilot.data["context"]["compaction"] == {"fraction": 0.8}
    assert copilot.data["transcript"]["compacts_in_background"] is True
    assert _unreachable(hk, "copilot")[:2] == (None, [])


def test_a_profile_named_to_doctor_that_does_not_load_is_the_users_error_and_the_active_ones_is_said(hk):
    """`engine doctor --profile FILE` whose FILE is missing or wrong checked
    the built-in profile's events instead and exited 0, saying nothing; so
    did an active profile (ENGINE_PROFILE) that does not load.  A profile
    named is now the user's error, said at its FILE:LINE:COL, exit 1; the
    active one gives way to the built-in's, and the report says why."""
    env = _agents_on_path(hk)
    bad = _write(hk.project / "bad.yaml", "kind: profile\nname: bad\nextends: default\nbogus: 1\n")
    for ref, says in ((str(hk.project / "nosuch.yaml"), "nosuch.yaml"), (str(bad), "bad.yaml:4:1: unknown key 'bogus'")):
        run = hk.engine("doctor", "--profile", ref, env=env)
        assert run.returncode == 1 and says in run.stderr and run.stdout == "", str(run)
        assert "Traceback" not in run.stderr
    run = hk.engine("doctor", "--json", env={**env, "ENGINE_PROFILE": str(bad)})
    assert run.returncode == 0, str(run)
    report = json.loads(run.stdout)
    assert "unknown key 'bogus'" in report["profile_error"] and report["agents"], report["profile_error"]
    text = hk.engine("doctor", env={**env, "ENGINE_PROFILE": str(bad)}).stdout
    assert "profile: the active profile does not load" in text and "bogus" in text, text
    assert json.loads(hk.engine("doctor", "--json", env=env).stdout)["profile_error"] is None
