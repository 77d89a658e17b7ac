"""`engine install` / `uninstall` on settings files they cannot safely read
or change (issue 10, faults 5 and 8; issue 11): one line, exit 1, nothing
changed; uninstall removes only what install wrote, exactly."""

import json
import os
import tempfile
import time

import pytest

from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture


def _settings(hk):
    return hk.project / ".claude" / "settings.json"


def _one_line_error(run):
    assert run.returncode == 1, str(run)
    assert "Traceback" not in run.stderr, str(run)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"one line of error\n{run}"
    assert "settings.json" in lines[0], lines[0]
    return lines[0]


def _listing(folder):
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("text", [
    '{"hooks": null}',
    '{"hooks": ["x"]}',
    '{"hooks": []}',
    '{"hooks": {"UserPromptSubmit": "x"}}',
    '{"hooks": {"SessionStart": {"hooks": []}}}',
    '{"n": 1e999}',
    '{"n": NaN}',
], ids=["null", "list", "empty-list", "event-string", "event-object", "1e999", "nan"])
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_settings_install_cannot_read_as_the_agent_does_are_refused_alike(hk, text, command):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    before = _listing(path.parent)
    _one_line_error(hk.engine(command, "--project"))
    assert path.read_text() == text, "nothing changed"
    assert _listing(path.parent) == before, "no backup, no temporary file left"


def test_a_huge_number_is_never_rewritten_as_infinity(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text('{"n": 1e999}')
    msg = _one_line_error(hk.engine("install", "--project"))
    assert "1e999" in msg
    assert "Infinity" not in path.read_text()


def test_a_folder_named_settings_json(hk):
    _settings(hk).mkdir(parents=True)
    _one_line_error(hk.engine("install", "--project"))
    assert _settings(hk).is_dir() and os.listdir(_settings(hk)) == []


def test_a_symlink_loop(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.symlink_to(path.name)
    for command in ("install", "uninstall"):
        _one_line_error(hk.engine(command, "--project"))
    assert path.is_symlink() and os.readlink(path) == path.name


def test_a_fifo_settings_json_does_not_block(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    _one_line_error(hk.engine("install", "--project", timeout=30))
    assert _listing(path.parent) == ["settings.json"]


def test_a_settings_folder_that_cannot_be_written(hk, monkeypatch):
    """A read-only .claude/ (as root, chmod cannot make one: the write itself fails here)."""
    from engine.base.errors import UserError
    from engine.hooks import install

    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text('{"model": "opus"}\n')

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(UserError) as err:
        install.install("project", ["SessionStart"], cwd=str(hk.project))
    assert "nothing was changed" in str(err.value)
    assert path.read_text() == '{"model": "opus"}\n' and _listing(path.parent) == ["settings.json"]


def test_an_edit_made_while_install_runs_is_not_lost(hk, monkeypatch):
    from engine.base.errors import UserError
    from engine.hooks import install

    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text('{"model": "opus"}\n')
    real = install.hook_command

    def command_and_a_user_edit(*a, **k):  # runs after the file was read, before it is written
        path.write_text('{"model": "sonnet", "env": {"MINE": "1"}}\n')
        return real(*a, **k)

    monkeypatch.setattr(install, "hook_command", command_and_a_user_edit)
    with pytest.raises(UserError) as err:
        install.install("project", ["SessionStart"], cwd=str(hk.project))
    assert "run the command again" in str(err.value)
    assert json.loads(path.read_text()) == {"model": "sonnet", "env": {"MINE": "1"}}, "the user's edit is kept"
    assert _listing(path.parent) == ["settings.json"]


USERS_HOOKS = {
    "Stop": [{"hooks": [{"type": "command", "command": "/srv/engine hooks/notify.sh"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python -m engine.cli hook-guard"}]}],
    "SessionStart": [{"hooks": [{"type": "command", "command": "/opt/x/engine hook --verbose"},
                                {"type": "command", "command": "cd /srv && /usr/bin/python3 -m engine.cli hook"}]}],
}


def test_uninstall_keeps_the_users_hooks_that_only_look_like_ours(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hooks": USERS_HOOKS}, indent=2))
    run = hk.engine("install", "--project")
    assert run.returncode == 0, str(run)
    installed = json.loads(path.read_text())
    for event, groups in USERS_HOOKS.items():
        assert installed["hooks"][event][: len(groups)] == groups, "install keeps them too"
    run = hk.engine("uninstall", "--project")
    assert run.returncode == 0, str(run)
    assert json.loads(path.read_text()) == {"hooks": USERS_HOOKS}


def test_uninstall_still_recognises_every_shape_install_writes(hk):
    prof = hk.project / "my profile.yaml"  # a space: quoted in the command
    from hook_fixtures import profile_text

    prof.write_text(profile_text(name="p"))
    for args in ((), ("--profile", "default"), ("--profile", str(prof))):
        assert hk.engine("install", "--project", *args).returncode == 0
        run = hk.engine("uninstall", "--project")
        assert run.returncode == 0 and "removed" in run.stdout, str(run)
        # install created the file, so uninstall removes it once it holds nothing else
        assert not _settings(hk).exists() or not json.loads(_settings(hk).read_text()).get("hooks")


def test_install_errors_name_the_file_as_one_line(hk):
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text('{"hooks": null}')
    run = hk.engine("install", "--project")
    line = _one_line_error(run)
    assert line.split(":", 1)[0].endswith("settings.json"), "FILE: message"
    assert '"hooks"' in line and "nothing was changed" in line


# ------------------------------------------ a cloned repository's links never lead a write out of it


def _snapshot(folder):
    """Every file, folder and link under `folder`: its bytes, "folder" or where it links."""
    out = {}
    for p in sorted(folder.rglob("*")):
        key = str(p.relative_to(folder))
        out[key] = f"-> {os.readlink(p)}" if p.is_symlink() else "folder" if p.is_dir() else p.read_bytes()
    return out


def _link(link, target):
    """A relative link, as a cloned repository can ship one."""
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(target, link.parent))


def _refused(run, name):
    """One line, exit 1, naming the project's path and where it really leads."""
    assert run.returncode == 1, str(run)
    assert "Traceback" not in run.stderr, str(run)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"one line of error\n{run}"
    where, _, msg = lines[0].partition(": ")
    assert where.endswith(name) and "outside the project" in msg and "nothing was changed" in msg, lines[0]
    return lines[0]


def test_a_project_settings_link_to_the_users_settings_is_refused(hk):
    users = hk.home / ".claude" / "settings.json"
    users.parent.mkdir(parents=True)
    users.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}, indent=2) + "\n")
    _link(_settings(hk), users)
    before = _snapshot(hk.home)
    for command in ("install", "uninstall"):
        line = _refused(hk.engine(command, "--project"), ".claude/settings.json")
        assert str(users) in line, "the message says where the link leads"
        assert _snapshot(hk.home) == before, "the user's settings untouched, no backup beside them"
    assert _snapshot(hk.project) == {".claude": "folder", ".claude/settings.json": f"-> {os.readlink(_settings(hk))}"}


def test_a_dangling_project_link_out_creates_nothing_outside(hk):
    _link(_settings(hk), hk.home / ".config" / "autostart" / "made-by-install.json")
    for command in ("install", "uninstall"):
        _refused(hk.engine(command, "--project"), ".claude/settings.json")
        assert _snapshot(hk.home) == {}, "no file, no folder created outside the project"
    assert not (hk.project / ".claude" / "commands").exists()


def test_a_commands_folder_link_out_is_refused_before_anything_is_written(hk):
    victim = hk.home / ".config" / "victimdir"
    victim.mkdir(parents=True)
    (victim / "notes.md").write_text("mine\n")
    _link(hk.project / ".claude" / "commands", victim)
    before = _snapshot(hk.home)
    _refused(hk.engine("install", "--project"), ".claude/commands")
    assert _snapshot(hk.home) == before
    assert _listing(hk.project / ".claude") == ["commands"], "no settings file written either: no partial install"


def test_a_command_file_link_out_is_refused(hk):
    outside = hk.home / ".bashrc"
    _link(hk.project / ".claude" / "commands" / "pin-last.md", outside)  # dangling: install would create it
    _refused(hk.engine("install", "--project"), "pin-last.md")
    assert _snapshot(hk.home) == {}


def test_uninstall_removes_nothing_outside_once_the_project_links_out(hk):
    """Installed in a real folder, then the repository replaced .claude by a
    link to a copy outside it (a pull): uninstall must not follow it."""
    assert hk.engine("install", "--project").returncode == 0
    elsewhere = hk.home / ".config" / "claude-copy"
    elsewhere.parent.mkdir(parents=True)
    (hk.project / ".claude").rename(elsewhere)
    _link(hk.project / ".claude", elsewhere)
    before = _snapshot(hk.home)
    _refused(hk.engine("uninstall", "--project"), "settings.json")
    assert _snapshot(hk.home) == before


def test_a_link_that_stays_inside_the_project_is_followed(hk):
    shared = hk.project / "config" / "claude.json"
    shared.parent.mkdir()
    original = json.dumps({"model": "opus"}, indent=2) + "\n"
    shared.write_text(original)
    _link(_settings(hk), shared)
    run = hk.engine("install", "--project")
    assert run.returncode == 0, str(run)
    assert _settings(hk).is_symlink() and json.loads(shared.read_text())["hooks"]
    run = hk.engine("uninstall", "--project")
    assert run.returncode == 0, str(run)
    assert _settings(hk).is_symlink() and shared.read_text() == original


def test_a_backup_name_taken_by_a_link_is_not_written_through(hk, monkeypatch):
    from engine.hooks import install

    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text('{"model": "opus"}\n')
    monkeypatch.setattr(time, "strftime", lambda *a: "20300101-000000")
    _link(path.with_name("settings.json.bak-20300101-000000"), hk.home / "planted")  # dangling
    install.install("project", ["SessionStart"], cwd=str(hk.project))
    assert _snapshot(hk.home) == {}, "the backup went beside the link, not through it"
    assert path.with_name("settings.json.bak-20300101-000000-001").read_text() == '{"model": "opus"}\n'


def test_a_lone_surrogate_escape_is_kept_as_an_escape(hk):
    """A "\\ud800" escape is JSON every agent's JSON.parse reads; written out as it is
    it has no UTF-8: install wrote nothing and died with a traceback."""
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    original = '{\n  "note": "\\ud800 and é"\n}\n'
    path.write_text(original)
    run = hk.engine("install", "--project")
    assert run.returncode == 0 and "Traceback" not in run.stderr, str(run)
    text = path.read_bytes().decode("utf-8")
    assert '"\\ud800 and é"' in text and json.loads(text)["hooks"]
    assert hk.engine("uninstall", "--project").returncode == 0
    assert path.read_text() == original


def test_uninstall_reads_no_backup_a_project_planted(hk):
    """Uninstall looks for the backup to give the file back byte for byte:
    a project's settings.json.bak-* that is a FIFO (or a link to /dev/zero:
    its size says 0) was read to its end, which never comes."""
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text('{"model": "opus"}\n')
    os.mkfifo(path.with_name("settings.json.bak-99999999-999999"))
    assert hk.engine("install", "--project").returncode == 0
    data = json.loads(path.read_text())
    path.write_text(json.dumps(dict(data, effort="high")))  # the user's edit: no backup is the file as it is now
    run = hk.engine("uninstall", "--project", timeout=60)
    assert run.returncode == 0, str(run)
    assert json.loads(path.read_text()) == {"model": "opus", "effort": "high"}


def test_a_key_named_twice_is_refused_where_it_is_and_doctor_still_reads_the_file(hk):
    """The agent reads the last of two same keys; install rewrote the file
    from that, and the other one's bytes were gone once the backups turned over."""
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    text = '{\n  "model": "opus",\n  "env": {"A": "1", "A": "2"}\n}\n'
    path.write_text(text)
    for command in ("install", "uninstall"):
        msg = _one_line_error(hk.engine(command, "--project"))
        assert 'settings.json:3:10: the key "A" appears twice' in msg and "nothing was changed" in msg, msg
        assert path.read_text() == text and _listing(path.parent) == ["settings.json"]
    run = hk.engine("doctor", "--json", "--agent", "claude-code")
    assert run.returncode == 0, str(run)
    project = next(s for s in json.loads(run.stdout)["agents"][0]["hooks"] if s["scope"] == "project")
    assert project["error"] is None and project["installed"] == [], project


@pytest.mark.parametrize("value, col", [("NaN", 26), ("-Infinity", 26), ("1e400", 26)])
def test_a_value_json_readers_refuse_is_said_where_it_is(hk, value, col):
    """Old: a settings file holding NaN, Infinity or 1e400 (the agent's own
    reader refuses the first two; the last would be written back as
    Infinity) was refused naming only the file."""
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    text = f'{{\n  "model": "opus",\n  "env": {{"A": "1", "N": {value}}}\n}}\n'
    path.write_text(text)
    msg = _one_line_error(hk.engine("install", "--project"))
    assert f"settings.json:3:{col}: settings file is not valid JSON" in msg and "nothing was changed" in msg, msg
    assert path.read_text() == text


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_settings_file_the_user_made_read_only_is_left_alone(hk, command):
    """Old: a settings file with no write permission (chmod 444: the user
    locked it) was replaced all the same (a rename needs only its folder),
    with its mode kept.  Now one line says so, and nothing changes."""
    path = _settings(hk)
    path.parent.mkdir(parents=True)
    path.write_text('{"model": "opus"}\n')
    path.chmod(0o444)
    before = _listing(path.parent)
    msg = _one_line_error(hk.engine(command, "--project"))
    assert "read-only" in msg and "chmod u+w" in msg, msg
    assert path.read_text() == '{"model": "opus"}\n' and _listing(path.parent) == before
    path.chmod(0o644)
    assert hk.engine(command, "--project").returncode == 0


def test_an_install_waits_for_another_to_end(hk):
    """Install and uninstall read, change and write their records whole
    (the settings files and folders install created, the variable and
    commands it wrote): two at once lost one's change, and uninstall then
    left `{}` where install had created the file.  One waits for the other
    now (the lock of settingsfile.records_locked)."""
    import fcntl
    import subprocess
    import sys

    from engine.base.files import private_dir

    private_dir(str(hk.state))
    lock = os.open(hk.state, os.O_RDONLY)  # the state folder is the lock: no file is left behind
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as another install holding it
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "install", "--project"], cwd=str(hk.project),
                                env=hk.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            with pytest.raises(subprocess.TimeoutExpired):
                proc.wait(timeout=3)  # it waits for the lock, however long
            assert not _settings(hk).exists(), "nothing written while the other holds it"
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(lock)
    assert proc.returncode == 0, err
    assert _settings(hk).is_file()


@pytest.mark.parametrize("agent, name", [("gemini", ".gemini/settings.json"), ("claude-code", ".claude/settings.json")])
def test_a_huge_project_settings_file_is_refused_unread(hk, agent, name):
    """Audit: install, uninstall and doctor read a project's settings file
    whole: a 2 GB .gemini/settings.json (zeros, a few MB in git) took 4 GB
    of memory and 12 s before it was found not to be JSON.  It is now
    refused by its size, unread (install.max_settings_bytes)."""
    path = hk.project / name
    path.parent.mkdir(parents=True)
    with open(path, "wb") as fh:
        fh.truncate(2 << 30)  # sparse: costs no disk
    for command in ("install", "uninstall"):
        run = hk.engine(command, "--project", "--agent", agent, timeout=60)
        assert run.returncode == 1 and "Traceback" not in run.stderr, str(run)
        # A Claude Code settings file too large to look into may name any of the engine's variables: one note says so
        lines = [line for line in run.stderr.splitlines() if line.strip() and not line.startswith("engine: note:")]
        assert len(lines) == 1 and "larger than 16,777,216 bytes" in lines[0], str(run)
        assert "install.max_settings_bytes" in lines[0], lines
    assert _listing(path.parent) == ["settings.json"] and path.stat().st_size == 2 << 30
    run = hk.engine("doctor", "--json", "--agent", agent, timeout=60)
    assert run.returncode == 0, str(run)
    project = next(s for s in json.loads(run.stdout)["agents"][0]["hooks"] if s["scope"] == "project")
    assert "install.max_settings_bytes" in project["error"], project
