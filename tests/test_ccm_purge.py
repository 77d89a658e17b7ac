"""engine purge: shrink and repair transcripts without losing a byte of
what it removes (engine/ccm/purge.py), on real transcripts and on made-up
ones shaped like them."""

import json
import os
import shutil

import pytest

import forkrun
from engine.base.errors import UserError
from engine.ccm.purge import purge_file
from support.ccm import settings, store  # noqa: F401 - fixtures
from testdata import transcript, transcript_names

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REAL = transcript_names()
SIG = "EqQBCkYIBxgCKkB" + "s1gnature/+=" * 40


def L(**kw):
    base = {"sessionId": "S", "cwd": "/p", "version": "2.1.0", "isSidechain": False, "timestamp": "2026-01-01T00:00:00Z"}
    base.update(kw)
    return base


def made_up():
    big = "".join(f"line {i}: some build output\n" for i in range(800))
    secret = "sk-ant-" + "Zz9" * 10
    return [
        # an unrelated first line: nothing written by the repair may come from it
        {"type": "file-history-snapshot", "messageId": "x", "sessionId": "OTHER", "cwd": "/elsewhere", "version": "0.1"},
        {"type": "summary", "summary": "s", "leafUuid": "u9"},
        L(type="user", uuid="u1", parentUuid=None, message={"role": "user", "content": "go"}),
        L(type="assistant", uuid="a1", parentUuid="u1", message={"id": "m1", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm " * 300, "signature": SIG}]}),
        L(type="progress", uuid="p1", parentUuid="a1", data={"type": "hook_progress"}, toolUseID="t1"),
        L(type="assistant", uuid="a2", parentUuid="a1", message={"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]}),
        L(type="progress", uuid="p2", parentUuid="a2", toolUseID="t1",
          data={"type": "bash_progress", "output": big, "fullOutput": big}),
        L(type="user", uuid="u2", parentUuid="a2", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": big}]},
          toolUseResult={"stdout": big, "stderr": "", "interrupted": False}),
        L(type="progress", uuid="p3", parentUuid="u2", data={"type": "hook_progress"}, toolUseID="t1"),
        # a broken parent right after a progress line
        L(type="assistant", uuid="a3", parentUuid="missing-2", message={"id": "m2", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": "/x"}},
            {"type": "tool_use", "id": "t3", "name": "Read", "input": {"file_path": "/env"}}]}),
        L(type="user", uuid="u3", parentUuid="a3", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": big + "x"}]},
            {"type": "tool_result", "tool_use_id": "t3", "content": f"KEY={secret}\n" + big}]}),
        # a tool_result whose tool_use is nowhere, alone on its line
        L(type="user", uuid="u4", parentUuid="u3", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "gone", "content": "?"}]}),
        L(type="assistant", uuid="a4", parentUuid="u4", message={"id": "m3", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t4", "name": "Bash", "input": {"command": "ls"}}]}),
        # t4 never answered; the conversation went on (a broken parent too)
        L(type="user", uuid="u5", parentUuid="missing-uuid", message={"role": "user", "content": "next"}),
        L(type="assistant", uuid="a5", parentUuid="u5", message={"id": "m4", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "plan", "signature": SIG},
            {"type": "tool_use", "id": "t5", "name": "Bash", "input": {"command": "ls"}}]}),
        # the file ends mid-turn: t5 is still open (a live session may answer it)
    ], big, secret


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.utime(path, (1, 1))  # long idle
    return path


def read(path):
    return [json.loads(x) for x in path.read_bytes().splitlines()]


def blocks(rows, t):
    for r in rows:
        c = (r.get("message") or {}).get("content")
        for b in c if isinstance(c, list) else []:
            if isinstance(b, dict) and b.get("type") == t:
                yield r, b


def keys_in(text):
    return [x.split()[0] for x in text.split("sha256:")[1:]]


def test_made_up_transcript(settings, store, tmp_path):
    rows, big, secret = made_up()
    path = write(tmp_path / "S.jsonl", rows)
    original = path.read_bytes()
    report, backup = purge_file(str(path), settings, store)
    assert open(backup, "rb").read() == original
    out = read(path)
    by = {r.get("uuid"): r for r in out}
    # thinking gone; the line left empty is dropped, not kept as content: [] (seed fault)
    assert "a1" not in by
    assert not [b for _, b in blocks(out, "thinking")]
    assert all(r["message"]["content"] != [] for r in out if "message" in r)
    # its children take its parent; no parent is moved onto a progress line (seed fault)
    assert by["a2"]["parentUuid"] == "u1" and by["p1"]["parentUuid"] == "u1"
    assert by["a3"]["parentUuid"] == "u2"
    assert by["u5"]["parentUuid"] != "missing-uuid" and not by[by["u5"]["parentUuid"]]["type"] == "progress"
    uuids = {r.get("uuid") for r in out}
    for r in out:
        assert r.get("parentUuid") is None or r["parentUuid"] in uuids
    # orphan tool_result removed with its line; a tool_use without a result
    # is left as it is: a repair never invents content (no made-up result)
    assert "u4" not in by
    results = {b["tool_use_id"]: (r, b) for r, b in blocks(out, "tool_result")}
    assert "gone" not in results
    assert "t4" not in results and "t5" not in results
    assert by["u5"]["parentUuid"] == "a4"
    assert b"repaired by engine purge" not in path.read_bytes() and len(out) == len(rows) - 2  # a1, u4
    # every output over the threshold is a stub whose content reads back exact
    assert results["t1"][1]["content"].startswith("[CCM_CACHED]")
    assert store.get(keys_in(results["t1"][1]["content"])[0]) == big.encode()
    assert store.get(keys_in(results["t2"][1]["content"][0]["text"])[0]) == (big + "x").encode()
    assert store.get(keys_in(by["u2"]["toolUseResult"]["stdout"])[0]) == big.encode()
    assert by["u2"]["toolUseResult"]["interrupted"] is False
    assert store.get(keys_in(by["p2"]["data"]["output"])[0]) == big.encode()
    # the output holding a secret stays inline, and no blob holds the secret
    assert results["t3"][1]["content"].startswith("KEY=" + secret)
    for k in store.keys():
        assert secret.encode() not in store.get(k)
    assert len(store.keys()) == 2
    assert report.bytes_out < report.bytes_in / 3


def test_keep_thinking_leaves_signatures_untouched(settings, store, tmp_path):
    rows, _, _ = made_up()
    path = write(tmp_path / "S.jsonl", rows)
    purge_file(str(path), settings, store, keep_thinking=True)
    kept = [b for _, b in blocks(read(path), "thinking")]
    assert len(kept) == 2 and all(b["signature"] == SIG for b in kept)
    assert kept[0] == rows[3]["message"]["content"][0]


def test_dry_run_and_analyze_write_nothing(settings, store, tmp_path):
    """Seed fault: its --dry-run still wrote blobs."""
    rows, _, _ = made_up()
    path = write(tmp_path / "S.jsonl", rows)
    before = path.read_bytes()
    for kw in ({"dry_run": True}, {"analyze": True}):
        report, backup = purge_file(str(path), settings, store, **kw)
        assert backup is None and report.keys and report.bytes_out < report.bytes_in
    assert path.read_bytes() == before
    assert not os.path.exists(store.root)
    assert os.listdir(tmp_path) == ["S.jsonl"]


def test_repair_only_removes_nothing_but_repairs(settings, store, tmp_path):
    rows, big, _ = made_up()
    path = write(tmp_path / "S.jsonl", rows)
    purge_file(str(path), settings, store, repair_only=True)
    out = read(path)
    assert len([b for _, b in blocks(out, "thinking")]) == 2
    assert {b["tool_use_id"] for _, b in blocks(out, "tool_result")} == {"t1", "t2", "t3"}
    assert not os.path.exists(store.root)


def test_a_live_transcript_is_refused_unless_forced(settings, store, tmp_path):
    rows, _, _ = made_up()
    path = tmp_path / "S.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))  # just written
    with pytest.raises(UserError, match="live session"):
        purge_file(str(path), settings, store)
    purge_file(str(path), settings, store, force=True)


def test_backups_never_overwrite_each_other(settings, store, tmp_path):
    rows, _, _ = made_up()
    path = write(tmp_path / "S.jsonl", rows)
    _, b1 = purge_file(str(path), settings, store)
    # something new to remove (a purged transcript with nothing new is not rewritten, and gets no backup)
    with open(path, "a") as fh:
        fh.write(json.dumps(L(type="assistant", uuid="a9", parentUuid="a5", message={
            "id": "m9", "role": "assistant", "content": [{"type": "thinking", "thinking": "more", "signature": SIG},
                                                         {"type": "text", "text": "done"}]})) + "\n")
    _, b2 = purge_file(str(path), settings, store, force=True)
    assert b1 != b2 and os.path.exists(b1) and os.path.exists(b2)


@pytest.mark.parametrize("name", REAL, ids=[n[:12] for n in REAL])
def test_real_transcripts(settings, store, tmp_path, name):
    src = transcript(name)
    path = tmp_path / name
    shutil.copy(src, path)
    os.utime(path, (1, 1))
    orig_rows = [json.loads(x) for x in open(src, "rb")]
    orig_results = {b["tool_use_id"]: b for _, b in blocks(orig_rows, "tool_result")}
    report, _ = purge_file(str(path), settings, store)
    out = read(path)  # every line parses
    uses = {b["id"] for _, b in blocks(out, "tool_use")}
    results = {b["tool_use_id"]: b for _, b in blocks(out, "tool_result")}
    open_before = {b["id"] for _, b in blocks(orig_rows, "tool_use")} - set(orig_results)
    assert uses - set(results) <= open_before, "a tool_use lost its tool_result"
    for tid, b in results.items():
        c, o = b["content"], orig_results.get(tid, {}).get("content")
        if isinstance(c, str) and c.startswith("[CCM_CACHED]"):
            assert store.get(keys_in(c)[0]) == o.encode("utf-8")
    for line in path.read_bytes().splitlines():
        for k in keys_in(line.decode()):
            assert store.get(k[:64]) is not None
    assert report.bytes_out < report.bytes_in
    # The session report of the purged file counts what the model read, as
    # that of the original does: the outputs, not the stubs.
    from engine.ccm.stub import purge_reader
    from engine.session import build_report, load_style

    style, original = load_style(), purge_reader()
    before, after = (build_report(str(p), style, original=original) for p in (src, path))
    texts = [t for b in results.values() for t in ([b["content"]] if isinstance(b["content"], str) else
                                                  [x.get("text") for x in b["content"] if isinstance(x, dict)])]
    stubbed = sum(1 for t in texts if isinstance(t, str) and t.startswith("[CCM_CACHED]"))
    assert after["purged_results"] == stubbed and before["purged_results"] == 0
    for field in ("tools", "tool_result_bytes", "tools_in_context", "tool_result_bytes_in_context", "api_calls"):
        assert after[field] == before[field], field


def test_cli_analyze_and_errors(tmp_path):
    rows, _, _ = made_up()
    path = write(tmp_path / "S.jsonl", rows)
    env = dict(os.environ, PYTHONPATH=REPO, ENGINE_CACHE_DIR=str(tmp_path / "c"), HOME=str(tmp_path))
    r = forkrun.completed(["purge", str(path), "--analyze", "--json"], env=env)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["written"] is False and res["kinds"]["thinking"]["tokens"] > 0 and res["kinds"]["tool_result"]["bytes"] > 0
    r = forkrun.completed(["purge", str(tmp_path / "nope.jsonl")], env=env)
    assert r.returncode == 1 and "Traceback" not in r.stderr and len(r.stderr.splitlines()) == 1


def _prose_session(n=6):
    """A conversation of n long assistant answers, each with a thinking
    block and a negation the summary must keep."""
    rows, parent = [], None
    for i in range(n):
        u = L(type="user", uuid=f"u{i}", parentUuid=parent, message={"role": "user", "content": f"question {i}?"})
        prose = (f"Answer {i}. Never run `make deploy-{i}` on the shared host without a ticket. "
                 + " ".join(f"The step {j} of the plan rebuilds the cache in src/mod{i}/part{j}.py and checks it."
                            for j in range(12)))
        a = L(type="assistant", uuid=f"a{i}", parentUuid=f"u{i}", message={"id": f"m{i}", "role": "assistant", "content": [
            {"type": "thinking", "thinking": "consider", "signature": SIG}, {"type": "text", "text": prose}]})
        rows += [u, a]
        parent = f"a{i}"
    return rows


def test_summarize_caches_each_original_and_keeps_the_recent_ones(settings, store, tmp_path):
    rows = _prose_session()
    path = write(tmp_path / "S.jsonl", rows)
    report, _ = purge_file(str(path), settings, store, keep_thinking=True, summarize=True, recency=4)
    out = read(path)
    assert len(out) == len(rows)
    for before, after in zip(rows, out):
        if before["type"] != "assistant":
            assert after == before
            continue
        i = int(before["uuid"][1:])
        text = after["message"]["content"][-1]["text"]
        if i < 4:  # 12 messages, the last 4 (assistant 4 and 5 with their questions) stay whole
            assert text.startswith("[summary:") and f"Never run `make deploy-{i}`" in text, text
            assert after["message"]["content"][0] == before["message"]["content"][0], "thinking changed"
            (key,) = keys_in(text)
            original = json.dumps(before["message"]["content"], ensure_ascii=False).encode("utf-8")
            assert store.get(key[:64]) == original
        else:
            assert after == before
    assert report.kinds["assistant_prose"][0] == 4


def test_summarize_on_a_dry_run_writes_nothing(settings, store, tmp_path):
    path = write(tmp_path / "S.jsonl", _prose_session())
    before = path.read_bytes()
    report, backup = purge_file(str(path), settings, store, summarize=True, recency=0, dry_run=True)
    assert backup is None and path.read_bytes() == before
    assert report.kinds["assistant_prose"][0] == 6
    assert not os.path.exists(tmp_path / "ccm" / "blobs") or not os.listdir(tmp_path / "ccm" / "blobs")


def test_the_report_command_of_a_purged_transcript_gives_the_originals_figures(cli, tmp_path):
    path = tmp_path / "s.jsonl"
    shutil.copy(transcript("24-erk-interactive-12prompts-api500-393e5f27.jsonl"), path)
    os.utime(path, (1, 1))
    before = json.loads(cli("session", "report", path, "--json").out)
    purged = cli("purge", path, "--force")
    assert purged.returncode == 0
    # its thinking blocks went without a stub: the backup is their only copy, and the user is told so
    assert "  thinking: 16 x" in purged.out and "(the only copy of what went without a stub" in purged.out, purged.out
    run = cli("session", "report", path, "--json")
    after = json.loads(run.out)
    assert after["purged_results"] > 0 and after["tools"] == before["tools"], run
    assert "Purged: " in cli("session", "report", path).out


def _strict_lines(path):
    """The file's lines as JSON read from strict UTF-8, as the agent reads them."""
    return [json.loads(x.decode("utf-8")) for x in path.read_bytes().splitlines()]


def test_a_lone_surrogate_in_a_rewritten_line_stays_an_escape(settings, store, tmp_path):
    """JSON may escape half a surrogate pair ("\\udc80": an output cut in the
    middle of an emoji).  A line purge rewrites keeps it as that escape: it
    wrote the raw surrogate (ED B2 80, no UTF-8), so no JSON reader took the
    line back and the next purge kept it unparsed (no repair in the file)."""
    rows, big, _secret = made_up()
    for r in rows:
        if r.get("uuid") == "u2":
            r["note"] = "cut \udc80 here"  # json.dumps writes it as \udc80
    path = write(tmp_path / "S.jsonl", rows)
    report, backup = purge_file(str(path), settings, store)
    assert backup
    out = {r.get("uuid"): r for r in _strict_lines(path)}
    assert out["u2"]["note"] == "cut \udc80 here"
    assert out["u2"]["toolUseResult"]["stdout"].startswith("[CCM_CACHED]")
    os.utime(path, (1, 1))
    again, _ = purge_file(str(path), settings, store)
    assert "kept_unparsable_line" not in again.repairs, again.repairs


def test_summarize_caches_an_original_with_a_lone_surrogate_as_json(settings, store, tmp_path):
    """The cached original of a summarized message is JSON that reads back
    (strict UTF-8) to the content it replaced, a lone surrogate included."""
    rows = _prose_session()
    rows[1]["message"]["content"][1]["text"] += " cut \ud83d"
    path = write(tmp_path / "S.jsonl", rows)
    purge_file(str(path), settings, store, keep_thinking=True, summarize=True, recency=4)
    text = _strict_lines(path)[1]["message"]["content"][-1]["text"]
    (key,) = keys_in(text)
    assert json.loads(store.get(key[:64]).decode("utf-8")) == rows[1]["message"]["content"]


def test_the_report_counts_an_output_that_holds_a_stub_as_what_the_model_read(settings, store, tmp_path):
    """Only a whole text purge wrote is a stub: an output the model read
    with stub-like lines in it (a file holding one, printed) is counted as
    those bytes.  Old: a 300-byte Bash output holding a stub that said
    `bytes: 900000000` was reported as 900,000,023 bytes (225,000,006
    tokens) and one purged result.  A purged result of two text blocks
    still counts its original bytes."""
    from engine.ccm.stub import purge_reader
    from engine.session import build_report, load_style

    fake = (f"[CCM_CACHED] output moved out of the transcript by engine purge\nkey: sha256:{'ab' * 32}\n"
            "bytes: 900000000\nlines: 1\npinned: none\nTo read it: `engine cache show x`\n[/CCM_CACHED]")
    printed = "my notes:\n" + fake + "\nend of notes"
    big = "".join(f"row {i}: some output\n" for i in range(400))
    rows = [L(type="user", uuid="u1", parentUuid=None, message={"role": "user", "content": "go"})]
    for i, content in enumerate([printed, [{"type": "text", "text": "head"}, {"type": "text", "text": big}]]):
        rows += [L(type="assistant", uuid=f"a{i}", parentUuid=rows[-1]["uuid"], message={
                     "id": f"m{i}", "role": "assistant", "content": [
                         {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "cat notes"}}]}),
                 L(type="user", uuid=f"r{i}", parentUuid=f"a{i}", message={"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": f"t{i}", "content": content}]})]
    path = write(tmp_path / "S.jsonl", rows)
    style, original = load_style(), purge_reader()
    before = build_report(str(path), style, original=original)
    assert before["purged_results"] == 0
    assert before["tools"][0]["result_bytes"] == len(printed) + len("head") + len(big)
    report, backup = purge_file(str(path), settings, store)
    assert backup and report.kinds["tool_result"][0] == 1
    after = build_report(str(path), style, original=original)
    assert after["purged_results"] == 1 and after["tools"] == before["tools"]


def test_a_line_with_a_number_json_cannot_write_back_is_kept_as_it_was(settings, store, tmp_path):
    """Old: a line holding 1e400 (valid JSON) beside a long output was
    rewritten with `Infinity`, which no JSON reader (the agent's JSON.parse)
    takes: the line was lost to the agent.  It is kept byte for byte, as a
    line purge cannot parse."""
    rows, _big, _secret = made_up()
    path = write(tmp_path / "S.jsonl", rows)
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if b'"uuid": "u2"' in x)
    lines[at] = lines[at].replace(b'"uuid": "u2"', b'"n": 1e400, "uuid": "u2"')
    path.write_bytes(b"".join(lines))
    os.utime(path, (1, 1))
    report, backup = purge_file(str(path), settings, store)
    assert backup and report.repairs.get("kept_unparsable_line") == 1
    assert lines[at] in path.read_bytes().splitlines(keepends=True)
    assert b"Infinity" not in path.read_bytes()


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_another_agents_transcript_is_refused_and_left_as_it_was(cli, tmp_path, agent):
    """Only Claude Code's format is one purge rewrites (`transcript.purge` of
    the agent's YAML): another agent's session is refused with its name,
    not reported as having nothing to remove, and no byte of it changes."""
    from testdata import agent_transcript

    (tmp_path / "sessions").mkdir()
    path = tmp_path / "sessions" / agent_transcript(agent).name
    shutil.copy(agent_transcript(agent), path)
    os.utime(path, (1, 1))
    before = path.read_bytes()
    run = cli("purge", path, "--force")
    assert run.returncode == 1 and run.out == "", run
    display = {"codex": "Codex CLI", "gemini": "Gemini CLI", "copilot": "Copilot CLI"}[agent]
    assert run.err.startswith(f"{path}:") and f"a transcript of {display}" in run.err and "Claude Code" in run.err, run
    assert path.read_bytes() == before and os.listdir(path.parent) == [path.name], "no backup, no temporary file"


def _line_beside_a_long_output(tmp_path, old, new):
    """The made-up transcript with the line of the long output (u2) edited."""
    rows, _big, _secret = made_up()
    path = write(tmp_path / "S.jsonl", rows)
    lines = path.read_bytes().splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if b'"uuid": "u2"' in x)
    lines[at] = lines[at].replace(old, new)
    path.write_bytes(b"".join(lines))
    os.utime(path, (1, 1))
    return path, lines[at]


def test_a_rewritten_line_keeps_each_number_as_it_was_written(settings, store, tmp_path):
    """Old: the line of a purged output was written back by json.dumps, so
    1E5 became 100000.0, 1e-7 became 1e-07 and -0 became 0 (JSON.stringify
    writes 1e-7 and 0.00001 that way; Python writes neither)."""
    numbers = b'"n": [1E5, 1e-7, 0.00001, -0, 1.50, 2.5, 12], "uuid": "u2"'
    path, _line = _line_beside_a_long_output(tmp_path, b'"uuid": "u2"', numbers)
    report, backup = purge_file(str(path), settings, store)
    assert backup and "kept_unparsable_line" not in report.repairs
    (out,) = [x for x in path.read_bytes().splitlines() if b'"uuid":"u2"' in x]
    assert b'"n":[1E5,1e-7,0.00001,-0,1.50,2.5,12]' in out
    assert json.loads(out)["toolUseResult"]["stdout"].startswith("[CCM_CACHED]")


def test_a_line_naming_a_key_twice_is_kept_as_it_was(settings, store, tmp_path):
    """Old: a line with a key twice beside a long output was rewritten with
    the key's last value only; the first one's bytes were gone (but for the
    backup, which purge prunes).  It is kept byte for byte."""
    path, line = _line_beside_a_long_output(tmp_path, b'"uuid": "u2"', b'"k": "first", "k": "last", "uuid": "u2"')
    report, _backup = purge_file(str(path), settings, store)
    assert report.repairs.get("kept_unparsable_line") == 1
    assert line in path.read_bytes().splitlines(keepends=True)
