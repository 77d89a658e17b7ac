"""A hook never breaks the agent: whatever goes wrong, `engine hook` exits 0,
prints nothing the agent would misread (nothing, or one valid JSON object),
and writes one line to its log (when the log can be written)."""

import json
import os

import pytest

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture


def _one_log_line(hk, *words):
    lines = hk.log_lines()
    assert len(lines) == 1, "expected exactly one hook-log line, got:\n" + "\n".join(lines)
    for w in words:
        assert w.lower() in lines[0].lower(), f"{w!r} not in log line {lines[0]!r}"
    return lines[0]


def _clean(run):
    run.assert_ok()
    assert run.stderr == "", f"a hook says nothing on stderr either\n{run}"
    return run


@pytest.mark.parametrize("raw", [
    b'{"session_id": "abc", "hook_event_name": "UserPr',
    b"not json at all",
    b"\xff\xfe\x00garbage",
    b"[1, 2, 3]",
    b'"UserPromptSubmit"',
    b"null",
], ids=["truncated", "text", "binary", "array", "string", "null"])
def test_broken_stdin(hk, raw):
    _clean(hk.hook(raw)).assert_silent()
    _one_log_line(hk)


@pytest.mark.parametrize("raw", [b"", b"  \n\t\n"], ids=["empty", "whitespace"])
def test_empty_stdin(hk, raw):
    _clean(hk.hook(raw)).assert_silent()
    _one_log_line(hk)


def test_json_without_hook_event_name(hk):
    ev = hk.prompt(1)
    del ev["hook_event_name"]
    _clean(hk.hook(ev)).assert_silent()
    _one_log_line(hk, "hook_event_name")
    assert hk.session_files() == [], "an event without a name is not counted"


def test_hook_event_name_not_a_string(hk):
    ev = hk.prompt(1)
    ev["hook_event_name"] = 42
    _clean(hk.hook(ev)).assert_silent()
    _one_log_line(hk)


def test_unknown_event_name(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    _clean(hk.hook(hk.event("NoSuchEvent"))).assert_silent()
    _one_log_line(hk, "NoSuchEvent")


@pytest.mark.parametrize("name", ["PreToolUse", "PostToolUse", "Stop", "Notification"])
def test_known_event_without_handlers_is_quiet(hk, name):
    """Events the agent sends but the profile has no handler for: not an error,
    no log line (they come with every tool call)."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    _clean(hk.hook(hk.event(name, trigger="auto", message="x"))).assert_silent()
    assert hk.log_lines() == []


def test_missing_session_id(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    ev = hk.prompt(1)
    del ev["session_id"]
    _clean(hk.hook(ev))
    _one_log_line(hk, "session_id")
    # a compaction without session id still re-injects (no state needed)
    ev = hk.event("SessionStart", source="compact")
    del ev["session_id"]
    run = _clean(hk.hook(ev))
    assert "ALPHA" in (run.context or ""), str(run)


def test_missing_cwd_and_transcript(hk):
    ev = {"session_id": hk.session, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}
    _clean(hk.hook(ev)).assert_silent()
    assert hk.file_turn() == 1


def test_rule_file_not_utf8(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    hk.rule("latin1.md", "# Caf\xe9\nMarker LATIN: cr\xe8me br\xfbl\xe9e.\n".encode("latin-1"))
    hk.rule("z.md", "# Z\nMarker ZULU.\n", where="global")
    run = _clean(hk.hook(hk.event("SessionStart", source="compact")))
    ctx = run.context or ""
    assert "ALPHA" in ctx and "ZULU" in ctx, str(run)
    assert "LATIN" not in ctx
    _one_log_line(hk, "latin1.md")


def test_rule_file_that_is_a_dangling_symlink(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    os.symlink(hk.root / "gone" / "shared.md", hk.project_rules / "shared.md")
    run = _clean(hk.hook(hk.event("SessionStart", source="compact")))
    assert "ALPHA" in (run.context or ""), str(run)
    _one_log_line(hk, "shared.md")


def test_rules_dir_is_a_regular_file(hk):
    (hk.project / ".claude").mkdir(parents=True)
    (hk.project / ".claude" / "rules").write_text("not a folder\n")
    hk.rule("g.md", "# G\nMarker GLOBAL.\n", where="global")
    run = _clean(hk.hook(hk.event("SessionStart", source="compact")))
    assert "GLOBAL" in (run.context or ""), "the other rules folder is still read"
    _one_log_line(hk, "rules")


def test_rules_dir_is_a_dangling_symlink(hk):
    (hk.project / ".claude").mkdir(parents=True)
    os.symlink(hk.root / "nowhere", hk.project / ".claude" / "rules")
    _clean(hk.hook(hk.event("SessionStart", source="compact")))
    _one_log_line(hk, "rules")


def test_no_rules_dir_at_all(hk):
    """Nothing to re-inject after a compaction: no output (effort high: no
    effort policy either), and one log line saying why (so a user wondering
    where the refresh went can find out)."""
    high = shared_profile(profile_text(effort="high"))
    _clean(hk.hook(hk.event("SessionStart", source="compact"), profile=high)).assert_silent()
    _one_log_line(hk)


def test_state_folder_cannot_be_written(hk):
    """ENGINE_STATE_DIR below a regular file (root ignores chmod): no state,
    no log, and still exit 0 with nothing misleading on stdout."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    blocker = hk.root / "blocker"
    blocker.write_text("a file, not a folder\n")
    env = {"ENGINE_STATE_DIR": str(blocker / "state")}
    for ev in (hk.event("SessionStart", source="startup"), hk.prompt(1), hk.prompt(2),
               hk.event("SessionStart", source="compact"), hk.event("PreToolUse"), hk.event("SessionEnd")):
        _clean(hk.hook(ev, env=env))
    assert blocker.read_text() == "a file, not a folder\n"


def test_cache_folder_cannot_be_written(hk):
    """The compiled-profile cache is an optimisation: without it the hook
    still works (slower)."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    blocker = hk.root / "cache-blocker"
    blocker.write_text("x")
    env = {"ENGINE_CACHE_DIR": str(blocker / "cache")}
    _clean(hk.hook(hk.prompt(1), env=env)).assert_silent()
    run = _clean(hk.hook(hk.event("SessionStart", source="compact"), env=env))
    assert "ALPHA" in (run.context or ""), str(run)
    assert hk.file_turn() == 1
    assert hk.log_lines() == []


@pytest.mark.parametrize("garbage", ["{\"turn\": 5", "null", "[1, 2]", "\"text\"", ""],
                         ids=["truncated", "null", "array", "string", "empty"])
def test_corrupt_state_file_starts_the_count_again(hk, garbage):
    hk.hook(hk.prompt(1)).assert_silent()
    (path,) = hk.session_files()
    path.write_text(garbage)
    _clean(hk.hook(hk.prompt(2))).assert_silent()
    assert hk.file_turn() == 1, "a torn or foreign state file: the session counts from 1 again"
    _clean(hk.hook(hk.prompt(3))).assert_silent()
    assert hk.file_turn() == 2


def test_profile_that_does_not_exist(hk):
    missing = hk.root / "no-such-profile.yaml"
    _clean(hk.hook(hk.prompt(1), profile=missing)).assert_silent()
    _one_log_line(hk, "no-such-profile.yaml")


def test_profile_name_that_does_not_exist(hk):
    _clean(hk.hook(hk.prompt(1), profile="no-such-builtin")).assert_silent()
    _one_log_line(hk, "no-such-builtin")


def test_profile_that_is_invalid(hk):
    bad = hk.root / "bad.yaml"
    bad.write_text(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": -3}]}))
    _clean(hk.hook(hk.prompt(1), profile=bad)).assert_silent()
    _one_log_line(hk, "bad.yaml")


def test_profile_with_broken_template_does_not_break_the_agent(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    bad = hk.root / "tpl.yaml"
    bad.write_text(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1,
                                                       "template": "[Rules {{ turn }]"}]}))
    _clean(hk.hook(hk.prompt(1), profile=bad)).assert_silent()
    _one_log_line(hk)


def test_env_profile_that_does_not_exist(hk):
    _clean(hk.hook(hk.prompt(1), env={"ENGINE_PROFILE": str(hk.root / "env-missing.yaml")})).assert_silent()
    _one_log_line(hk, "env-missing.yaml")


def test_huge_prompt_and_unicode(hk):
    ev = hk.prompt(1)
    ev["prompt"] = "é中文🙂 " * 200000
    _clean(hk.hook(ev)).assert_silent()
    assert hk.file_turn() == 1


def test_output_is_one_json_object_with_the_event_name(hk):
    hk.rule("a.md", "# A\nMarker ALPHA: quotes \" and \\ backslashes and </script> and \u2028 separators.\n")
    run = _clean(hk.hook(hk.event("SessionStart", source="compact")))
    text = run.stdout
    assert "\n" not in text.rstrip("\n"), "one JSON object on one line"
    data = json.loads(text)
    assert isinstance(data, dict) and "hookSpecificOutput" in data
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "ALPHA: quotes \" and \\ backslashes" in data["hookSpecificOutput"]["additionalContext"]


def test_a_removed_project_folder_still_counts_and_brings_the_users_rules(hk):
    """A hook started in a folder since removed, the event's folder with it:
    it still counts the prompt and brings the user's own rules, with the
    user's own profile; nothing is logged as an internal error."""
    import subprocess
    import sys

    hk.rule("mine.md", "# Mine\nMarker USERRULE: keep commits small.\n", where="global")
    gone = hk.project / "gone"
    code = "import sys; from engine.cli.main import main; sys.exit(main(['hook']))"
    outs = []
    for event in (hk.prompt(1, cwd=str(gone)), hk.event("SessionStart", source="compact", cwd=str(gone))):
        gone.mkdir()
        proc = subprocess.run(["sh", "-c", 'cd "$1" && rmdir "$1" && exec "$0" -c "$2"', sys.executable, str(gone), code],
                              input=json.dumps(event), capture_output=True, text=True, env=hk.env(), timeout=60)
        assert proc.returncode == 0 and proc.stderr == "", proc
        outs.append(proc.stdout)
    assert hk.file_turn() == 1, hk.log_lines()
    assert "USERRULE" in json.loads(outs[1])["hookSpecificOutput"]["additionalContext"], (outs, hk.log_lines())
    assert not [l for l in hk.log_lines() if "internal error" in l], hk.log_lines()


def test_a_nul_in_the_events_folder_or_transcript_is_no_path(hk):
    """A cwd holding a NUL (valid in JSON, in no path) failed every event of
    the session: 'internal error: ValueError: embedded null byte' in the
    hook log, the prompt not counted, the rules not brought back after a
    compaction.  Such a cwd or transcript_path is no path: the event runs
    as one that names none (the hook's own folder), and logs nothing."""
    hk.rule("a.md", "# A\nMarker RULEMARK.\n")
    bad = {"cwd": str(hk.project) + "\0x", "transcript_path": str(hk.transcript) + "\0x"}
    for ev in ("PostToolUse", "Stop"):
        _clean(hk.hook(hk.event(ev, **bad))).assert_ok()
    _clean(hk.hook(hk.prompt(1, **bad))).assert_silent()
    back = _clean(hk.hook(hk.event("SessionStart", source="compact", **bad)))
    assert "RULEMARK" in (back.context or ""), str(back)
    assert hk.file_turn() == 1 and hk.log_lines() == [], hk.log_lines()


def test_lone_surrogates_in_the_session_the_folder_and_the_command(hk):
    """JSON may escape half a surrogate pair, and a folder's name may hold
    bytes that are not UTF-8 (Python reads them as lone surrogates).  Every
    event of a session whose id, folder and command hold such text is
    handled: nothing fails, the prompt is counted, a large output is cached."""
    folder = os.path.join(str(hk.project), "d\udc80")
    os.mkdir(os.fsencode(folder))
    session, command = "s\ud800x", "find . -name '\ud800'"
    hk.write_transcript([{"type": "user", "version": "2.1.330", "sessionId": session,
                          "message": {"role": "user", "content": "go"}}])
    tool = {"tool_input": {"command": command}, "session": session, "cwd": folder}
    events = [hk.event("SessionStart", session=session, cwd=folder),
              hk.prompt(1, session=session, cwd=folder),
              hk.event("PreToolUse", permission_mode="bypassPermissions", **tool),
              hk.event("PostToolUse", tool_response={"stdout": "line of output\n" * 2000, "stderr": "",
                                                     "interrupted": False, "isImage": False}, **tool),
              hk.event("Stop", session=session, cwd=folder)]
    runs = [_clean(hk.hook(ev, env={"CLAUDE_PROJECT_DIR": folder})) for ev in events]
    assert not [l for l in hk.log_lines() if " failed: " in l or "internal error" in l], hk.log_lines()
    assert hk.file_turn("s_x-") == 1  # the state file's name: the id made safe, then its digest
    stub = runs[3].json["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    assert stub.startswith("[CCM_CACHED]"), stub  # the output went into the content cache
