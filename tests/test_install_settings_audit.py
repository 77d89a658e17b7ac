"""`engine install` and `engine uninstall` against a user with years of
hand-made settings (the settings audit): what is theirs stays as they
wrote it, in every agent's file, whatever else changed since."""

import json
import os
import re
from pathlib import Path

import pytest

from engine.agents.table import get, names
from engine.hooks import jsonsplice, settingsfile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture
from test_install_agents import _engine, _handlers, _path

# A hand-made file: the user's own hook written on one line, a list on
# one line, keys in their order, an escape a writer would not choose.
HAND_MADE = """{
    "zeta": 1,
    "hooks": {
        "SessionStart": [ {"hooks": [{"type": "command", "command": "/opt/my-hook  --x"}]} ]
    },
    "alpha": {"x": [1, 2, 3], "y": "\\u00e9t\\u00e9"},
    "permissions": {"allow": ["Bash(ls)"]}
}
"""


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_install_keeps_every_line_of_a_hand_made_file_and_uninstall_keeps_them_after_an_edit(hk, agent):
    """Install rewrote a plain JSON file whole at its indent: every one-line
    object and list of the user's came back spread over lines (a dotfiles
    diff of the whole file), and uninstall after any edit of theirs left it
    so.  Now it is edited only where the engine's entries go in or out."""
    path = _path(hk, agent, "user")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HAND_MADE)
    assert _engine(hk, "install", "--agent", agent, "--user").returncode == 0
    text = path.read_text()
    lines = text.splitlines()
    theirs = [line for line in HAND_MADE.splitlines() if "SessionStart" not in line]
    assert [line for line in lines if line in theirs] == theirs, f"the user's lines kept, in their order\n{text}"
    session_start = HAND_MADE.splitlines()[3].removesuffix(" ]")
    assert any(line.startswith(session_start + ", {") for line in lines), "their one-line list stays on one line"
    assert json.loads(text)["alpha"] == {"x": [1, 2, 3], "y": "été"}
    path.write_text(text.replace('"zeta": 1', '"zeta": 2'))  # the user's own edit since install
    assert _engine(hk, "uninstall", "--agent", agent, "--user").returncode == 0
    assert path.read_text() == HAND_MADE.replace('"zeta": 1', '"zeta": 2')



def test_the_new_settings_reach_the_disk_before_they_replace_the_old(tmp_path, monkeypatch):
    """The rewrite renamed a temporary file it had never synced over the
    user's settings: a power cut after the rename could leave a settings
    file of zero bytes (ext4 without auto_da_alloc, XFS), neither old nor new."""
    path = tmp_path / "settings.json"
    path.write_text('{"model": "opus"}\n')
    synced, order = set(), []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        synced.add(os.path.realpath(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    def replace(src, dst):
        order.append((str(src), str(src) in synced))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    settingsfile.write(path, {"model": "opus", "hooks": {}}, path.read_bytes(), keep=0)
    assert json.loads(path.read_text()) == {"model": "opus", "hooks": {}}
    assert len(order) == 1 and order[0][1], f"the new file synced before it replaced the old: {order}"


def test_the_readmes_events_an_agent_lacks_are_the_ones_install_skips():
    """The README's install section said Codex CLI has no session-end event,
    while install writes its SessionEnd hook (measured with 0.169.0): a user
    reading it expected a Codex session's state to linger."""
    text = " ".join((Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8").split())
    claims = re.findall(r"\((Claude Code|Codex CLI|Gemini CLI|Copilot CLI) has no ([a-z, -]+?) event\)", text)
    assert claims, "the README says which events an agent lacks"
    displays = {get(n).data["display"]: get(n) for n in names()}
    for display, events in claims:
        for event in re.split(r", | or ", events):
            neutral = event.replace("-", "_")
            assert not displays[display].agent_events(neutral), f"{display} has {neutral}: README says it has none"


@pytest.mark.parametrize("agent,raw,place", [
    ("claude-code", b'{\n  "a": 1,\n  "hooks": {\n    "Stop": "x"\n  }\n}\n', "4:13"),
    ("codex", b'{\n  "hooks": [1]\n}\n', "2:12"),
    ("gemini", b'{ // mine\n  "hooks": {"Stop": 5}}\n', "2:21"),
    ("claude-code", b'{\n  "a": "\xc3\xa9\xff"\n}\n', "2:10"),
    ("codex", b'\n  [1]\n', "2:3"),
])
def test_a_settings_file_install_cannot_read_is_refused_at_its_place(hk, agent, raw, place):
    """A file of the wrong shape, not UTF-8, or not an object was refused
    with its name only: a user with a long settings file searched for the
    value.  Each says FILE:LINE:COL now, as a JSON error does, and writes nothing."""
    path = _path(hk, agent, "user")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    run = _engine(hk, "install", "--agent", agent, "--user")
    assert run.returncode == 1 and f"{path}:{place}: " in run.stderr, str(run)
    assert path.read_bytes() == raw and [p.name for p in path.parent.iterdir()] == [path.name]


def test_uninstall_lists_the_backup_it_wrote_under_a_title_that_says_so(hk):
    """Uninstall listed the backup it had just written under "removed:": a
    user read that their settings' backup was deleted."""
    path = _path(hk, "claude-code", "user")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"model": "opus"}\n')
    assert _engine(hk, "install", "--user").returncode == 0
    path.write_text(path.read_text().replace("opus", "sonnet"))  # no backup holds this: uninstall writes one
    run = _engine(hk, "uninstall", "--user")
    lines = run.stdout.splitlines()
    backup = next(i for i, line in enumerate(lines) if ".bak-" in line)
    title = next(line for line in reversed(lines[:backup]) if not line.startswith("  "))
    assert title == "wrote or removed:" and backup > 0, run.stdout
    assert next(path.parent.glob("settings.json.bak-*")).exists()


def _doctor(hk, agent):
    run = _engine(hk, "doctor", "--agent", agent, "--json")
    assert run.returncode == 0, str(run)
    return json.loads(run.stdout)["agents"][0]


@pytest.mark.parametrize("agent,scope,setting,says", [
    ("gemini", "user", {"hooksConfig": {"disabled": ["my-own-hook", "rules-engine-BeforeAgent"]}},
     "hooksConfig.disabled turns off the engine's hooks rules-engine-BeforeAgent:"),
    ("claude-code", "user", {"disableAllHooks": True}, "disableAllHooks is true:"),
])
def test_doctor_says_when_the_agents_own_settings_switch_the_hooks_off(hk, agent, scope, setting, says):
    """Doctor said "missing: nothing" for hooks installed and trusted that
    the agent's own setting keeps from running (Gemini CLI's hooksConfig,
    as `/hooks disable` writes it; Claude Code's disableAllHooks)."""
    assert _engine(hk, "install", "--agent", agent, "--user").returncode == 0
    path = _path(hk, agent, scope)
    data = json.loads(path.read_text()) if path.exists() else {}
    path.parent.mkdir(parents=True, exist_ok=True)
    before = [line for line in _doctor(hk, agent)["missing"] if says in line]
    path.write_text(json.dumps({**data, **setting}))
    after = [line for line in _doctor(hk, agent)["missing"] if says in line]
    assert not before and len(after) == 1 and after[0].startswith(f"{path}: "), after
    mine = {"hooksConfig": {"disabled": ["my-own-hook"]}}  # a hook of the user's off: not the engine's business
    path.write_text(json.dumps({**data, **mine}))
    assert not [line for line in _doctor(hk, agent)["missing"] if "change it to run them" in line]


@pytest.mark.parametrize("text,new,out", [
    ('{"Stop": [{"a": 1}, {"b": 2}]}', {"Stop": [{"b": 2}]}, '{"Stop": [{"b": 2}]}'),
    ('{"Stop": [{"a": 1}, {"b": 2}]}', {"Stop": [{"a": 1}]}, '{"Stop": [{"a": 1}]}'),
    ('{"x": 1, "hooks": {}, "y": 2}', {"x": 1, "y": 2}, '{"x": 1, "y": 2}'),
])
def test_taking_out_an_item_that_shared_its_line_leaves_the_line_as_if_it_never_was(text, new, out):
    """Uninstall of the engine's hook written first in a group on one line
    left `[ {"type": ...` behind: a user's line changed by a blank."""
    assert jsonsplice.splice(text, json.loads(text), new, None, "\n") == out


@pytest.mark.parametrize("agent,own", [
    ("copilot", {".github/hooks/ci.json": {"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "./x"}]}},
                 ".claude/settings.json": {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "./y"}]}]}}}),
    ("gemini", {".gemini/settings.json": {"hooks": {"BeforeTool": [{"hooks": [{"type": "command", "command": "./z"}]}]}}}),
    # the engine's shape, the repository's program: its hook, not the engine's
    ("copilot", {".github/hooks/ci.json": {"version": 1, "hooks": {"sessionStart": [
        {"type": "command", "bash": "{project}/bin/engine-hook --agent copilot --event sessionStart"}]}}}),
])
def test_a_project_install_names_the_projects_own_hooks_that_trusting_the_folder_runs(hk, agent, own):
    """Install --project told the user to trust the folder and said nothing
    of the hooks the cloned repository ships, which the agent then runs as
    well: the trust asked for the engine's hooks was given to the repository's."""
    for name, data in own.items():
        (hk.project / name).parent.mkdir(parents=True, exist_ok=True)
        (hk.project / name).write_text(json.dumps(data).replace("{project}", str(hk.project)))
    outside = hk.root / "elsewhere.json"  # a link out of the project is never read nor named
    outside.write_text(json.dumps(next(iter(own.values()))))
    link = _path(hk, agent, "project").parent / "linked.json"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside)
    run = _engine(hk, "install", "--agent", agent, "--project")
    assert run.returncode == 0, str(run)
    todo = run.stdout.partition("to do before the hooks run:")[2]
    line = next((line for line in todo.splitlines() if "project's own hooks" in line), "")
    assert all(name in line for name in own) and "linked.json" not in line, run.stdout
    for name in own:
        (hk.project / name).write_text(json.dumps({"hooks": {}}))
    run = _engine(hk, "install", "--agent", agent, "--project")
    assert "project's own hooks" not in run.stdout, "only the engine's hooks: nothing to read first"


def _planted_hook(hk, **extra):
    """A cloned repository's own bin/engine-hook, and its Copilot hooks file
    whose sessionStart hook has the engine's shape but runs that program
    (`extra`: keys the hook has besides): (the program, the file)."""
    program = hk.project / "bin" / "engine-hook"
    program.parent.mkdir(parents=True)
    program.write_text("#!/bin/sh\nexit 0\n")
    path = _path(hk, "copilot", "project")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": 1, "hooks": {"sessionStart": [
        {"type": "command", "bash": f"{program} --agent copilot --event sessionStart", "timeoutSec": 10, **extra}]}}))
    return program, path


def test_doctor_counts_no_project_hook_that_runs_a_program_of_the_projects_as_the_engines(hk):
    """A cloned repository's .github/hooks/rules-engine.json whose commands
    have the engine's shape but run its own bin/engine-hook: doctor called
    them the engine's hooks, installed and untrusted, and told the user to
    trust the folder, which ran the repository's program."""
    program, path = _planted_hook(hk)
    report = _doctor(hk, "copilot")
    project = next(s for s in report["hooks"] if s["scope"] == "project")
    assert project["installed"] == [] and project["trust"] is None, project
    assert [line for line in report["missing"] if str(program) in line and "not this engine's" in line], report
    assert not [line for line in report["missing"] if "trust" in line and "not this engine's" not in line]
    assert _engine(hk, "install", "--agent", "copilot", "--project").returncode == 0  # the engine's own beside them
    report = _doctor(hk, "copilot")
    project = next(s for s in report["hooks"] if s["scope"] == "project")
    assert "sessionStart" in project["installed"], report
    assert [line for line in report["missing"] if str(program) in line and "not this engine's" in line], report


@pytest.mark.parametrize("where", ["home", "above"])
def test_a_project_install_in_the_home_folder_or_above_it_is_refused(hk, where):
    """`engine install --detect` (the README's first command, --project by
    default) run in the home folder wrote "project" hooks there and told the
    user to trust the home folder in Gemini CLI and Copilot CLI: a trust
    that covers every project under it, cloned repositories' hooks included."""
    (hk.home / ".gemini").mkdir()
    (hk.home / ".copilot").mkdir()
    cwd = hk.home if where == "home" else hk.home.parent
    before = sorted(p for p in hk.root.rglob("*") if "state" not in p.parts and "cache" not in p.parts)
    run = hk.engine("install", "--detect", cwd=cwd, env={"CODEX_HOME": None, "COPILOT_HOME": None})
    assert run.returncode == 1 and "home folder" in run.stderr and "--user" in run.stderr, str(run)
    assert "Traceback" not in run.stderr and "trust" not in run.stdout
    assert sorted(p for p in hk.root.rglob("*") if "state" not in p.parts and "cache" not in p.parts) == before
    assert _engine(hk, "install", "--agent", "gemini", "--project").returncode == 0  # a project below it: as before


def test_doctor_asking_to_trust_the_folder_names_the_projects_own_hooks_too(hk):
    """Doctor's "not trusted" line repeated install's to-do, trust the folder,
    without the repository's own hooks that trusting it runs as well."""
    assert _engine(hk, "install", "--agent", "copilot", "--project").returncode == 0
    theirs = hk.project / ".github" / "hooks" / "ci.json"
    theirs.write_text(json.dumps({"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "./x"}]}}))
    lines = [line for line in _doctor(hk, "copilot")["missing"] if "not trusted" in line]
    assert len(lines) == 1 and "project's own hooks" in lines[0] and ".github/hooks/ci.json" in lines[0], lines


def test_doctor_in_the_home_folder_reads_no_project_settings_and_asks_no_trust_of_it(hk):
    """Doctor run in the home folder read the user's own Gemini settings as
    the "project's", and asked the user to trust the home folder for them."""
    assert _engine(hk, "install", "--agent", "gemini", "--user").returncode == 0
    run = hk.engine("doctor", "--agent", "gemini", "--json", cwd=hk.home, env={"GEMINI_CLI_TRUSTED_FOLDERS_PATH": None})
    assert run.returncode == 0, str(run)
    report = json.loads(run.stdout)["agents"][0]
    project = next(s for s in report["hooks"] if s["scope"] == "project")
    assert project["installed"] == [] and "home folder" in project["error"], project
    assert not [line for line in report["missing"] if "trust" in line], report["missing"]


def _edit_every_engine_hook(agent, data):
    """The engine's hooks in `data`, each with a key of the user's added (a
    status message, a comment): what a user who edits one of them writes."""
    edited = json.loads(json.dumps(data))
    for _, _, handler in _handlers(agent, edited):
        handler["statusMessage"] = "rules"
    return edited


def _engine_hooks_at(agent, data):
    """{event: how many hooks there run the engine's hook command}."""
    from engine.hooks.hookcmd import parse

    counts = {}
    for event, _, handler in _handlers(agent, data):
        command = handler.get("bash" if agent == "copilot" else "command")
        counts[event] = counts.get(event, 0) + (parse(command) is not None)
    return counts


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini", "copilot"])
def test_an_edited_engine_hook_is_kept_and_install_adds_no_second_one_beside_it(hk, agent):
    """A user who edited the engine's hook entry (a key added) and ran
    engine install again got a second engine hook at every event: the
    engine ran twice per event, delivering everything twice, and doctor
    said nothing.  Install now leaves the edited entry as it is, adds none
    beside it and says so; doctor names the file and events where both run."""
    assert _engine(hk, "install", "--agent", agent, "--user").returncode == 0
    path = _path(hk, agent, "user")
    installed = json.loads(path.read_text())
    edited = _edit_every_engine_hook(agent, installed)
    path.write_text(json.dumps(edited))
    run = _engine(hk, "install", "--agent", agent, "--user")
    assert run.returncode == 0, str(run)
    after = json.loads(path.read_text())
    events = list(installed["hooks"])
    assert set(_engine_hooks_at(agent, after).values()) == {1}, after
    assert after == edited, "the user's edited entries kept as they are, none added beside them"
    assert "edited" in run.stderr and all(e in run.stderr for e in events), str(run)
    report = _doctor(hk, agent)
    user = next(s for s in report["hooks"] if s["scope"] == "user")
    assert set(user["installed"]) == set(events), "the edited hooks run the engine: installed"
    assert not [line for line in report["missing"] if "runs twice" in line], report["missing"]
    both = {**edited, "hooks": {e: edited["hooks"][e] + installed["hooks"][e] for e in events}}
    path.write_text(json.dumps(both))  # what install wrote before: the engine's own beside the edited ones
    report = _doctor(hk, agent)
    lines = [line for line in report["missing"] if line.startswith(f"{path}: at ") and "runs twice" in line]
    assert len(lines) == 1 and all(e in lines[0] for e in events) and "edited" in lines[0], report["missing"]
    assert _engine(hk, "install", "--agent", agent, "--user").returncode == 0
    assert json.loads(path.read_text()) == edited, "install takes out only the engine's own, the edited ones stay"
    assert _engine(hk, "uninstall", "--agent", agent, "--user").returncode == 0
    assert json.loads(path.read_text()) == edited, "uninstall never removes the user's edited entries"


def test_an_edited_hook_that_runs_a_program_of_the_projects_is_no_engine_hook_install_leaves_out(hk):
    """A cloned repository's hook of the engine's shape with a key added,
    running its own bin/engine-hook, runs no engine: install still writes
    the engine's own there, and doctor names the repository's program."""
    program, path = _planted_hook(hk, cwd=".")
    run = _engine(hk, "install", "--agent", "copilot", "--project")
    assert run.returncode == 0 and "edited" not in run.stderr, str(run)
    assert _engine_hooks_at("copilot", json.loads(path.read_text()))["sessionStart"] == 2
    report = _doctor(hk, "copilot")
    assert [line for line in report["missing"] if str(program) in line and "not this engine's" in line], report
    assert not [line for line in report["missing"] if "runs twice" in line], report["missing"]


def test_a_project_install_reads_a_bounded_number_of_the_projects_own_hook_files_and_says_what_it_left(
        hk, monkeypatch):
    """Install --project read every file a cloned repository put in
    .github/hooks/ to name those holding its own hooks: 20,000 small ones
    took 3.8 s and a note of 540 KB, and nothing bounded their number.  At
    most install.max_folder_hook_files are read now, none larger than
    install.max_folder_hook_bytes (stat'ed first: a sparse 2 GB file is
    never opened), and the note says which were not read."""
    from engine.core.settings import folder_hook_limits
    from engine.hooks import install

    most, cap = folder_hook_limits()
    folder = hk.project / ".github" / "hooks"
    folder.mkdir(parents=True)
    theirs = json.dumps({"version": 1, "hooks": {"sessionStart": [{"type": "command", "bash": "./x"}]}})
    for i in range(most + 20):
        (folder / f"h{i:04d}.json").write_text(theirs)
    big = hk.project / ".claude" / "settings.json"
    big.parent.mkdir()
    with open(big, "wb") as fh:
        fh.truncate(2 << 30)  # 2 GB of zeros, no disk
    opened = []
    real_load = settingsfile.load
    monkeypatch.setattr(settingsfile, "load", lambda path, *a, **k: opened.append(str(path)) or real_load(path, *a, **k))
    own = install.projects_own_hooks(get("copilot"), hk.project)
    assert len(opened) == most and str(big) not in opened, len(opened)
    assert len(own.found) == most and own.too_large == [str(big)] and own.too_many == [".github/hooks/*.json"], own
    assert os.path.getsize(big) > cap
    run = _engine(hk, "install", "--agent", "copilot", "--project")
    assert run.returncode == 0, str(run)
    line = next((line for line in run.stdout.splitlines() if "Not read" in line), "")
    assert ".claude/settings.json" in line and ".github/hooks/*.json" in line, run.stdout
    assert "max_folder_hook_files" in line and f"{most:,}" in line, line
    assert len(run.stdout) < 100 * most, "the note names no more files than were read"
    lines = [line for line in _doctor(hk, "copilot")["missing"] if "not trusted" in line]
    assert len(lines) == 1 and "Not read" in lines[0] and ".claude/settings.json" in lines[0], lines


def _program(path, text="#!/bin/sh\nexit 0\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _recorded_install(prefix, name="engine-hook"):
    """An earlier install of this engine in another environment: its script,
    and the RECORD pip writes listing it with its hash (../../../bin/NAME)."""
    import base64
    import hashlib

    script = _program(prefix / "bin" / name, "#!/old/python\nfrom engine.cli.main import run_as_process\n")
    digest = base64.urlsafe_b64encode(hashlib.sha256(script.read_bytes()).digest()).decode().rstrip("=")
    record = prefix / "lib" / "python3.9" / "site-packages" / "rules_engine-0.0.9.dist-info" / "RECORD"
    record.parent.mkdir(parents=True)
    record.write_text(f"engine/__init__.py,sha256=x,1\n../../../bin/{name},sha256={digest},{script.stat().st_size}\n")
    return script


def test_an_older_hook_command_running_another_tools_engine_is_that_tools_hook(hk):
    """`/abs/path/engine hook` was the engine's whatever program the path
    named: another tool's `engine` with a `hook` subcommand passed for the
    engine, doctor called it installed, install replaced it with the
    engine's own and uninstall deleted it.  Such an older command is this
    engine's only when its program is the script install writes today or
    one an install of this engine lists in its RECORD (or no longer there)."""
    import sys

    other = _program(hk.root / "othertool" / "bin" / "engine")
    modified = _recorded_install(hk.root / "modified")
    modified.write_text(modified.read_text() + "# changed since\n")  # its RECORD's hash no longer holds
    theirs = [f"{other} hook", f"{other} hook --agent claude-code", f"{modified} --agent claude-code"]
    earlier = [f"{Path(sys.executable).parent / 'engine'} hook --agent claude-code",  # this environment's, before -I
               f"{_recorded_install(hk.root / 'oldvenv')} --agent claude-code",
               f"{_recorded_install(hk.root / 'oldpipx', 'engine')} hook",
               f"{hk.root / 'removed' / 'bin' / 'engine-hook'} --agent claude-code"]  # an install since removed
    groups = [{"hooks": [{"type": "command", "command": c, "timeout": 10}]} for c in theirs]
    path = _path(hk, "claude-code", "user")
    path.parent.mkdir(parents=True)
    text = json.dumps({"hooks": {"SessionStart": groups}}, indent=2) + "\n"
    path.write_text(text)
    report = _doctor(hk, "claude-code")
    user = next(s for s in report["hooks"] if s["scope"] == "user")
    assert user["installed"] == [], user
    lines = [line for line in report["missing"] if "not this engine's" in line and "another tool's hook" in line]
    assert len(lines) == 2 and str(other) in lines[0] and str(modified) in lines[1], report["missing"]
    assert _engine(hk, "install", "--user").returncode == 0
    after = json.loads(path.read_text())
    assert after["hooks"]["SessionStart"][:3] == groups, "the other tool's hooks kept as they were"
    assert len(after["hooks"]["SessionStart"]) == 4, "and the engine's own added beside them"
    assert _engine(hk, "uninstall", "--user").returncode == 0
    assert path.read_text() == text
    olds = [{"hooks": [{"type": "command", "command": c, "timeout": 10}]} for c in earlier]
    path.write_text(json.dumps({"hooks": {"SessionStart": groups + olds, "Stop": olds[:1]}}))
    assert _engine(hk, "uninstall", "--user").returncode == 0
    assert json.loads(path.read_text()) == {"hooks": {"SessionStart": groups}}, "an earlier engine's entries go"


@pytest.mark.parametrize("agent", ["claude-code", "gemini"])
def test_install_again_keeps_the_text_of_a_users_hook_written_after_the_engines(hk, agent):
    """A hook of the user's added after the engine's in one event's list:
    install again takes the engine's out and adds it at the end, a list of
    the same length, whose elements were rewritten in place: the user's
    entry came back as the engine's JSON, its layout (and comments) lost."""
    assert _engine(hk, "install", "--agent", agent, "--user").returncode == 0
    path = _path(hk, agent, "user")
    text = path.read_text()
    event = "SessionStart"
    at = text.index(f'"{event}": [') + len(f'"{event}": [')
    close = text.index("\n    ]", at)
    mine = '{ "hooks":[ {"type":"command",  "command":"/opt/mine --x" } ] }'
    text = text[:close] + ",\n      " + mine + text[close:]
    if agent == "gemini":
        text = text.replace(mine, mine + "  // my own, keep it")
    path.write_text(text)
    run = _engine(hk, "install", "--agent", agent, "--user", "--profile", "default")
    assert run.returncode == 0, str(run)
    after = path.read_text()
    assert mine in after and (agent != "gemini" or mine + ",  // my own, keep it" in after), after
    groups = json.loads(re.sub(r"//[^\n]*", "", after))["hooks"][event]
    assert groups[0]["hooks"][0]["command"] == "/opt/mine --x" and len(groups) == 2, groups


def test_a_list_of_the_same_length_keeps_an_element_that_moved_as_it_was_written():
    text = '[\n  {"a": 1},\n  {"b":   2}\n]'
    assert jsonsplice.splice(text, [{"a": 1}, {"b": 2}], [{"b": 2}, {"c": 3}], 2, "\n") == '[\n  {"b":   2},\n  {\n    "c": 3\n  }\n]'
    text = '[{"a": 1}, {"b":  2}, {"c": 3}]'
    assert jsonsplice.splice(text, json.loads(text), [{"a": 1}, {"b": 5}, {"c": 3}], 2, "\n") == \
        '[{"a": 1}, {"b":  5}, {"c": 3}]', "an element changed in its place is edited there"


_OFF = {"hooksConfig": {"enabled": False}}
_ON = {"hooksConfig": {"enabled": True}}


@pytest.mark.parametrize("files,trusted,wins,off", [
    ({"user": _OFF}, False, "user", True),
    ({"user": _OFF, "project": _ON}, True, "project", False),
    ({"user": _OFF, "project": _ON}, False, "user", True),  # an untrusted folder's file is not read
    ({"user": _ON, "project": _OFF}, True, "project", True),
    ({"defaults": _OFF}, False, "defaults", True),
    ({"defaults": _OFF, "user": _ON}, False, "user", False),
    ({"user": _ON, "project": _ON, "system": _OFF}, True, "system", True),
    ({"user": _OFF, "project": _OFF, "system": _ON}, True, "system", False),
])
def test_doctor_says_which_gemini_settings_file_decides_whether_hooks_run(hk, files, trusted, wins, off):
    """Doctor reported each Gemini settings file's hooksConfig.enabled on its
    own: a user's false overridden by a trusted project's true was "no hook
    at all", a system file's false went unseen.  Gemini CLI 0.61.0 merges
    system defaults, user, project (trusted folder only), system, the last
    that sets it winning; doctor says which file wins, hooks on or off."""
    assert _engine(hk, "install", "--agent", "gemini", "--user").returncode == 0
    etc = hk.root / "etc" / "gemini-cli"
    paths = {"user": _path(hk, "gemini", "user"), "project": _path(hk, "gemini", "project"),
             "system": etc / "settings.json", "defaults": etc / "system-defaults.json"}
    for name, setting in files.items():
        paths[name].parent.mkdir(parents=True, exist_ok=True)
        data = json.loads(paths[name].read_text()) if paths[name].exists() else {}
        paths[name].write_text(json.dumps({**data, **setting}))
    if trusted:
        (hk.home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(hk.project): "TRUST_FOLDER"}))
    run = _engine(hk, "doctor", "--agent", "gemini", "--json", env={"GEMINI_CLI_SYSTEM_SETTINGS_PATH": str(paths["system"]),
                                                                  "GEMINI_CLI_SYSTEM_DEFAULTS_PATH": None})
    report = json.loads(run.stdout)["agents"][0]
    (decision,) = report["settings_decisions"]
    assert decision["wins"] == str(paths[wins]) and decision["off"] is off, decision
    assert f"{paths[wins]} ({'system defaults' if wins == 'defaults' else wins}) wins" in decision["line"], decision
    lines = [line for line in report["missing"] if "hooksConfig.enabled" in line]
    assert lines == ([decision["line"] + " (your setting: change it to run them)"] if off else []), report["missing"]
    assert ("hooks are off" if off else "hooks are on") in decision["line"]


@pytest.mark.parametrize("store", ["read-only mount", "another owner"])
def test_a_settings_file_linked_into_a_read_only_store_gets_advice_that_can_work(tmp_path, monkeypatch, store):
    """A settings file that is a link into a read-only store (home-manager's
    ~/.claude/settings.json -> /nix/store/...) was told `chmod u+w`, which
    cannot work there.  Told from the link's target being read-only (its
    file system, or its owner), not from its path: the advice is the link's
    source or --project; a file of the user's own still gets chmod."""
    from engine.base.errors import UserError

    target = tmp_path / "store" / "abc-settings.json"
    target.parent.mkdir()
    target.write_text('{"model": "opus"}\n')
    target.chmod(0o444)
    link = tmp_path / "home" / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(target)
    if store == "read-only mount":
        real_statvfs = os.statvfs

        class ReadOnly:
            def __init__(self, st):
                self.f_flag = st.f_flag | os.ST_RDONLY

        monkeypatch.setattr(os, "statvfs", lambda p: ReadOnly(real_statvfs(p)) if str(p).startswith(
            str(target.parent)) else real_statvfs(p))
    else:
        monkeypatch.setattr(os, "geteuid", lambda: target.stat().st_uid + 1)
    with pytest.raises(UserError) as caught:
        settingsfile.load(link)
    said = str(caught.value)
    assert "chmod" in said and "cannot" in said and "--project" in said and "link is made from" in said, said
    assert str(target) in said and "nix" not in said.lower()
    assert settingsfile.load(link, rewrite=False)[0] == {"model": "opus"}, "doctor still reads it"
    own = tmp_path / "own.json"
    own.write_text("{}")
    own.chmod(0o444)
    monkeypatch.undo()
    with pytest.raises(UserError, match=r"chmod u\+w"):
        settingsfile.load(own)


def test_doctor_names_an_engine_hook_written_before_isolation_and_install_rewrites_it(hk):
    """An earlier version wrote `<python> -m engine.cli hook`, without -I:
    run in a project's folder, Python puts that folder first on its import
    path, so a cloned repository's own engine/cli.py runs in the hook
    (measured: `python -m engine.cli hook` in a folder holding engine/cli.py
    runs that file).  Install rewrites it, but nothing told the user to run
    it: doctor counted the entry installed and said nothing."""
    import sys

    from engine.hooks.hookcmd import runs_unisolated

    old = f"{sys.executable} -m engine.cli hook --agent claude-code"
    path = _path(hk, "claude-code", "user")
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": old, "timeout": 10}]}]}}))
    report = _doctor(hk, "claude-code")
    user = next(s for s in report["hooks"] if s["scope"] == "user")
    assert user["unisolated"] == ["SessionStart"], user
    lines = [line for line in report["missing"] if "without -I" in line]
    assert len(lines) == 1 and str(path) in lines[0] and "engine install --agent claude-code --user" in lines[0]
    assert _engine(hk, "install", "--agent", "claude-code", "--user").returncode == 0
    commands = [h["command"] for _, _, h in _handlers("claude-code", json.loads(path.read_text()))]
    assert commands and not any(runs_unisolated(c) for c in commands), commands
    report = _doctor(hk, "claude-code")
    assert not [line for line in report["missing"] if "without -I" in line], report["missing"]
    assert runs_unisolated(f"{sys.executable} -m engine.cli hook") and runs_unisolated("/venv/bin/engine-hook")
    assert not runs_unisolated(f"{sys.executable} -I -m engine.cli hook")
    assert not runs_unisolated("python -m engine.cli hook --verbose"), "not a command of the engine's"


def test_a_hook_of_the_engines_shape_whose_program_is_not_there_is_not_installed(hk):
    """An older entry whose program is not there (`/gone/bin/engine hook`)
    counted as the engine's, so doctor called the hooks installed and asked
    for the folder's trust, for a hook that runs nothing; in a cloned
    repository's settings, a file put at that path later would run in the
    engine's place.  doctor counts it not installed, names it and asks no
    trust for it; install writes the engine's own in its place."""
    gone = hk.root / "gone" / "bin" / "engine"
    path = _path(hk, "claude-code", "project")
    path.parent.mkdir(parents=True)
    group = {"hooks": [{"type": "command", "command": f"{gone} hook", "timeout": 10}]}
    path.write_text(json.dumps({"hooks": {event: [group] for event in ("SessionStart", "UserPromptSubmit")}}))
    report = _doctor(hk, "claude-code")
    project = next(s for s in report["hooks"] if s["scope"] == "project")
    assert project["installed"] == [] and project["trust"] is None, project
    assert project["gone"] == [{"program": str(gone), "events": ["SessionStart", "UserPromptSubmit"]}], project
    lines = [line for line in report["missing"] if "which is not there" in line]
    assert len(lines) == 1 and str(gone) in lines[0] and "--project" in lines[0], report["missing"]
    assert _engine(hk, "install", "--agent", "claude-code", "--project").returncode == 0
    assert str(gone) not in path.read_text()
    report = _doctor(hk, "claude-code")
    project = next(s for s in report["hooks"] if s["scope"] == "project")
    assert project["gone"] == [] and "SessionStart" in project["installed"], project
