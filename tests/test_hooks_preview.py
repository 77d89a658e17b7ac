"""`engine refresh preview`: what the refresh handlers would inject at turn N,
with --cwd and --profile; --text shows the text the hook would inject."""

import re

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture


def _world(hk):
    hk.rule("late.md", "---\npriority: 8\n---\nMarker PLATE: late rule.\n", where="global")
    hk.rule("early.md", "---\npriority: 2\n---\nMarker PEARLY: run tests in order to catch bugs.\n")
    hk.rule("middle.md", "Marker PMIDDLE: a middle rule.\n", where="global")
    hk.rule("huge.md", "# Huge\n" + "".join(f"PHUGE line {i:04d}: zebra quartz lantern orbit.\n" for i in range(250)))
    hk.claude_md("Marker PCLAUDE: project notes.\n")


def _preview(hk, *args):
    # run from an unrelated folder: --cwd names the project
    run = hk.engine("refresh", "preview", "--cwd", hk.project, *args, cwd=hk.root)
    assert run.returncode == 0, str(run)
    assert "Traceback" not in run.stderr, str(run)
    return run.stdout


def test_preview_at_a_due_turn_lists_order_and_omissions(hk):
    _world(hk)
    out = _preview(hk, "--turn", "20")
    paths = [hk.project_rules / "early.md", hk.global_rules / "middle.md", hk.global_rules / "late.md",
             hk.project_rules / "huge.md"]
    for p in paths:
        assert str(p) in out, f"{p} missing from the preview:\n{out}"
    # the user's own first, then the project's, each by priority
    assert sorted(paths, key=lambda p: out.index(str(p))) == [
        hk.global_rules / "middle.md", hk.global_rules / "late.md", hk.project_rules / "early.md",
        hk.project_rules / "huge.md"]
    assert " yours " in next(l for l in out.splitlines() if l.rstrip().endswith("middle.md"))
    assert " project " in next(l for l in out.splitlines() if l.rstrip().endswith("early.md"))
    huge_line = next(l for l in out.splitlines() if str(hk.project_rules / "huge.md") in l)
    assert "OMITTED" in huge_line.upper()
    for name in ("early.md", "middle.md", "late.md"):
        line = next(l for l in out.splitlines() if l.rstrip().endswith(name))
        assert "OMITTED" not in line.upper(), line
    early = next(l for l in out.splitlines() if l.rstrip().endswith("early.md"))
    assert "2" in early.split("early.md")[0], f"priority not shown: {early}"
    # CLAUDE.md is due at 40, not at 20
    assert str(hk.project / "CLAUDE.md") not in out
    # no text without --text
    assert "PEARLY" not in out


def test_preview_at_a_turn_that_is_not_due(hk):
    _world(hk)
    out = _preview(hk, "--turn", "7")
    assert "not due" in out.lower(), out
    assert "early.md" not in out and "huge.md" not in out
    out = _preview(hk, "--turn", "7", "--text")
    assert "PEARLY" not in out


def test_preview_turn_40_includes_claude_md(hk):
    _world(hk)
    out = _preview(hk, "--turn", "40")
    assert str(hk.project / "CLAUDE.md") in out
    assert str(hk.project_rules / "early.md") in out


def test_preview_text_is_what_the_hook_injects(hk):
    _world(hk)
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 2}]}))
    out = _preview(hk, "--turn", "2", "--text", "--profile", prof)
    assert "PEARLY" in out and "PMIDDLE" in out and "PLATE" in out
    assert "in order to" not in out, "the preview shows the compressed text"
    assert "huge.md" in out
    hk.hook(hk.prompt(1), profile=prof).assert_silent()
    run = hk.hook(hk.prompt(2), profile=prof)
    ctx = run.context
    assert ctx, str(run)
    # each delivery has an id of its own (engine/hooks/delivery.py)
    ids = re.compile(r"(\[rules-engine delivery )[0-9a-f]{16}\]")
    out, ctx = ids.sub(r"\1ID]", out), ids.sub(r"\1ID]", ctx)
    assert "[rules-engine delivery ID]" in ctx
    lines = [l.strip() for l in out.splitlines()]
    pos = 0
    for line in (l.strip() for l in ctx.splitlines() if l.strip()):
        assert line in lines[pos:], f"hook line {line!r} not in the preview (in order)\n{out}"
        pos = lines.index(line, pos) + 1
    # and with the same profile, turn 3 is not due
    out3 = _preview(hk, "--turn", "3", "--profile", prof)
    assert "early.md" not in out3 and "not due" in out3.lower()


def test_preview_relative_cwd(hk):
    _world(hk)
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 5}]}))
    run = hk.engine("refresh", "preview", "--turn", "5", "--cwd", "project", "--profile", prof, cwd=hk.root)
    assert run.returncode == 0, str(run)
    assert str(hk.project_rules / "early.md") in run.stdout
    run = hk.engine("refresh", "preview", "--turn", "21", "--cwd", "project", "--profile", prof, cwd=hk.root)
    assert run.returncode == 0, str(run)
    assert "early.md" not in run.stdout


def test_preview_relative_profile_path_is_relative_to_the_working_directory(hk):
    """A path typed on the command line is relative to where it was typed,
    not to --cwd (the project being previewed)."""
    _world(hk)
    (hk.root / "prof.yaml").write_text(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 5}]}))
    run = hk.engine("refresh", "preview", "--turn", "5", "--cwd", "project", "--profile", "prof.yaml", cwd=hk.root)
    assert run.returncode == 0, str(run)
    assert "early.md" in run.stdout


def test_preview_with_a_missing_profile_is_a_user_error(hk):
    run = hk.engine("refresh", "preview", "--turn", "20", "--cwd", hk.project, "--profile", hk.root / "nope.yaml")
    assert run.returncode == 1, str(run)
    assert "Traceback" not in run.stderr
    assert "nope.yaml" in run.stderr


def test_a_priority_that_is_not_a_number_is_reported(hk):
    hk.rule("words.md", "---\npriority: high\n---\nMarker PWORDS: a rule.\n")
    hk.rule("first.md", "---\npriority: 1\n---\nMarker PFIRST: a rule.\n")
    out = _preview(hk, "--turn", "20")
    notes = [line for line in out.splitlines() if line.startswith("note:") and "words.md" in line]
    assert notes and "high" in notes[0] and "5" in notes[0], out
    line = next(l for l in out.splitlines() if l.rstrip().endswith("words.md"))
    assert "priority 5" in line
    hk.hook(hk.event("SessionStart", source="compact")).assert_ok()
    assert any("words.md" in l and "high" in l for l in hk.log_lines()), hk.log_lines()


def test_a_priority_of_thousands_of_digits_is_the_default_not_a_failed_handler(hk):
    """Audit: int() of a 4,301-digit priority raised (Python's digit limit):
    the rules handler failed, the user's rules were never delivered, and
    preview printed a traceback.  Now it is the default, with the note."""
    hk.rule("huge.md", "---\npriority: " + "9" * 4301 + "\n---\nMarker PHUGE: a rule.\n")
    hk.rule("first.md", "---\npriority: 1\n---\nMarker PFIRST: a rule.\n")
    out = _preview(hk, "--turn", "20")
    notes = [line for line in out.splitlines() if line.startswith("note:") and "huge.md" in line]
    assert notes and "4301 digits" in notes[0] and "default 5" in notes[0], out
    assert "priority 5" in next(l for l in out.splitlines() if l.rstrip().endswith("huge.md"))
    run = hk.hook(hk.event("SessionStart", source="compact")).assert_ok()
    assert "PHUGE" in run.stdout and "PFIRST" in run.stdout, run.stdout
    assert any("huge.md" in l and "4301 digits" in l for l in hk.log_lines()), hk.log_lines()


def test_a_cwd_that_is_no_folder_is_a_user_error(hk):
    """A mistyped --cwd previewed a project with no rules ('no files found',
    exit 0); cache run's said it could not be written to."""
    _world(hk)
    (hk.root / "a-file").write_text("x\n")
    for command in (("refresh", "preview"), ("memory", "preview", "session_start"), ("cache", "run")):
        for where, what in (("projec", "no such folder"), ("a-file", "this is not a folder")):
            args = (*command, "--cwd", where) + (("--", "true") if command[0] == "cache" else ())
            run = hk.engine(*args, cwd=hk.root)
            assert run.returncode == 1 and run.stdout == "", str(run)
            assert run.stderr.splitlines() == [f"engine: argument --cwd: {where!r}: {what}; give the project's folder "
                                               f"(see `engine {' '.join(command[:2])} --help`)"], str(run)


def test_memory_preview_refuses_an_input_that_is_no_object_and_a_missing_transcript(hk):
    """A tool input that is JSON but no object ('"rm -rf /"', [1]) was
    previewed as an input holding nothing, and a missing --transcript as no
    context fill: '(nothing printed)', exit 0."""
    _world(hk)
    for value in ('"rm -rf /"', "[1]", "null"):
        run = hk.engine("memory", "preview", "PreToolUse", "--input", value, cwd=hk.root)
        assert run.returncode == 1 and run.stdout == "", str(run)
        assert run.stderr.splitlines() == ["""engine: --input is JSON but not an object; give the tool input as a JSON """
                                           """object, e.g. '{"command": "ls"}'"""], str(run)
    run = hk.engine("memory", "preview", "Stop", "--transcript", "gone.jsonl", cwd=hk.root)
    assert run.returncode == 1 and run.stdout == "", str(run)
    assert run.stderr.splitlines() == ["gone.jsonl: no transcript file here; give the path of a session's transcript "
                                       "file (.jsonl)"], str(run)
