"""One reader of the agent's version (issue 23, finding 12): the transcript's
last record naming one, read backwards by line heads (a long line is never
held whole), else the variable the agent sets in its hooks' environment;
asked alike by what is in view and by the content cache.

Records are built in the key order the agents write them: 2.0.x and 2.1.5x
put `version` about the 200th byte; 2.1.330 puts it after `message` and
`toolUseResult` in user and assistant records, early in api-request ones."""

import json
import os
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.agents import table
from engine.agents import version as agentversion
from engine.core.lineheads import line_heads
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

CLAUDE = table.get("claude-code")

CURRENT = "2.1.331"
OLD = "2.0.71"


def _user_result_new(text, version=CURRENT):
    """A 2.1.330-shaped tool result record: `version` after the output."""
    return {"parentUuid": "p1", "isSidechain": False, "promptId": "q1", "type": "user",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": text}]},
            "uuid": "u2", "timestamp": "2026-11-26T10:00:01Z", "toolUseResult": {"stdout": text, "stderr": ""},
            "sourceToolAssistantUUID": "a1", "userType": "external", "entrypoint": "cli", "cwd": "/p",
            "sessionId": "s", "version": version, "gitBranch": "main"}


def _assistant_new(version=CURRENT):
    return {"parentUuid": "u1", "isSidechain": False,
            "message": {"role": "assistant", "model": "m", "content": [
                {"type": "tool_use", "id": "toolu_9", "name": "Bash", "input": {"command": "cat big.log"}}]},
            "type": "assistant", "uuid": "a1", "timestamp": "2026-11-26T10:00:00Z", "userType": "external",
            "entrypoint": "cli", "cwd": "/p", "sessionId": "s", "version": version, "gitBranch": "main"}


def _user_result_old(text, version=OLD):
    """A 2.0.x-shaped record: `version` among the first keys."""
    return {"parentUuid": "a1", "isSidechain": False, "userType": "external", "cwd": "/p", "sessionId": "s",
            "version": version, "gitBranch": "main", "type": "user",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": text}]},
            "toolUseResult": {"stdout": text, "stderr": ""}}


def _write(path, records, end="\n"):
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(json.dumps(r) for r in records) + end)
    return str(path)


def _filler(n):
    # a tool output that itself holds version-looking JSON (escaped in the record)
    unit = '{"version":"9.9.9","name":"pkg"} log line \u00e9\n'
    return (unit * (n // len(unit) + 1))[:n]


# -- the reader ----------------------------------------------------------------

@pytest.mark.parametrize("size", [300_000, 3_000_000])
def test_a_current_agent_with_a_long_last_line_is_still_current(tmp_path, size):
    """Old code: a last line longer than the 256 KB tail named no version for
    the content cache (the rewrite, no replacement)."""
    path = _write(tmp_path / "t.jsonl", [_assistant_new(), _user_result_new(_filler(size))])
    assert agentversion.from_transcript(path) == CURRENT
    assert agentversion.of_session(CLAUDE, path, environ={}) == CURRENT


def test_an_older_agent_long_line_gives_its_version_from_its_head(tmp_path):
    """The only record is 2 MB long: its head names the version."""
    path = _write(tmp_path / "t.jsonl", [_user_result_old(_filler(2_000_000))], end="")  # still being written
    assert agentversion.from_transcript(path) == OLD


def test_only_a_top_level_version_counts(tmp_path):
    """A version inside the record (a tool's structured output) is not the
    agent's, whole line or head: the search goes on to the line before."""
    nested = {"parentUuid": "x", "isSidechain": False, "type": "user",
              "toolUseResult": {"structuredContent": {"version": "7.7.7"}}, "message": {"content": "x" * 200_000}}
    path = _write(tmp_path / "t.jsonl", [_assistant_new("2.1.329"), nested])
    assert agentversion.from_transcript(path) == "2.1.329"
    short = dict(nested, message={"content": "short"})
    path = _write(tmp_path / "u.jsonl", [_assistant_new("2.1.329"), short])
    assert agentversion.from_transcript(path) == "2.1.329"


def test_no_version_anywhere_falls_back_to_the_environment(tmp_path):
    path = _write(tmp_path / "t.jsonl", [{"type": "summary", "summary": "s", "leafUuid": "l"}])
    env = {"AI_AGENT": "claude-code_2-1-332_harness"}
    assert agentversion.from_transcript(path) is None
    assert agentversion.of_session(CLAUDE, path, environ=env) == "2.1.332"
    assert agentversion.of_session(CLAUDE, str(tmp_path / "missing.jsonl"), environ=env) == "2.1.332"
    assert agentversion.of_session(CLAUDE, str(tmp_path / "missing.jsonl"), environ={}) is None
    os.mkfifo(tmp_path / "fifo.jsonl")  # never blocks on a FIFO named as the transcript
    assert agentversion.of_session(CLAUDE, str(tmp_path / "fifo.jsonl"), environ=env) == "2.1.332"


def test_only_the_last_lines_are_looked_at(tmp_path):
    """A transcript that is not the agent's (thousands of short records and
    no version in its end) is not read back to its start: past
    agent.version.max_lines lines the answer is no version."""
    from engine.core.settings import agent_facts

    n = agent_facts()["version"]["max_lines"]
    filler = [{"type": "queue-operation", "operation": "enqueue", "i": i} for i in range(n + 40)]
    path = _write(tmp_path / "far.jsonl", [_assistant_new("2.1.320")] + filler)
    assert agentversion.from_transcript(path) is None
    path = _write(tmp_path / "near.jsonl", [_assistant_new("2.1.320")] + filler[: n - 40])
    assert agentversion.from_transcript(path) == "2.1.320"


def test_a_long_line_is_never_held_whole(tmp_path):
    """7.8 MB on one line (a 3 MB output, escaped, twice): the reader's own
    allocations stay near its head and a block, not the line."""
    path = _write(tmp_path / "t.jsonl", [_assistant_new(), _user_result_new(_filler(3_000_000))])
    tracemalloc.start()
    try:
        assert agentversion.from_transcript(path) == CURRENT
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"peak {peak:,} bytes while reading an 8 MB line"


# -- line heads, against a plain split ----------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(min_value=0, max_value=300), max_size=12), st.booleans(),
       st.sampled_from([1, 7, 4096]), st.sampled_from([65536, 900, 50]), st.sampled_from([3, 64, 65536]))
def test_line_heads_match_a_plain_split(tmp_path_factory, sizes, final_break, head, scan, block):
    """Every non-empty line that starts inside the scanned end, last first,
    with its offset, cut to its head; whatever the block size the file is
    read in."""
    from engine.core import lineheads

    data = b"\n".join(bytes([97 + i % 26]) * n for i, n in enumerate(sizes)) + (b"\n" if final_break else b"")
    path = tmp_path_factory.mktemp("heads") / "f"
    path.write_bytes(data)
    floor = max(0, len(data) - scan)
    expected, start = [], 0
    for piece in data.split(b"\n"):
        if piece and (start > floor or floor == 0):
            expected.append((start, len(piece), piece[:head]))
        start += len(piece) + 1
    saved, lineheads.BLOCK = lineheads.BLOCK, block
    try:
        got = list(line_heads(str(path), scan, head))
    finally:
        lineheads.BLOCK = saved
    assert got == expected[::-1]


class _Counted(bytes):
    """Bytes that count what joining them with `+` copies (all of _Counted)."""

    copied = 0

    def split(self, sep=None, maxsplit=-1):
        return [_Counted(p) for p in bytes.split(self, sep, maxsplit)]

    def __add__(self, other):
        joined = bytes.__add__(self, other)
        _Counted.copied += len(joined)
        return _Counted(joined)


def test_a_long_line_read_whole_is_copied_once_not_once_a_block(tmp_path, monkeypatch):
    """A line a caller asks whole (the refresh's paths touched and the
    context fill read lines up to their whole tail, 32 MB) is assembled
    once: joining the carried part at every block copied a 32 MB line 500
    times, 8 GB, and took a SessionStart after a compaction past its
    deadline, the rules it re-injects with it."""
    from engine.core import lineheads

    line = b"x" * 200_000
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n' + line + b"\n")
    monkeypatch.setattr(lineheads, "BLOCK", 1024)
    monkeypatch.setattr(lineheads.os, "pread", lambda fd, n, at, _read=os.pread: _Counted(_read(fd, n, at)))
    _Counted.copied = 0
    got = list(line_heads(str(path), 1 << 20, 1 << 20))
    assert got == [(9, len(line), line), (0, 8, b'{"a": 1}')]
    assert _Counted.copied <= 2 * len(line), f"{_Counted.copied:,} bytes copied to read a {len(line):,}-byte line"


# -- both users of the fact, through the hook --------------------------------

def _post(hk, stdout):
    return hk.event("PostToolUse", tool_name="Bash", tool_input={"command": "cat big.log", "description": "d"},
                    tool_response={"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False})


def _env(hk, version=None):
    """The agent's hook environment (the project and config folders the
    permission check reads), naming `version` in AI_AGENT when given."""
    env = {"CLAUDE_PROJECT_DIR": hk.project, "CLAUDE_CONFIG_DIR": hk.home / ".claude"}
    if version:
        env["AI_AGENT"] = f"claude-code_{version.replace('.', '-')}_harness"
    return env


def _replaced(hk, env, size):
    """Whether a `size`-character output is replaced after the call (a
    current agent's way; an old agent's output is left for the wrapper)."""
    out = hk.hook(_post(hk, _filler(size)), env=env).assert_ok()
    return bool(out.stdout) and "updatedToolOutput" in out.json.get("hookSpecificOutput", {})


def test_the_content_cache_replaces_for_a_current_agent_behind_a_long_line(hk):
    """Old code: the tool result line of 700 KB hid the version: PostToolUse
    left the output whole."""
    hk.transcript.parent.mkdir(parents=True, exist_ok=True)
    _write(hk.transcript, [_assistant_new("2.1.100"), _user_result_new("x", "2.1.100")])
    assert not _replaced(hk, _env(hk), 9000), "an old agent's output is the wrapper's to keep"
    _write(hk.transcript, [_assistant_new(), _user_result_new(_filler(700_000))])
    out = hk.hook(_post(hk, _filler(9000)), env=_env(hk)).json["hookSpecificOutput"]
    assert out["updatedToolOutput"]["stdout"].startswith("[CCM_CACHED]")


def test_the_content_cache_takes_the_version_from_the_environment(hk):
    """Old code: only what is in view read AI_AGENT; with no transcript on disk
    yet the content cache took the agent for an old one."""
    assert not _replaced(hk, _env(hk, "2.1.170"), 5000), "an old agent named there: the wrapper's to keep"
    out = hk.hook(_post(hk, _filler(5000)), env=_env(hk, "2.1.334")).json["hookSpecificOutput"]
    assert out["updatedToolOutput"]["stdout"].startswith("[CCM_CACHED]")


@pytest.mark.parametrize("text", ["2.\u00b2.330", "\u0662.1.330", "2.1.\uff13"])
def test_a_version_of_digits_other_than_ascii_is_no_version(text):
    """Audit: str.isdigit() is true for "²", which int() refuses: AI_AGENT=
    claude-code_2-²-330_harness raised ValueError in a handler."""
    assert agentversion.parse(text) is None
    env = {"AI_AGENT": "claude-code_" + text.replace(".", "-") + "_harness"}
    assert agentversion.of_session(CLAUDE, "/nonexistent/t.jsonl", environ=env) is None
    from engine.hooks.inview import at_least

    assert at_least(text, "2.1.0") in (True, False)
