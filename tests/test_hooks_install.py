"""`engine install` / `engine uninstall`: entries in .claude/settings.json
(project) or ~/.claude/settings.json (user), merged with what is there, a
backup first, idempotent, removable exactly, and a command that works."""

import json
import os
import shlex
import subprocess
import sys

import pytest

from engine.ccm.selfcmd import interpreter_options
from hook_fixtures import parse_problems, profile_text
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

BUILTIN_EVENTS = {"UserPromptSubmit", "SessionStart", "SubagentStart", "SessionEnd", "PreToolUse", "PostToolUse",
                  "PostToolUseFailure", "Stop", "PreCompact"}

EXISTING = {
    "model": "opus",
    "permissions": {"allow": ["Bash(ls:*)", "Read(**)"], "deny": []},
    "env": {"FOO": "bar"},
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo other-prompt-hook"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard --strict", "timeout": 5}]}],
    },
}


def _settings(hk, scope="project"):
    return (hk.project if scope == "project" else hk.home) / ".claude" / "settings.json"


def _backups(path):
    return sorted(p for p in path.parent.iterdir() if p.name != path.name and p.name.startswith(path.name))


def _ours(data):
    """(event, matcher, command, timeout) of every entry that runs the engine."""
    out = []
    for event, groups in data.get("hooks", {}).items():
        for g in groups:
            for h in g.get("hooks", []):
                if "engine" in h.get("command", "") and ("engine-hook" in h.get("command", "") or " hook" in h.get("command", "")):
                    out.append((event, g.get("matcher"), h["command"], h.get("timeout")))
    return out


def _install(hk, *args, cwd=None):
    run = hk.engine("install", *args, cwd=cwd)
    assert run.returncode == 0, str(run)
    assert "Traceback" not in run.stderr
    return run


def test_install_project_into_a_fresh_project(hk):
    _install(hk, "--project")
    path = _settings(hk)
    data = json.loads(path.read_text())
    ours = _ours(data)
    assert {e for e, *_ in ours} == BUILTIN_EVENTS
    assert len(ours) == len(BUILTIN_EVENTS), "one entry per event"
    assert _backups(path) == [], "no file existed: nothing to back up"
    for event, matcher, cmd, timeout in ours:
        argv = shlex.split(cmd)
        assert os.path.isabs(argv[0]) and os.access(argv[0], os.X_OK), cmd
        # the interpreter, isolated, on the `engine-hook` script beside it (here:
        # the test's own install ships it), else on `engine hook`, else with -m
        base = [sys.executable, *interpreter_options()]
        assert argv[:len(base)] == base and os.path.basename(argv[len(base)]) == "engine-hook", cmd
        assert argv[len(base) + 1:] == ["--agent", "claude-code"], cmd
        assert isinstance(timeout, int) and timeout > 0
    assert not (hk.home / ".claude" / "settings.json").exists(), "--project does not touch the user settings"


def test_entries_written_by_earlier_versions_are_still_ours(hk):
    """`engine hook` and `python -m engine.cli hook` entries (written before
    engine-hook existed) are recognised, so uninstall removes them."""
    from engine.agents.table import get
    from engine.hooks.entries import is_ours

    claude = get("claude-code")
    for cmd in ("/venv/bin/engine hook", "/venv/bin/python3 -m engine.cli hook", "/venv/bin/engine-hook",
                "/venv/bin/engine-hook --profile /p/x.yaml", "/venv/bin/engine-hook --agent claude-code",
                "/venv/bin/engine hook --agent codex --profile /p/x.yaml"):
        assert is_ours(claude, {"type": "command", "command": cmd, "timeout": 10}), cmd
    for cmd in ("/venv/bin/engine-hook extra", "engine-hook", "/venv/bin/engine hook --verbose",
                "/venv/bin/engine-hook --agent", "/venv/bin/engine-hook --agent a --agent b",
                "/venv/bin/engine-hook --agent 'claude-code'x"):
        assert not is_ours(claude, {"type": "command", "command": cmd, "timeout": 10}), cmd
    assert not is_ours(claude, {"command": "/venv/bin/engine-hook", "timeout": 10}), "no type: not as install writes"


def test_install_merges_backs_up_and_is_idempotent(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    original = json.dumps(EXISTING, indent=4) + "\n"
    path.write_text(original)
    _install(hk, "--project")
    data = json.loads(path.read_text())
    for key in ("model", "permissions", "env"):
        assert data[key] == EXISTING[key]
    assert data["hooks"]["UserPromptSubmit"][0] == EXISTING["hooks"]["UserPromptSubmit"][0]
    n = len(EXISTING["hooks"]["PreToolUse"])  # the built-in profile has PreToolUse handlers too (issue 7): ours follow
    assert data["hooks"]["PreToolUse"][:n] == EXISTING["hooks"]["PreToolUse"], "unrelated hooks stay intact"
    assert {e for e, *_ in _ours(data)} == BUILTIN_EVENTS
    backups = _backups(path)
    assert len(backups) == 1 and backups[0].read_text() == original, "backup of the file as it was"

    after_first = path.read_bytes()
    run = _install(hk, "--project")
    assert path.read_bytes() == after_first, "a second install changes nothing"
    assert _backups(path) == backups, "and writes no second backup"
    assert "nothing changed" in run.stdout.lower() or "already" in run.stdout.lower()


def test_install_with_profile_path_writes_an_absolute_path_and_the_command_works(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    (hk.project / "profiles").mkdir()
    prof = hk.project / "profiles" / "mine.yaml"
    prof.write_text(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1}]}))
    _install(hk, "--project", "--profile", "profiles/mine.yaml")
    data = json.loads(_settings(hk).read_text())
    cmds = {cmd for _, _, cmd, _ in _ours(data)}
    assert len(cmds) == 1
    (cmd,) = cmds
    argv = shlex.split(cmd)
    assert "--profile" in argv
    given = argv[argv.index("--profile") + 1]
    assert os.path.isabs(given) and os.path.samefile(given, prof), cmd
    # The command works as the agent runs it: through a shell, from another
    # folder, without this test's PYTHONPATH or virtual environment.
    env = {k: v for k, v in hk.env().items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"
    event = hk.prompt(1)
    proc = subprocess.run(cmd, shell=True, input=json.dumps(event).encode(), capture_output=True,
                          cwd=str(hk.home), env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    out = json.loads(proc.stdout)
    assert "ALPHA" in out["hookSpecificOutput"]["additionalContext"]


def test_install_with_a_builtin_profile_name(hk):
    _install(hk, "--project", "--profile", "default")
    (cmd,) = {cmd for _, _, cmd, _ in _ours(json.loads(_settings(hk).read_text()))}
    argv = shlex.split(cmd)
    assert argv[argv.index("--profile") + 1] == "default"


def test_install_replaces_our_previous_entry_instead_of_adding_one(hk):
    prof = hk.project / "p.yaml"
    prof.write_text(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 3}]}))
    _install(hk, "--project")
    _install(hk, "--project", "--profile", str(prof))
    ours = _ours(json.loads(_settings(hk).read_text()))
    assert len(ours) == len(BUILTIN_EVENTS), ours
    assert all("--profile" in cmd for _, _, cmd, _ in ours)


def test_install_covers_every_event_the_profile_declares(hk):
    prof = hk.project / "p.yaml"
    prof.write_text(profile_text({
        "PreToolUse": [{"name": "tool_rules", "kind": "file_refresh", "every_turns": 0, "level": "light",
                        "budget": {"chars": 2000}, "files": ["{project}/CLAUDE.md"],
                        "priority": {"key": "priority", "default": 5},
                        "template": "{% for r in items %}{{ r.text }}{% endfor %}",
                        "omitted_template": "{{ omitted|join(', ') }}"}],
        "SessionEnd": [{"name": "forget_session", "enabled": False},
                       {"name": "remember_last_failures", "enabled": False}],
    }))
    _install(hk, "--project", "--profile", str(prof))
    ours = _ours(json.loads(_settings(hk).read_text()))
    events = {e for e, *_ in ours}
    assert events == BUILTIN_EVENTS - {"SessionEnd"} | {"PreToolUse"}, events
    assert "SessionEnd" in BUILTIN_EVENTS
    matchers = {e: m for e, m, *_ in ours}
    assert matchers["PreToolUse"] not in (None, ""), "tool events need a matcher"


def test_install_user_uses_home(hk):
    _install(hk, "--user", cwd=hk.root)
    path = _settings(hk, "user")
    assert {e for e, *_ in _ours(json.loads(path.read_text()))} == BUILTIN_EVENTS
    assert not _settings(hk).exists()
    run = hk.engine("uninstall", "--user", cwd=hk.root)
    assert run.returncode == 0, str(run)
    assert not path.exists(), "install created the file and it held nothing else: uninstall removes it"


def test_uninstall_removes_exactly_our_entries(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(EXISTING, indent=2))
    _install(hk, "--project")
    run = hk.engine("uninstall", "--project")
    assert run.returncode == 0, str(run)
    assert json.loads(path.read_text()) == EXISTING, "everything else is back as it was"
    # a second uninstall changes nothing
    before, backups = path.read_bytes(), _backups(path)
    run = hk.engine("uninstall")
    assert run.returncode == 0, str(run)
    assert path.read_bytes() == before and _backups(path) == backups


def test_uninstall_keeps_other_hooks_sharing_a_group_with_ours(hk):
    path = _settings(hk)
    _install(hk, "--project")
    data = json.loads(path.read_text())
    data["hooks"]["SessionStart"][0]["hooks"].append({"type": "command", "command": "echo mine"})
    path.write_text(json.dumps(data))
    assert hk.engine("uninstall").returncode == 0
    after = json.loads(path.read_text())
    assert _ours(after) == []
    assert after["hooks"]["SessionStart"][0]["hooks"] == [{"type": "command", "command": "echo mine"}]


def test_malformed_settings_is_an_error_and_left_unchanged(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    text = '{\n  "model": "opus",\n  "hooks": {,\n}\n'
    path.write_text(text)
    for args in (("install", "--project"), ("uninstall", "--project")):
        run = hk.engine(*args)
        assert run.returncode == 1, str(run)
        assert "Traceback" not in run.stderr
        problems = parse_problems(run.stderr)
        assert problems, f"expected FILE:LINE:COL: message\n{run}"
        file, line, col, msg = problems[0]
        assert os.path.samefile(file if os.path.isabs(file) else hk.project / file, path)
        assert (line, col) == (3, 13), problems[0]
        assert path.read_text() == text
        assert _backups(path) == []


def test_settings_that_is_not_an_object_is_an_error(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text("[1, 2]\n")
    run = hk.engine("install", "--project")
    assert run.returncode == 1, str(run)
    assert str(path) in run.stderr or "settings.json" in run.stderr
    assert path.read_text() == "[1, 2]\n"


def test_install_through_a_symlinked_settings_file_keeps_the_link(hk):
    """~/.claude/settings.json is often a link into a dotfiles repository:
    the entries go into the file it points to, the link stays a link."""
    dotfiles = hk.root / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude-settings.json"
    target.write_text(json.dumps({"model": "opus"}, indent=2) + "\n")
    link = _settings(hk, "user")
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    _install(hk, "--user", cwd=hk.root)
    assert link.is_symlink(), "install replaced the symlink by a regular file"
    data = json.loads(target.read_text())
    assert data["model"] == "opus" and {e for e, *_ in _ours(data)} == BUILTIN_EVENTS


def test_uninstall_through_a_symlinked_settings_file_gives_it_back_byte_for_byte(hk):
    """The backups sit beside the file the link leads to: uninstall looked
    for them beside the link, found none, and rewrote the user's layout."""
    dotfiles = hk.root / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "claude[1].json"
    original = '{\n  "model": "opus",\n  "permissions": {"allow": ["Bash(ls)"]}\n}\n'
    target.write_text(original)
    link = _settings(hk, "user")
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    _install(hk, "--user", cwd=hk.root)
    assert hk.engine("uninstall", "--user", cwd=hk.root).returncode == 0
    assert link.is_symlink() and target.read_text() == original


# ------------------------------------------------ backups, layout, created files (issue 11)


def _keep_profile(hk, keep):
    prof = hk.root / f"keep{keep}.yaml"
    prof.write_text(f"kind: profile\nname: keep{keep}\nextends: default\nhooks:\n  install_backups_kept: {keep}\n")
    return prof


def test_backups_are_bounded_by_the_profile(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(EXISTING, indent=2))
    default_keep = 3  # pipelines/default.yaml: hooks.install_backups_kept
    for _ in range(2):  # four changes, four backups written
        _install(hk, "--project")
        assert hk.engine("uninstall", "--project").returncode == 0
    assert len(_backups(path)) == default_keep, _backups(path)
    prof = _keep_profile(hk, 1)
    _install(hk, "--project", "--profile", str(prof))
    assert len(_backups(path)) == 1, _backups(path)
    newest = _backups(path)[0]
    assert json.loads(newest.read_text()) == EXISTING, "the backup kept is the newest one"


def test_uninstall_removes_a_file_install_created_when_it_holds_nothing_else(hk):
    path = _settings(hk)
    _install(hk, "--project")
    assert path.exists()
    run = hk.engine("uninstall", "--project")
    assert run.returncode == 0, str(run)
    assert not path.exists(), path.read_text()
    assert not path.parent.exists(), "install created .claude/ for it, and it holds nothing else: gone too"


def test_uninstall_keeps_a_file_the_user_made_even_when_empty_after(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text("{}\n")
    _install(hk, "--project")
    run = hk.engine("uninstall", "--project")
    assert run.returncode == 0, str(run)
    assert json.loads(path.read_text()) == {}


def test_uninstall_keeps_a_created_file_the_user_added_to(hk):
    path = _settings(hk)
    _install(hk, "--project")
    data = json.loads(path.read_text())
    data["model"] = "opus"
    path.write_text(json.dumps(data, indent=2))
    assert hk.engine("uninstall", "--project").returncode == 0
    assert json.loads(path.read_text()) == {"model": "opus"}


@pytest.mark.parametrize("indent", [4, "\t", None])
def test_install_keeps_the_users_indent(hk, indent):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    original = json.dumps(EXISTING, indent=indent) + "\n"
    path.write_text(original)
    _install(hk, "--project")
    text = path.read_text()
    if indent is None:
        assert text.count("\n") == 1, "a one-line file stays on one line"
    else:
        assert text == json.dumps(json.loads(text), indent=indent) + "\n"
    assert hk.engine("uninstall", "--project").returncode == 0
    assert path.read_text() == original, "uninstall gives back the file byte for byte"


def test_install_keeps_the_users_crlf_line_ends(hk):
    """A settings file written on Windows: every line came back with "\\n",
    so a project's diff showed every line changed, not only ours."""
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    original = json.dumps(EXISTING, indent=2).replace("\n", "\r\n") + "\r\n"
    path.write_bytes(original.encode())
    _install(hk, "--project")
    raw = path.read_bytes()
    assert raw.count(b"\n") == raw.count(b"\r\n") > 10 and raw.endswith(b"}\r\n")
    data = json.loads(raw)
    assert data["hooks"] and json.dumps(data, indent=2).replace("\n", "\r\n") + "\r\n" == raw.decode()
    data["model"] = "opus"
    path.write_bytes(json.dumps(data, indent=2).replace("\n", "\r\n").encode())  # no backup is this file now
    assert hk.engine("uninstall", "--project").returncode == 0
    assert b"\n" in path.read_bytes() and path.read_bytes().count(b"\n") == path.read_bytes().count(b"\r\n")
