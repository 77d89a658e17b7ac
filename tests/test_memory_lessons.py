"""Tool memory keeps lessons, not occurrences (issue 15, finding 8).

Failures of one tool whose errors differ only in paths, numbers, ids, line
and column positions, quoted file names or times are one entry (the error
signature, `hooks.memory.signature`), with a count and a few example inputs;
different errors stay apart.  The PreToolUse banner shows only lessons some
other session met: the failure this session just had is in its context
already, and is not a lesson "from past sessions".  (That a wrapped command
is recorded as the user's command is tested in tests/test_memory_project.py.)
"""

import json
from pathlib import Path

import pytest
import yaml

from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

REPO = Path(__file__).resolve().parent.parent
PROJECT = str(REPO)  # a project folder that exists: build() remembers nothing for one that is gone
NOT_READ = "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>"


def _memory():
    return yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text())["hooks"]["memory"]


def _write_failure(hk, path, tid, session=None):
    ev = hk.event("PostToolUseFailure", session=session, tool_name="Write", tool_use_id=tid,
                  tool_input={"file_path": path, "content": "x = 1\n"}, error=NOT_READ)
    hk.hook(ev).assert_silent()


def _listed(hk, tool=None):
    run = hk.engine("memory", "list", "--json", *(("--tool", tool) if tool else ()))
    assert run.returncode == 0, str(run)
    return json.loads(run.stdout)


def _banner(hk, session, tool="Write"):
    return hk.hook(hk.event("PreToolUse", session=session, tool_name=tool, tool_input={"file_path": "/p/new.py"}))


def test_the_same_error_on_twelve_files_is_one_entry_counted_twelve_times(hk):
    files = [str(hk.project / "src" / f"module_{i}.py") for i in range(12)]
    for i, f in enumerate(files):
        _write_failure(hk, f, f"toolu_w{i:02d}")
    (entry,) = _listed(hk)
    assert entry["tool"] == "Write" and entry["count"] == 12, entry
    assert entry["error"] == "File has not been read yet. Read it first before writing to it."
    # the lesson still shows concrete cases: the latest different inputs, bounded in YAML
    kept = _memory()["examples_kept"]
    assert entry["input"] == files[-1] and entry["examples"] == files[-kept:], entry


@pytest.mark.parametrize("first,second", [
    ("ls: cannot access '/a/b': No such file or directory", "ls: cannot access '/c/d': No such file or directory"),
    ("ls: /a/b: No such file or directory", "ls: ./c/d: No such file or directory"),
    ("src/app.py:12:5: E999 SyntaxError: invalid syntax", "lib/util.py:340:1: E999 SyntaxError: invalid syntax"),
    ('File "/srv/a.py", line 7, in main', 'File "/srv/b/c.py", line 1203, in main'),
    ("fatal: bad object 3f2a9c1d0b7e", "fatal: bad object a81c0fe"),
    ("session 123e4567-e89b-12d3-a456-426614174000 not found", "session 9b2f0c4e-0d1a-4c55-8e7f-0a1b2c3d4e5f not found"),
    ("2026-01-02T10:11:12Z timeout after 30 s", "2026-03-04 08:09:10 timeout after 120 s"),
    ("cp: cannot stat 'notes.txt': No such file", 'cp: cannot stat "report.pdf": No such file'),
])
def test_errors_differing_only_in_paths_numbers_ids_positions_or_times_are_one_entry(first, second):
    from engine.memory import record

    memory = _memory()

    def key(error, command):
        ev = {"tool_name": "Bash", "tool_input": {"command": command}, "session_id": "s"}
        return record.build(ev, f"Exit code 1\n{error}", memory, lambda t: t, PROJECT)["k"]

    assert key(first, "do one thing") == key(second, "do another")


@pytest.mark.parametrize("first,second", [
    ("bash: kubectl: command not found", "bash: helm: command not found"),
    ("ls: cannot access '/a/b': No such file or directory", "ls: cannot access '/a/b': Permission denied"),
    ("error[E0425]: cannot find value `x` in this scope", "error[E0308]: mismatched types"),
    ("python3: command not found", "python2: command not found"),
])
def test_different_errors_of_one_tool_stay_apart(first, second):
    from engine.memory import record

    memory = _memory()
    ev = {"tool_name": "Bash", "tool_input": {"command": "x"}, "session_id": "s"}
    assert record.build(ev, first, memory, lambda t: t, PROJECT)["k"] != record.build(ev, second, memory, lambda t: t, PROJECT)["k"]


def test_an_error_that_says_nothing_keeps_its_commands_apart():
    """A bare "Exit code 1" is no lesson on its own: keyed with the input's
    signature, `npm test` and `make` stay two entries, while the same
    command on another path is one."""
    from engine.memory import record

    memory = _memory()

    def key(command):
        ev = {"tool_name": "Bash", "tool_input": {"command": command}, "session_id": "s"}
        return record.build(ev, "Exit code 1", memory, lambda t: t, PROJECT)["k"]

    assert key("npm test") != key("make")
    assert key("cat /a/b.txt") == key("cat /c/d.txt")


def test_a_traceback_of_two_commands_is_two_entries():
    """`hooks.memory.generic_errors`: a traceback's first line is no lesson
    on its own; the same command's tracebacks still merge."""
    from engine.memory import record

    memory = _memory()

    def key(command):
        ev = {"tool_name": "Bash", "tool_input": {"command": command}, "session_id": "s"}
        return record.build(ev, "Exit code 1\nTraceback (most recent call last):\n  File x", memory, lambda t: t, PROJECT)["k"]

    assert key("python3 a.py") != key("pytest -q")
    assert key("python3 /x/a.py") == key("python3 /y/a.py")


def test_bash_failures_on_two_paths_merge_through_the_hook(hk):
    for i, path in enumerate(("/a/b", "/c/d")):
        ev = hk.event("PostToolUseFailure", tool_name="Bash", tool_use_id=f"toolu_ls{i}",
                      tool_input={"command": f"ls {path}", "description": "x"},
                      error=f"Exit code 2\nls: cannot access '{path}': No such file or directory")
        hk.hook(ev).assert_silent()
    (entry,) = _listed(hk, "Bash")
    assert entry["count"] == 2 and entry["examples"] == ["ls /a/b", "ls /c/d"], entry


def test_a_failure_of_this_session_only_is_no_lesson_for_it(hk):
    _write_failure(hk, "/p/a.py", "toolu_1", session="session-a")
    _banner(hk, "session-a").assert_silent()


def test_a_lesson_recorded_in_session_a_is_shown_in_session_b_merged(hk):
    for i in range(3):
        _write_failure(hk, f"/p/f{i}.py", f"toolu_{i}", session="session-a")
    run = _banner(hk, "session-b")
    ctx = run.context
    assert ctx is not None, str(run)
    assert "errors recorded in other sessions" in ctx and "past sessions" not in ctx, ctx
    lesson = [l for l in ctx.splitlines() if "File has not been read yet" in l]
    assert len(lesson) == 1 and "(3 times)" in lesson[0], ctx
    assert '"/p/f2.py", "/p/f1.py", "/p/f0.py"' in ctx, ctx
    _banner(hk, "session-b").assert_silent()  # once per tool per session, as before


def test_a_lesson_met_here_and_in_an_earlier_session_is_shown_with_its_whole_count(hk):
    _write_failure(hk, "/p/old.py", "toolu_old", session="session-a")
    _write_failure(hk, "/p/new.py", "toolu_new", session="session-b")
    ctx = _banner(hk, "session-b").context
    assert ctx is not None and "File has not been read yet" in ctx and "(2 times)" in ctx, ctx


def test_validate_names_a_bad_signature_pattern(hk):
    prof = hk.root / "badsig.yaml"
    prof.write_text("kind: profile\nname: badsig\nextends: default\nhooks:\n  memory:\n"
                    "    signature: [{pattern: '(unclosed', replacement: x}]\n")
    run = hk.engine("validate", "--profile", str(prof), str(prof))
    assert run.returncode != 0
    out = run.stderr + run.stdout
    assert "hooks.memory.signature[0].pattern" in out and out.count("signature[0]") == 1, str(run)
    assert f"{prof}:6:27: hooks.memory.signature[0].pattern" in out, str(run)  # at the pattern itself
    assert "Traceback" not in out


def test_compaction_keeps_the_count_and_the_latest_examples(tmp_path):
    """A merged entry written back by compaction keeps its count and its
    latest `examples_kept` inputs; lines appended later add to them."""
    from engine.memory import store

    path = str(tmp_path / "m.ndjson")
    recs = [{"k": "k", "t": i, "tool": "Write", "error": "e", "input": f"/p/f{i}.py", "project": "/p", "session": "s"}
            for i in range(6)]
    store.append(path, recs[:5], max_kept=10, compact_bytes=10 ** 6)
    store.compact(path, 10, sessions_kept=5, examples_kept=2)
    assert len(Path(path).read_text().splitlines()) == 1
    store.append(path, recs[5:], max_kept=10, compact_bytes=10 ** 6)
    (entry,) = store.entries(path, examples_kept=2)
    assert entry["count"] == 6 and entry["examples"] == ["/p/f4.py", "/p/f5.py"] and entry["input"] == "/p/f5.py"
    assert (entry["first"], entry["last"]) == (0, 5)


# -- lessons only from failures (issue 23, finding 5) --------------------------

# A README the agent read: it quotes the agent's error wrapper, mid-text.
README = ("# Troubleshooting\n\nWhen the agent answers `<tool_use_error>Permission to use Deploy has been "
          "denied</tool_use_error>`, ask the admin for the deploy role.\n")


def _call(tid, tool, tool_input, content, is_error=None):
    """A tool_use line and its tool_result line, as the agent writes them."""
    result = {"type": "tool_result", "tool_use_id": tid, "content": content}
    if is_error is not None:
        result["is_error"] = is_error
    return [{"type": "assistant", "isSidechain": False, "uuid": f"a-{tid}",
             "message": {"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": tool,
                                                            "input": tool_input}]}},
            {"type": "user", "isSidechain": False, "uuid": f"u-{tid}",
             "message": {"role": "user", "content": [result]}}]


def test_a_lesson_comes_only_from_a_failure_never_from_text_a_success_read(hk):
    numbered = "".join(f"{i:6}\u2192{line}\n" for i, line in enumerate(README.splitlines(), 1))
    hk.write_transcript(
        _call("toolu_r1", "Read", {"file_path": "/p/docs/TROUBLESHOOTING.md"}, numbered, is_error=False)
        + _call("toolu_r2", "Grep", {"pattern": "tool_use_error"}, [{"type": "text", "text": README}])
        + _call("toolu_b1", "Bash", {"command": "cat NOTES"}, "notes\n<tool_use_error>quoted</tool_use_error>\n")
        # real failures: flagged, and wrapped from the start (an agent that wrote no flag)
        + _call("toolu_f1", "Read", {"file_path": "/p/missing.md"},
                "<tool_use_error>File does not exist.</tool_use_error>", is_error=True)
        + _call("toolu_f2", "Edit", {"file_path": "/p/a.py"}, "  <tool_use_error>String to replace not found in file."
                "</tool_use_error>"))
    hk.hook(hk.event("Stop")).assert_ok()
    entries = _listed(hk)
    assert sorted((e["tool"], e["error"]) for e in entries) == [
        ("Edit", "String to replace not found in file."), ("Read", "File does not exist.")], entries
    for tool in ("Grep", "Bash"):  # nothing learnt from the successes is shown later
        banner = hk.hook(hk.event("PreToolUse", session="a-later-session", tool_name=tool, tool_input={"pattern": "x"}))
        assert "TOOL MEMORY" not in (banner.context or ""), banner.context


def test_bash_failures_are_still_caught_by_exit_code_and_error_stream(hk):
    runs = [({"stdout": "", "stderr": "make: *** [all] Error 2", "exit_code": 2}, "make all"),
            ({"stdout": "", "stderr": "fatal: not a git repository (or any parent)"}, "git status"),
            ({"stdout": "<tool_use_error>not an error</tool_use_error>", "stderr": ""}, "cat quoted.txt")]
    for i, (response, command) in enumerate(runs):
        hk.hook(hk.event("PostToolUse", tool_use_id=f"toolu_x{i}", tool_input={"command": command},
                         tool_response=response)).assert_ok()
    assert sorted(e["input"] for e in _listed(hk, "Bash")) == ["git status", "make all"]


def test_the_session_report_counts_no_error_in_a_successful_result(tmp_path):
    from engine.session import build_report, load_style
    from session_fixtures import assistant, user, write

    records = [user("go"),
               assistant("m1", 1000, [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/r"}},
                                      {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/m"}}]),
               user([{"type": "tool_result", "tool_use_id": "t1", "content": README},
                     {"type": "tool_result", "tool_use_id": "t2",
                      "content": "<tool_use_error>File does not exist.</tool_use_error>"}])]
    report = build_report(str(write(tmp_path / "s.jsonl", records)), load_style())
    assert report["error_count"] == 1 and [e["message"] for e in report["errors"]] == ["File does not exist."]


# -- a damaged store line --------------------------------------------------------

DAMAGED = [{"k": "bad-sessions", "t": 5, "tool": "Write", "error": "e1", "input": "i", "sessions": 7},
           {"k": "bad-examples", "t": 6, "tool": "Write", "error": "e2", "input": "i", "examples": 3,
            "sessions": ["session-a"]},
           {"k": "bad-time", "t": 1e20, "tool": "Write", "error": "e3", "input": "i", "sessions": ["session-a"]}]


def test_a_damaged_store_line_hides_no_lesson_and_breaks_no_reader(hk):
    """A line whose sessions or examples are no list, or whose time no
    clock can show, is read as far as it can be: the banner still shows the
    tool's other lessons, `engine memory list` still lists them, and
    compaction (run by the recording hook) still keeps the store bounded."""
    _write_failure(hk, "/p/a.py", "toolu_1", session="session-a")
    path = hk.state / "tool-memory.ndjson"
    with path.open("a") as fh:
        fh.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in DAMAGED))  # as the store writes
    ctx = _banner(hk, "session-b").context
    assert ctx is not None and "File has not been read yet" in ctx, ctx
    listed = _listed(hk, "Write")
    assert {e["k"] for e in listed} >= {"bad-sessions", "bad-examples", "bad-time"}, listed
    run = hk.engine("memory", "list")
    assert run.returncode == 0 and "[?] Write -- e3" in run.stdout, str(run)
    from engine.memory import store

    store.compact(str(path), 100)
    assert len(path.read_text().splitlines()) == 4


def _first_failing_bash(name):
    """(command, error text) of a transcript's first failed Bash call."""
    from testdata import transcript

    commands = {}
    for line in transcript(name).read_text(encoding="utf-8").splitlines():
        content = (json.loads(line).get("message") or {}).get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_use" and block.get("name") == "Bash":
                commands[block["id"]] = block["input"]["command"]
            if block.get("type") == "tool_result" and block.get("is_error") and block["tool_use_id"] in commands:
                return commands[block["tool_use_id"]], block["content"]
    raise AssertionError(f"{name}: no failed Bash call")


def test_a_tracebacks_lesson_is_the_error_it_ends_with(hk):
    """Session 21 (a real one): a command failed with a Python traceback;
    the lesson is the error the traceback ends with, not its heading, which
    says nothing of what went wrong (`hooks.memory.error_lead_ins`)."""
    command, error = _first_failing_bash("21-erk-ci-compact-17errors-41files-ebe65926.jsonl")
    assert error.splitlines()[1] == "Trace" + "back (most recent call last):"
    ev = hk.event("PostToolUseFailure", tool_name="Bash", tool_use_id="toolu_tb1",
                  tool_input={"command": command, "description": "x"}, error=error)
    hk.hook(ev).assert_silent()
    (entry,) = _listed(hk, "Bash")
    assert entry["error"] == "TypeError: setup_impl_from_issue() got an unexpected keyword argument 'branch_slug'", entry


@pytest.mark.parametrize("name,tool", [("10-agentcmd-v2026-image-result.jsonl", "ExitPlanMode"),
                                       ("02-spotter-subagent-a2898e3.jsonl", "Read")])
def test_a_call_the_user_refused_or_a_sibling_cancelled_is_no_lesson(hk, name, tool):
    """Recorded sessions: the user said no to an ExitPlanMode (10), a Read
    was cancelled because a parallel call failed (02).  Neither says
    anything of the tool (claude-code.yaml's failure.not_lessons): nothing
    is remembered; a real failure of the same session still is."""
    from testdata import transcript

    said = [_result_text(block) for block in _error_results(transcript(name))]
    cancelled = next(t for t in said if "doesn't want to proceed" in t or "Sibling tool call errored" in t)
    ev = hk.event("PostToolUseFailure", tool_name=tool, tool_use_id="toolu_no1", tool_input={}, error=cancelled)
    hk.hook(ev).assert_silent()
    assert _listed(hk) == []
    _write_failure(hk, "/p/a.py", "toolu_w1")
    assert [e["tool"] for e in _listed(hk)] == ["Write"]


def _error_results(path):
    for line in path.read_text(encoding="utf-8").splitlines():
        content = (json.loads(line).get("message") or {}).get("content")
        for block in content if isinstance(content, list) else ():
            if block.get("type") == "tool_result" and block.get("is_error"):
                yield block


def _result_text(block):
    content = block["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content if isinstance(b, dict))


def test_a_copilot_call_no_one_could_approve_is_no_lesson():
    """Copilot CLI 1.0.102 under -p refuses a program named by a path outside
    the project with its own words (measured, tests/support/AGENTS-MEASURED.md):
    no lesson of the tool (copilot.yaml's failure.not_lessons)."""
    from engine.agents.event import Event
    from engine.agents.table import get
    from engine.memory import record

    refused = ("Permission denied because no interactive user response was available. Retry in an interactive "
               "session so the user can approve it, or try an alternative that does not require this permission.")
    event = Event(get("copilot"), {"toolName": "bash", "toolArgs": {"command": "/opt/py/bin/python -m pytest"},
                                   "sessionId": "s", "cwd": PROJECT})
    assert record.build(event, refused, _memory(), lambda t: t, PROJECT) is None
    assert record.build(event, "bash: /opt/py/bin/python: No such file or directory", _memory(), lambda t: t,
                        PROJECT) is not None
