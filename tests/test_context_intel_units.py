"""In-process tests of the context-intelligence pieces: the tool-memory store
(merge, trim, clear, sessions), failure detection and redaction, the
transcript scan and the context fill, on real transcripts
(tests/data/transcripts via tests/testdata.py)."""

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from engine.hooks import fill
from engine.memory import record, scan, store
from testdata import transcript

REPO = Path(__file__).resolve().parent.parent
MEMORY = None


def memory_settings():
    global MEMORY
    if MEMORY is None:
        import yaml

        MEMORY = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text())["hooks"]
    return MEMORY


def rec(k, t, tool="Bash", session="s1", error="boom", inp="ls"):
    return {"k": k, "t": t, "tool": tool, "error": error, "input": inp, "project": "/p", "session": session}


def test_store_merges_the_same_failure_into_one_entry_with_a_count(tmp_path):
    path = str(tmp_path / "m" / "mem.ndjson")
    store.append(path, [rec("a", 10), rec("a", 30, session="s2"), rec("b", 20, tool="Read")], 100, 10**6)
    found = store.entries(path)
    assert [(e["k"], e["count"], e["first"], e["last"]) for e in found] == [("a", 2, 10, 30), ("b", 1, 20, 20)]
    assert found[0]["sessions"] == ["s1", "s2"]
    assert [e["k"] for e in store.entries(path, session="s2")] == ["a"]
    assert [e["k"] for e in store.entries(path, tool="Read")] == ["b"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "m").st_mode) == 0o700


def test_store_compaction_keeps_the_newest_entries_and_their_counts(tmp_path):
    path = str(tmp_path / "mem.ndjson")
    for i in range(30):  # compacts several times on the way (1 KiB), keeping all 10 keys
        store.append(path, [rec(f"k{i % 10}", i)], max_kept=10, compact_bytes=1024)
    store.compact(path, 4)  # then trims to the 4 newest
    found = store.entries(path)
    assert [e["k"] for e in found] == ["k9", "k8", "k7", "k6"]
    assert [e["count"] for e in found] == [3, 3, 3, 3]
    assert len(Path(path).read_text().splitlines()) == 4


def test_store_clear_one_tool_or_all(tmp_path):
    path = str(tmp_path / "mem.ndjson")
    store.append(path, [rec("a", 1), rec("b", 2, tool="Read")], 100, 10**6)
    assert store.clear(path, "Read") == 1
    assert [e["tool"] for e in store.entries(path)] == ["Bash"]
    assert store.clear(path) == 1
    assert store.entries(path) == []


def test_store_skips_a_torn_line(tmp_path):
    path = tmp_path / "mem.ndjson"
    store.append(str(path), [rec("a", 1)], 100, 10**6)
    with open(path, "a") as fh:
        fh.write('{"k": "b", "tool": "Ba')
    assert [e["k"] for e in store.entries(str(path))] == ["a"]
    assert [e["k"] for e in store.entries_for_tool(str(path), "Bash")] == ["a"]


def test_unwritable_store_raises_store_error(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "mem.ndjson").mkdir()  # a folder where the file should be
    with pytest.raises(store.StoreError):
        store.append(str(folder / "mem.ndjson"), [rec("a", 1)], 100, 10**6)


@pytest.mark.parametrize("event,expected", [
    ({"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "error": "Exit code 127\nkubectl: command not found"},
     "kubectl: command not found"),
    ({"hook_event_name": "PostToolUse", "tool_name": "mcp__x__y", "tool_response": {"is_error": True, "content": "Connection refused"}},
     "Connection refused"),
    ({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_response": {"stdout": "", "stderr": "oops", "exit_code": 2}},
     "oops"),
    ({"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_response": {"stdout": "", "stderr": "bash: kubectl: command not found"}},
     "bash: kubectl: command not found"),
])
def test_failures_are_detected(event, expected):
    mem = memory_settings()["memory"]
    text = record.failure(event, mem)
    assert text is not None
    assert record.first_line(text, mem) == expected


@pytest.mark.parametrize("resp", [
    {"stdout": "Permission denied appears in a grep result", "stderr": ""},
    {"stdout": "ok", "stderr": "warning: something minor", "exit_code": 0},
    # a test run's line names what failed (hooks.memory.failure_lines) but marks no call failed
    {"stdout": "", "stderr": "FAILED tests/test_a.py::test_bad - assert 1 == 2", "exit_code": 0},
    None,
])
def test_successes_are_not_failures(resp):
    ev = {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_response": resp}
    assert record.failure(ev, memory_settings()["memory"]) is None


def test_a_failures_text_is_read_as_far_as_the_engines_settings_say(monkeypatch):
    """failures.head_chars of pipelines/settings/engine.yaml: what a failure
    keeps, and the head its failing test's line is looked for in."""
    from engine.core import settings

    monkeypatch.setattr(settings, "_plain", {**settings.plain(), "failures": {"head_chars": 300}})
    log = "collected 1 item\n" + "." * 400 + "\nFAILED test_a.py::test_bad - assert 1 == 2"
    event = {"hook_event_name": "PostToolUseFailure", "tool_name": "Bash", "error": log}
    text = record.failure(event, memory_settings()["memory"])
    assert text == log[:300]
    assert record.first_line(log, memory_settings()["memory"]) == "collected 1 item"
    monkeypatch.setattr(settings, "_plain", {**settings.plain(), "failures": {"head_chars": 1000}})
    assert record.first_line(log, memory_settings()["memory"]) == "FAILED test_a.py::test_bad - assert 1 == 2"


def test_first_line_removes_the_agents_wrapper():
    from engine.agents import table

    mem = record.for_agent(memory_settings()["memory"], table.get("claude-code"))  # its wrapper: its YAML's
    assert record.first_line("<tool_use_error>File does not exist.</tool_use_error>", mem) == "File does not exist."


SECRET = "sk-ant-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"


def test_redaction_happens_before_the_input_is_cut():
    """A secret cut by the field cap would no longer match its pattern: the
    input is redacted first."""
    import re

    mem = dict(memory_settings()["memory"], max_field_chars=30)
    pattern = re.compile(r"(?<![\w-])sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}")

    def redact(text):
        return pattern.sub("[REDACTED]", text)

    short = record.short_input({"command": f"curl -H 'x-api-key: {SECRET}' https://api"}, mem, redact)
    assert "sk-ant" not in short and SECRET[:12] not in short
    assert "[REDACTED]" in short


def _copy(name, tmp_path):
    src = transcript(name)
    dst = tmp_path / name
    shutil.copyfile(src, dst)
    return str(dst)


def test_scan_finds_the_failed_calls_of_a_real_transcript(tmp_path):
    path = _copy("09-ccviewer-v10108-inline-sidechain.jsonl", tmp_path)
    found = scan.transcript_failures(path, 10**7)
    assert [f["tool"] for f in found] == ["Task", "Bash", "Edit"]
    assert all(f["id"].startswith("toolu_") for f in found)
    assert "File has not been read yet" in found[2]["error"]


def test_scan_of_a_missing_or_special_file_finds_nothing(tmp_path):
    assert scan.transcript_failures(str(tmp_path / "none.jsonl"), 10**6) == []
    os.mkfifo(tmp_path / "fifo")
    assert scan.transcript_failures(str(tmp_path / "fifo"), 10**6) == []


def _assistant(total, sidechain=False, model="claude-sonnet-4-5", mid="m1"):
    return {"type": "assistant", "isSidechain": sidechain, "message": {
        "id": mid, "model": model, "role": "assistant", "content": [{"type": "text", "text": "x"}],
        "usage": {"input_tokens": total, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}


def _write(path, recs, tail=""):
    path.write_text("".join(json.dumps(r) + "\n" for r in recs) + tail)
    return str(path)


def test_fill_uses_the_latest_main_chain_record(tmp_path):
    recs = [_assistant(1000), _assistant(150000, mid="m2"), _assistant(190000, sidechain=True)]
    p = _write(tmp_path / "t.jsonl", recs)
    since = len(json.dumps(recs[0])) + 1  # where the response that reported it starts
    assert fill.last_usage(p, 10**6) == (150000, "claude-sonnet-4-5", since)


def test_fill_skips_synthetic_records_of_a_real_transcript(tmp_path):
    """13-... holds API-error records with model <synthetic> and zero usage."""
    path = _copy("13-sessionshare-v2115-api-errors.jsonl", tmp_path)
    tokens, model, _since = fill.last_usage(path, 10**7)
    assert tokens > 0 and model != "<synthetic>"


def test_fill_is_zero_right_after_a_compaction(tmp_path):
    boundary = {"type": "system", "subtype": "compact_boundary", "parentUuid": None,
                "compactMetadata": {"trigger": "auto", "preTokens": 160000}}
    p = _write(tmp_path / "t.jsonl", [_assistant(160000), boundary])
    assert fill.last_usage(p, 10**6) == (0, None, len(json.dumps(_assistant(160000))) + 1)


def test_fill_of_a_file_cut_mid_line_reads_the_last_whole_record(tmp_path):
    p = _write(tmp_path / "t.jsonl", [_assistant(120000)], tail='{"type": "assistant", "message": {"usage": {"input_tok')
    assert fill.last_usage(p, 10**6)[0] == 120000


def test_fill_of_a_missing_transcript_is_none(tmp_path):
    assert fill.last_usage(str(tmp_path / "none.jsonl"), 10**6) is None
    assert fill.last_usage(None, 10**6) is None


def test_window_is_long_for_long_context_models_or_past_the_regular_window():
    from engine.agents import table

    claude, codex = table.get("claude-code"), table.get("codex")
    assert fill.window(claude, fill.Usage(150000, "claude-sonnet-4-5", 0)) == 200000
    assert fill.window(claude, fill.Usage(250000, "claude-sonnet-4-5", 0)) == 1000000
    assert fill.window(claude, fill.Usage(10, "claude-sonnet-4-5[1m]", 0)) == 1000000
    # the window an agent records wins; else its YAML's
    assert fill.window(codex, fill.Usage(10, "gpt-5.1-codex", 0, window=400000)) == 400000
    assert fill.window(codex, fill.Usage(10, "gpt-5.1-codex", 0)) == 258400


def test_compaction_keeps_the_latest_sessions_of_an_entry(tmp_path):
    """hooks.memory.sessions_kept bounds the sessions an entry names (the
    latest), so one recurring error cannot grow the store without end."""
    path = str(tmp_path / "m.ndjson")
    store.append(path, [rec("k", i, session=f"s{i}") for i in range(6)], max_kept=10, compact_bytes=10 ** 6)
    store.compact(path, 10, sessions_kept=2)
    (entry,) = store.entries(path)
    assert entry["sessions"] == ["s4", "s5"] and entry["count"] == 6


@pytest.mark.parametrize("reader,sample", [("codex", "codex/session-0.171.0.jsonl"),
                                           ("gemini", "gemini/session-0.61.0.jsonl"),
                                           ("copilot", "copilot/session-1.0.102.jsonl")])
def test_an_agents_lines_around_a_shell_output_are_not_the_error(reader, sample):
    """The failed `ls` of each agent's measured transcript is remembered by
    what ls printed, not by the agent's wrapper (Gemini's
    <untrusted_context>, which named every error alike) or header (Codex's
    `Chunk ID: a59b30`, which named each call's error apart)."""
    from engine.agents import table
    from engine.agents.transcripts import forwards
    from engine.core.transcript import Problems

    mem = record.for_agent(memory_settings()["memory"], table.get(reader))  # its own lines: its YAML's failure
    with open(REPO / "tests" / "data" / "transcripts" / sample, "rb") as fh:
        failed = [r.text for r in forwards(reader, fh, {"max_line_bytes": 1 << 22, "chunk_bytes": 1 << 16}, Problems())
                  if r.kind == "tool_result" and r.is_error]
    assert failed, "the sample holds a failed call"
    want = "ls: cannot access '/no-such-folder-for-the-sample': No such file or directory"
    assert [record.error_line(text, mem) for text in failed] == [(want, True)] * len(failed)
