"""Finding 7 of issue 14: the PreToolUse rewrite read permission rules from
the event's `cwd` and `~/.claude` only, and answered `allow` from them.
Rules are now read as the agent reads them (engine/agents/permissions.py,
the files of the agent's YAML): managed, `$CLAUDE_CONFIG_DIR`, the project
root `$CLAUDE_PROJECT_DIR`.  In
each layout of the finding the rewrite gives no `allow` (and no rewrite)."""

import copy
import json
import os

import pytest

from engine.agents import permissions, table
from engine.agents.spec import Agent
from engine.ccm import config
from engine.ccm.intercept import decide
from engine.hooks.dispatch import neutral_event
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture


@pytest.fixture(scope="module")
def settings():
    return config.load(config.builtin_path())


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A project root with a `src` subfolder, HOME and a config folder of
    its own; no managed settings."""
    home, proj = tmp_path / "home", tmp_path / "root"
    (home / ".claude").mkdir(parents=True)
    (proj / "src").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(proj))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    # the agent's managed settings, here in the test's folder
    data = copy.deepcopy(table.agents()["claude-code"])
    files = [f for f in data["permissions"]["files"] if not f.get("path", f.get("dir", "")).startswith("/")]
    data["permissions"]["files"] = [{"path": str(tmp_path / "managed.json")}, {"dir": str(tmp_path / "managed.d")}] + files
    monkeypatch.setitem(table.agents(), "claude-code", data)
    return proj


def write(path, **perms):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": perms}))


def payload(cmd, cwd, mode="default"):
    return {"session_id": "s1", "transcript_path": "", "cwd": str(cwd), "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "toolu_1", "permission_mode": mode}


def event(cmd, cwd, mode="default"):
    return neutral_event(payload(cmd, cwd, mode))


def agent():
    return Agent(table.agents()["claude-code"])


def no_allow(d):
    return d is None or d.get("decision") != "allow"


def test_a_after_cd_src_the_roots_ask_rule_still_counts(root, settings, tmp_path):
    """Old: cwd=root/src has no .claude, ~/.claude allows find: `allow`."""
    write(tmp_path / "home" / ".claude" / "settings.json", allow=["Bash(find:*)"])
    write(root / ".claude" / "settings.json", ask=["Bash(find:*)"])
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        assert decide(event("find . -delete", root / "src", mode), settings) is None, mode


def test_b_a_subfolders_settings_allow_nothing(root, settings):
    """Old: vendor/evil/.claude/settings.json, read as the cwd's, allowed `find / -delete`."""
    evil = root / "vendor" / "evil"
    write(evil / ".claude" / "settings.json", allow=["Bash(find:*)"])
    d = decide(event("find / -delete", evil), settings)
    assert no_allow(d) and d is None


def test_c_user_settings_in_claude_config_dir_are_honoured(root, settings, tmp_path, monkeypatch):
    """Old: ~/.claude read, $CLAUDE_CONFIG_DIR ignored: the user's ask rule was lost."""
    cfg = tmp_path / "cfg"
    write(cfg / "settings.json", ask=["Bash(find:*)"])
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(cfg))
    write(root / ".claude" / "settings.json", allow=["Bash(find:*)"])
    for mode in ("default", "bypassPermissions"):
        assert decide(event("find . -delete", root, mode), settings) is None, mode


def test_an_allow_rule_at_the_project_root_still_proves_from_a_subfolder(root, settings):
    """The rewrite still happens where it is proved (cwd moved by `cd src`)."""
    write(root / ".claude" / "settings.local.json", allow=["Bash(find:*)"])
    d = decide(event("find . -name x", root / "src"), settings)
    assert d["decision"] == "allow" and " cache run " in d["input"]["command"]


@pytest.mark.parametrize("layout", ["no_project_dir", "relative_project_dir", "unknown_bash_rule",
                                    "wrapped_command", "user_local_ask", "managed_deny", "bad_permissions"])
def test_any_doubt_gives_no_decision_and_no_rewrite(root, settings, tmp_path, monkeypatch, layout):
    write(tmp_path / "home" / ".claude" / "settings.json", allow=["Bash(find:*)", "Bash(timeout:*)"])
    cmd = "find . -name x"
    if layout == "no_project_dir":
        monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    elif layout == "relative_project_dir":
        monkeypatch.setenv("CLAUDE_PROJECT_DIR", "root")
    elif layout == "unknown_bash_rule":
        write(root / ".claude" / "settings.json", deny=["Bash[find]"])
    elif layout == "wrapped_command":
        write(root / ".claude" / "settings.json", ask=["Bash(find:*)"])
        cmd = "timeout 5 find . -delete"
    elif layout == "user_local_ask":
        write(tmp_path / "home" / ".claude" / "settings.local.json", ask=["Bash(find:*)"])
    elif layout == "managed_deny":
        write(tmp_path / "managed.d" / "10-policy.json", deny=["Bash(find:*)"])
    elif layout == "bad_permissions":
        (root / ".claude").mkdir()
        (root / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"ask": "Bash(find:*)"}}))
    for mode in ("default", "bypassPermissions"):
        assert decide(event(cmd, root, mode), settings) is None, (layout, mode)
    # the same question asked of the permission reader itself (a wrapped
    # command is neither listed nor learned, so decide() alone would not say)
    assert permissions.runs_without_asking(agent(), cmd, "rules") != "yes", layout


@pytest.mark.parametrize("layout", ["dev_zero", "fifo", "over_the_cap"])
def test_a_project_settings_file_that_is_no_small_regular_file_is_doubt_read_within_the_cap(root, layout,
                                                                                             monkeypatch):
    """A cloned project's .claude/settings.json linked to /dev/zero, a FIFO
    with no writer, or one byte over hooks.max_agent_settings_bytes: a
    doubt at once, with at most the cap read (the hook did read /dev/zero
    until its deadline, gigabytes)."""
    from engine.core import settings as engine_settings

    cap = 4096
    bounds = dict(engine_settings.hook_bounds(), max_agent_settings_bytes=cap)
    monkeypatch.setattr(engine_settings, "hook_bounds", lambda: bounds)
    target = root / ".claude" / "settings.json"
    target.parent.mkdir()
    if layout == "dev_zero":
        target.symlink_to("/dev/zero")
    elif layout == "fifo":
        os.mkfifo(target)
    else:
        body = json.dumps({"permissions": {"allow": ["Bash(find:*)"]}})
        target.write_text(body + " " * (cap + 1 - len(body)))
    reads = []
    real_fdopen = os.fdopen

    def fdopen(fd, *args, **kwargs):
        fh = real_fdopen(fd, *args, **kwargs)
        real_read = fh.read
        fh.read = lambda n=-1: reads.append(n) or real_read(n)
        return fh

    monkeypatch.setattr(permissions.os, "fdopen", fdopen)
    assert permissions.runs_without_asking(agent(), "find . -name x", "rules") != "yes"
    assert all(0 <= n <= cap + 1 for n in reads), reads


def test_user_local_settings_never_prove_an_allow(root, settings, tmp_path):
    """Whether the agent reads ~/.claude/settings.local.json is not certain:
    its allow rules prove nothing."""
    write(tmp_path / "home" / ".claude" / "settings.local.json", allow=["Bash(find:*)"])
    assert decide(event("find . -name x", root), settings) is None


def test_hook_process_reads_the_project_root_from_its_environment(hk):
    """End to end: a real hook process, the agent's env ($CLAUDE_PROJECT_DIR,
    $CLAUDE_CONFIG_DIR), the event's cwd in a subfolder: no allow, no rewrite."""
    src = hk.project / "src"
    src.mkdir()
    cfg = hk.root / "cfg"
    write(cfg / "settings.json", allow=["Bash(find:*)"])
    write(hk.project / ".claude" / "settings.json", ask=["Bash(find:*)"])
    env = {"CLAUDE_PROJECT_DIR": hk.project, "CLAUDE_CONFIG_DIR": cfg}
    ev = payload("find . -delete", src)
    ev["transcript_path"] = str(hk.transcript)
    hk.hook(ev, env=env).assert_silent()
    # the same rules without the ask rule: proved, so rewritten with allow
    write(hk.project / ".claude" / "settings.json", allow=["Bash(git log:*)"])
    out = hk.hook(ev, env=env).assert_ok().json["hookSpecificOutput"]
    assert out["permissionDecision"] == "allow" and " cache run " in out["updatedInput"]["command"]
    assert os.path.isdir(cfg)


# Characters Python's str.split() splits on and bash keeps inside a word.
BASH_WORD_CHARS = ["\x1c", "\x1d", "\x1e", "\x1f", "\x0b", "\x0c", "\x85", "\xa0", "\u2000", "\u2005", "\u200a",
                   "\u2028", "\u2029", "\u3000"]


@pytest.mark.parametrize("ch", BASH_WORD_CHARS)
def test_a_character_bash_keeps_in_a_word_proves_nothing_and_is_never_rewritten(root, settings, ch):
    """Audit: `./run.sh<U+001C>test` is one word to bash (a file the repository
    ships), two to str.split(): it matched `Bash(./run.sh test)` and was
    answered `allow` and rewritten.  Only space and tab split words now; any
    other whitespace or control character is doubt: no allow rule proves
    it, so no allow and no rewrite, and nothing is learned.  (A mode that
    runs every command still has it wrapped: that widens nothing.)"""
    from engine.ccm.learned import pattern_of

    write(root / ".claude" / "settings.json", allow=["Bash(find . -name x)", "Bash(find:*)"])
    hostile = f"find{ch}. -name x"
    assert decide(event(hostile, root), settings) is None
    assert permissions.runs_without_asking(agent(), hostile, "rules") == "unsure"
    assert not permissions.proves("find . -name x", hostile) and not permissions.proves(None, hostile)
    assert not permissions.proves(f"find .{ch}-name x", "find . -name x"), "such a rule proves nothing either"
    assert pattern_of(hostile, 2) == ""
    # space and tab still separate words, as in bash
    assert decide(event("find .\t-name  x", root), settings)["decision"] == "allow"
