"""Issue 23, item 7: the user-run commands stay bounded on hostile
transcripts.  One line at a time, never more than transcripts.max_line_bytes
of one (engine/core/transcript.py): a longer line is skipped by the reports
and replay, copied through unchanged by purge; usage figures are clamped to
transcripts.max_tokens; errors are one line.  The bounds are made small here
(the engine settings patched in this process) so the files stay small; the
peak of what Python holds is measured with tracemalloc."""

import copy
import io
import json
import os
import tracemalloc

import pytest

from engine.core import settings as engine_settings

LIMIT = 16 * 1024  # max_line_bytes in these tests
PIECE = 4 * 1024  # chunk_bytes
LONG = 64 * LIMIT  # the long lines: 1-2 MB each
HELD = 32 * LIMIT  # what a command may hold: lines within the bound, 64 KB blocks; never one long line


@pytest.fixture
def small(api_env, monkeypatch):
    limits = copy.deepcopy(engine_settings.get())
    limits["transcripts"].update(max_line_bytes=LIMIT, chunk_bytes=PIECE)
    monkeypatch.setattr(engine_settings, "_plain", limits)
    return limits


def rec(**kw):
    return json.dumps({"sessionId": "bnd", "cwd": "/w", "version": "2.1.200", **kw}).encode() + b"\n"


def tool_result(uuid, parent, tool_id, text):
    return rec(type="user", uuid=uuid, parentUuid=parent, toolUseResult={"stdout": text, "stderr": ""},
               message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_id, "content": text}]})


def tool_use(uuid, parent, tool_id, command, tokens=100):
    return rec(type="assistant", uuid=uuid, parentUuid=parent, message={
        "id": "m-" + uuid, "model": "claude-test", "role": "assistant",
        "usage": {"input_tokens": tokens, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
        "content": [{"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": command}}]})


def hostile_session(path, long_bytes, tag="built"):
    """A session with three lines too long to hold: a tool result of
    `long_bytes`, a run of zeros (a sparse file's hole) and, last, a torn
    line without its newline; and an ordinary large output between them."""
    ordinary = "".join(f"{tag} target {i}\n" for i in range(300))  # 5 KB, twice on its line: stubbed by purge
    huge = "".join(f"/srv/data/{i:08d}.bin\n" for i in range(long_bytes // 24 + 1))
    parts = [
        rec(type="user", uuid="u1", parentUuid=None, message={"role": "user", "content": "index the disk"}),
        tool_use("a1", "u1", "t1", "make"),
        tool_result("u2", "a1", "t1", ordinary),
        tool_use("a2", "u2", "t2", "find /srv"),
        tool_result("u3", "a2", "t2", huge),
        b"\0" * (long_bytes + 7) + b"\n",
        tool_use("a3", "u3", "t3", "true", tokens=200),
        b'{"type": "user", "partial": "' + b"z" * long_bytes,
    ]
    path.write_bytes(b"".join(parts))
    os.utime(path, (1, 1))  # idle: purge needs no --force
    return parts


def peak_of(fn, *args, **kw):
    tracemalloc.start()
    try:
        result = fn(*args, **kw)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# -- the reader every command uses ---------------------------------------------

@pytest.mark.parametrize("sizes", [
    [0, 5, LIMIT - 1, LIMIT, LIMIT + 1, 3 * LIMIT + 17, 2],
    [LIMIT + 1],
    [7 * PIECE + 3, 1, LIMIT],
])
@pytest.mark.parametrize("torn", [False, True])
def test_lines_hold_at_most_the_bound_and_give_every_byte_its_place(small, sizes, torn):
    from engine.core.transcript import copy_range, lines

    body = [bytes([97 + i % 26]) * n + b"\n" for i, n in enumerate(sizes)]
    if torn:
        body[-1] = body[-1][:-1]  # the last line without its newline
    data = b"".join(body)
    got = list(lines(io.BytesIO(data)))
    assert [(s, e) for s, e, _ in got] == [(sum(map(len, body[:i])), sum(map(len, body[:i + 1])))
                                           for i in range(len(body))]
    for (start, end, raw), line in zip(got, body):
        content = len(line) - line.endswith(b"\n")
        assert (raw is None) == (content > LIMIT)
        assert raw is None or raw == data[start:end]
    out = io.BytesIO()
    for start, end, _ in got:
        copy_range(io.BytesIO(data), out, start, end)
    assert out.getvalue() == data


def test_a_run_of_zeros_is_copied_as_a_hole(small, tmp_path):
    from engine.core.transcript import copy_range

    src = tmp_path / "sparse.jsonl"
    with open(src, "wb") as fh:
        fh.write(b"{}\n")
        fh.truncate(64 * PIECE + 3)
    dst = tmp_path / "copy"
    with open(src, "rb") as a, open(dst, "wb") as b:
        assert copy_range(a, b, 0, 64 * PIECE + 3) == 64 * PIECE + 3
    assert dst.read_bytes() == src.read_bytes()
    assert os.stat(dst).st_blocks * 512 < 16 * PIECE  # the zeros took no disk


def test_windows_find_what_straddles_two_pieces(small):
    from engine.core.transcript import windows

    key = b"sha256:" + b"ab" * 32
    for cut in (1, 7, 40, 70):
        data = b"x" * (PIECE - cut) + key + b"y" * PIECE
        assert any(key in w for w in windows(io.BytesIO(data), 128))
        assert max(len(w) for w in windows(io.BytesIO(data), 128)) <= PIECE + 128


# -- purge ---------------------------------------------------------------------

def test_purge_copies_long_lines_through_unchanged_in_bounded_memory(small, tmp_path):
    from engine.ccm import config
    from engine.ccm.purge import purge_file
    from engine.ccm.store import Store

    settings = config.load(config.builtin_path())
    store = Store(settings, str(tmp_path / "ccm"))
    warm = tmp_path / "warm.jsonl"
    warm.write_bytes(b"".join(hostile_session(warm, 10, tag="warm")[:3]))  # another output: a new blob below
    purge_file(str(warm), settings, store, force=True)  # imports, compiled patterns: not what is measured
    path = tmp_path / "s.jsonl"
    parts = hostile_session(path, LONG)
    (report, backup), peak = peak_of(purge_file, str(path), settings, store)
    assert backup is not None and report.repairs.get("kept_long_line") == 3
    after = path.read_bytes()
    for long_line in (parts[4], parts[5], parts[7]):  # every byte of each, in place
        assert long_line in after
    assert after.endswith(parts[7]) and after.index(parts[4]) < after.index(parts[5]) < after.index(parts[7])
    assert b"built target 299" not in after  # the ordinary output went to the cache
    assert report.bytes_in == sum(map(len, parts)) and report.bytes_out == len(after)
    assert peak < HELD, f"{peak:,} bytes held for lines of {len(parts[5]):,} bytes and more"


# -- replay --------------------------------------------------------------------

def _same_prefix(copy_path, source, size, piece=PIECE):
    with open(copy_path, "rb") as a, open(source, "rb") as b:
        if os.fstat(a.fileno()).st_size != size:
            return False
        done = 0
        while done < size:
            n = min(piece, size - done)
            if a.read(n) != b.read(n):
                return False
            done += n
    return True


def test_replay_reads_one_bounded_line_at_a_time_and_says_what_it_skipped(small, tmp_path, monkeypatch):
    """The hooks stubbed (their own reading is reversed_lines', below): each
    event sees the transcript's exact prefix, long lines and holes copied
    through in pieces, and nothing holds a long line."""
    from engine.hooks import dispatch
    from engine.replay import pricing, run

    path = tmp_path / "s.jsonl"
    parts = hostile_session(path, LONG)
    seen = []

    def handle(ev, _profile, _log, _hooks, _state, trace):
        size = os.path.getsize(ev["transcript_path"])
        seen.append((ev["hook_event_name"], size, _same_prefix(ev["transcript_path"], path, size)))

    rates = pricing.load()  # read once: a YAML document and its schema are not what is measured
    monkeypatch.setattr(pricing, "load", lambda _path: rates)
    monkeypatch.setattr(dispatch, "handle", handle)
    monkeypatch.setattr(run, "_settings", lambda *_a: {"events": {}})
    run.replay([str(tmp_path / "s.jsonl")], profile="default")  # the modules: not what is measured
    seen.clear()
    result, peak = peak_of(run.replay, [str(path)], profile="default")
    s = result["sessions"][0]
    ends = [sum(map(len, parts[:i])) for i in range(len(parts) + 1)]
    assert [(name, size) for name, size, _ in seen] == [
        ("SessionStart", 0), ("UserPromptSubmit", 0), ("PreToolUse", ends[2]), ("PostToolUse", ends[2]),
        ("PreToolUse", ends[4]), ("PreToolUse", ends[7]), ("Stop", ends[8]), ("SessionEnd", ends[8])]
    assert all(same for _, _, same in seen)
    assert s["bytes"] == ends[-1] and s["api_calls"] == 3
    notes = [p for p in s["problems"] if "max_line_bytes" in p]
    assert [n.split(":")[0] for n in notes] == ["line 5", "line 6", "line 8"], s["problems"]
    assert peak < HELD, f"{peak:,} bytes held for lines of {len(parts[5]):,} bytes and more"


def test_the_hooks_read_back_past_a_long_line_without_holding_it(small, tmp_path):
    from engine.core.transcript import reversed_lines

    path = tmp_path / "s.jsonl"
    parts = hostile_session(path, LONG)
    got, peak = peak_of(lambda: list(reversed_lines(str(path), 10 ** 9)))
    assert got == [p.rstrip(b"\n") for p in reversed(parts[:-1]) if len(p) <= LIMIT + 1]  # the torn last line is long
    assert peak < HELD, f"{peak:,} bytes held for lines of {len(parts[5]):,} bytes and more"


# -- the session report: lines and numbers ------------------------------------

HUGE_INT = "9" * 400


def test_session_report_clamps_usage_figures_of_any_size(tmp_path, cli):
    rows = [rec(type="user", uuid="u1", message={"role": "user", "content": "go"}).decode()]
    shapes = [f'{{"input_tokens": {HUGE_INT}}}', '{"cache_read_input_tokens": 1e400}',
              f'{{"input_tokens": "{HUGE_INT * 12}"}}', '{"input_tokens": -5, "cache_creation_input_tokens": 7}',
              '{"input_tokens": [1]}']
    for i, usage in enumerate(shapes):
        rows.append('{"type": "assistant", "sessionId": "bnd", "uuid": "a%d", "message": {"id": "m%d", '
                    '"model": "claude-test", "role": "assistant", "content": [], "usage": %s}}\n' % (i, i, usage))
    rows.append('{"type": "system", "subtype": "compact_boundary", "compactMetadata": {"preTokens": %s}}\n' % HUGE_INT)
    path = tmp_path / "numbers.jsonl"
    path.write_text(rows[0] + "".join(rows[1:]))
    top = engine_settings.get()["transcripts"]["max_tokens"]
    run = cli("session", "report", str(path), "--json")
    assert run.returncode == 0, str(run)
    report = json.loads(run.out)
    assert [p["tokens"] for p in report["fill"]] == [top, top, top, 7]  # the list is no number: left out
    assert report["compactions"][0]["pre_tokens"] == top
    text = cli("session", "report", str(path))
    assert text.returncode == 0 and "Context fill" in text.out
    since = cli("session", "report", "--since", HUGE_INT + "d", "--json")
    assert since.returncode == 0, str(since)


def test_the_context_monitor_clamps_a_huge_usage(small, tmp_path):
    from engine.agents import DEFAULT_AGENT, table
    from engine.hooks.fill import fill_of, last_usage

    path = tmp_path / "t.jsonl"
    path.write_text(f'{{"type": "assistant", "message": {{"model": "claude-test", "usage": '
                    f'{{"input_tokens": {HUGE_INT}, "cache_read_input_tokens": 3}}}}}}\n')
    fill = fill_of(table.get(DEFAULT_AGENT), last_usage(str(path), 1 << 20))
    top = engine_settings.get()["transcripts"]["max_tokens"]
    assert fill is not None and fill[1] == top + 3 and fill[0] > 100


# -- one line, never a traceback ----------------------------------------------

def test_messages_refuses_an_input_over_its_bound_before_reading_it(cli, tmp_path):
    bound = engine_settings.get()["messages"]["max_input_bytes"]
    big = tmp_path / "messages.json"
    with open(big, "wb") as fh:
        fh.truncate(bound + 1)  # a hole: no disk
    for args in (("messages", "compress", str(big)), ("messages", "compress", "--transcript", str(big)),
                 ("messages", "restore", str(big))):
        run = cli(*args)
        assert run.returncode == 1 and run.out == "", str(run)
        assert run.err.startswith(f"{big}: larger than {bound:,} bytes") and len(run.err.splitlines()) == 1, str(run)


def test_out_of_memory_is_one_line(monkeypatch, capsys, tmp_path):
    from engine.cli.main import main
    from engine.session import report

    def exhausted(*_a, **_k):
        raise MemoryError

    monkeypatch.setattr(report, "analyze_file", exhausted)
    path = tmp_path / "x.jsonl"
    path.write_text("{}\n")
    assert main(["session", "report", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("engine: out of memory") and len(err.splitlines()) == 1 and "Traceback" not in err


def test_ids_of_any_json_shape_are_no_error(small, tmp_path, cli):
    """A list or an object where the agent writes an id string: skipped, never
    a traceback (they were used as dict keys: TypeError, unhashable)."""
    from engine.ccm import config
    from engine.ccm.purge import purge_file
    from engine.ccm.store import Store
    from engine.replay.events import events
    from engine.replay.pricing import Timeline

    path = tmp_path / "shapes.jsonl"
    path.write_bytes(b"".join([
        rec(type="user", uuid="u1", message={"role": "user", "content": "go"}),
        rec(type="assistant", uuid="a1", message={"id": {"nested": 1}, "model": "m", "usage": {"input_tokens": 9},
                                                  "content": [{"type": "tool_use", "id": ["t", 1], "name": "Bash"}]}),
        rec(type="user", uuid="u2", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": {"id": "t1"}, "content": "x"},
            {"type": "tool_result", "tool_use_id": ["t", 1], "is_error": True, "content": "boom"}]}),
    ]))
    os.utime(path, (1, 1))
    assert [ev["hook_event_name"] for ev, _ in events(str(path))][:2] == ["SessionStart", "UserPromptSubmit"]
    assert len(Timeline(str(path)).calls) == 1  # a response whose id is an object: told by its uuid
    settings = config.load(config.builtin_path())
    report, _ = purge_file(str(path), settings, Store(settings, str(tmp_path / "ccm")), dry_run=True)
    assert report.lines_in == 3 and not report.repairs.get("removed_orphan_tool_result")  # kept: not judged
    run = cli("session", "report", str(path), "--json")
    assert run.returncode == 0 and json.loads(run.out)["tools"][0]["name"] == "?", str(run)
