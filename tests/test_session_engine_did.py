"""`engine session report`: what the engine did (issue 17, item 6), from the
hooks' own records.  Real hook processes answer a small scripted session;
the report then shows the figures the hooks recorded: tokens added by
handler, tokens kept out (a large Bash output replaced by its stub), the
net; `--since` sums every session of a period; the HTML page escapes."""

import json
import os
import stat

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

BIG = "".join(f"line {i} of a long build log\n" for i in range(400))  # ~11 KB, over the 2,000-byte threshold


def _transcript(hk, session=None, version="2.1.330"):
    session = session or hk.session
    recs = [
        {"type": "user", "version": version, "sessionId": session, "uuid": "u1", "timestamp": "2026-11-20T10:00:00Z",
         "message": {"role": "user", "content": "build it"}},
        {"type": "assistant", "version": version, "sessionId": session, "uuid": "a1",
         "timestamp": "2026-11-20T10:00:05Z",
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-x",
                     "content": [{"type": "tool_use", "id": "toolu_01", "name": "Bash",
                                  "input": {"command": "make all"}}],
                     "usage": {"input_tokens": 10, "cache_creation_input_tokens": 1000,
                               "cache_read_input_tokens": 5000, "output_tokens": 20}}},
    ]
    if version is None:  # no agent's version: nothing is taken as already in view (engine/hooks/inview.py)
        for r in recs:
            del r["version"]
    path = hk.transcript if session == hk.session else hk.transcript.with_name(f"{session}.jsonl")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def _env(hk):
    return {"CLAUDE_PROJECT_DIR": hk.project, "CLAUDE_CONFIG_DIR": hk.home / ".claude"}


def _session(hk, session=None):
    """A compaction (rules injected: the transcript names no agent version
    yet, so nothing counts as in view already), a prompt (nothing due), a
    large Bash output (kept out: by then the transcript names an agent that
    takes a replaced output), a small one (nothing): what each answer gave.
    Effort high: no effort policy beside the rules at the compaction."""
    session = session or hk.session
    prof = shared_profile(profile_text(effort="high"))
    path = str(_transcript(hk, session, version=None))
    injected, kept = 0, []
    run = hk.hook(hk.event("SessionStart", source="compact", session=session, transcript_path=path),
                  env=_env(hk), profile=prof).assert_ok()
    injected += len(run.context)
    _transcript(hk, session)
    assert hk.hook(hk.prompt(1, session=session, transcript_path=path), env=_env(hk), profile=prof).assert_ok().stdout == ""
    resp = {"stdout": BIG, "stderr": "", "interrupted": False, "isImage": False}
    big = hk.hook(hk.event("PostToolUse", session=session, tool_name="Bash", tool_input={"command": "make all"},
                           tool_response=resp, transcript_path=path), env=_env(hk), profile=prof).assert_ok()
    stub = big.json["hookSpecificOutput"]["updatedToolOutput"]["stdout"]
    kept.append((len(BIG.encode()), len(stub.encode())))
    small = hk.hook(hk.event("PostToolUse", session=session, transcript_path=path), env=_env(hk), profile=prof).assert_ok()
    assert small.stdout == ""
    return injected, kept


def _report(hk, *args):
    run = hk.engine("session", "report", *args, env=_env(hk))
    assert run.returncode == 0, str(run)
    return run


def test_the_report_shows_what_the_hooks_recorded(hk):
    """Old code: the hooks recorded nothing and the report had no figures of
    what the engine added or kept out."""
    hk.rule("style.md", "# Style\nMarker STYLE: run the formatter before every commit.\n")
    injected, kept = _session(hk)
    records = hk.state / "records"
    files = list(records.glob("*.ndjson"))
    assert len(files) == 1, files
    assert stat.S_IMODE(os.stat(records).st_mode) == 0o700 and stat.S_IMODE(os.stat(files[0]).st_mode) == 0o600
    lines = [json.loads(l) for l in files[0].read_text().splitlines()]
    assert [l["event"] for l in lines] == ["session_start", "post_tool"], "only events that answered are recorded"
    assert "STYLE" not in files[0].read_text() and "make all" not in files[0].read_text(), "numbers, not texts"
    # The figures: characters as the agent read them, tokens at 4.2 chars and 4 bytes a token.
    assert [(a["handler"], a["chars"]) for a in lines[0]["added"]] == [("rules", injected)]
    (before, after), = kept
    assert lines[1]["kept_out"] == [{"handler": "large_bash_output", "bytes_before": before, "bytes_after": after,
                                     "tokens": round((before - after) / 4)}]
    r = json.loads(_report(hk, str(hk.transcript), "--json").stdout)["engine"]
    assert r["recorded_events"] == 2
    assert r["added"] == [{"handler": "rules", "count": 1, "chars": injected, "tokens": round(injected / 4.2)}]
    assert r["kept_out"] == {"outputs": 1, "bytes_before": before, "bytes_after": after,
                             "tokens": round((before - after) / 4)}
    assert r["net_tokens"] == round(injected / 4.2) - round((before - after) / 4) < 0
    text = _report(hk, str(hk.transcript)).stdout
    assert "What the engine did" in text
    assert f"~{round(injected / 4.2):,} tokens ({injected:,} characters)" in text
    assert f"kept out: ~{round((before - after) / 4):,} tokens (1 output(s), {before:,} bytes in" in text
    assert f"net: ~{-r['net_tokens']:,} tokens saved" in text


def test_a_session_without_records_says_so(hk):
    _transcript(hk)
    r = json.loads(_report(hk, str(hk.transcript), "--json").stdout)["engine"]
    assert r["recorded_events"] == 0 and r["net_tokens"] == 0 and r["added"] == []
    assert "none for this session" in _report(hk, str(hk.transcript)).stdout


def test_since_sums_every_session_of_the_period(hk):
    hk.rule("style.md", "# Style\nMarker STYLE: run the formatter before every commit.\n")
    one = _session(hk)
    other = "0b5e5510-aaaa-4bbb-8ccc-000000000002"
    two = _session(hk, other)
    old = _transcript(hk, "0ld5e551-0000-4000-8000-000000000003")  # changed 30 days ago: out of the period
    os.utime(old, (os.stat(old).st_atime, os.stat(old).st_mtime - 30 * 86400))
    period = json.loads(_report(hk, "--since", "7d", "--json").stdout)
    rows = {s["session_id"]: s for s in period["sessions"]}
    assert set(rows) == {hk.session, other}
    for sid, (injected, kept) in ((hk.session, one), (other, two)):
        assert rows[sid]["added_tokens"] == round(injected / 4.2)
        assert rows[sid]["kept_out_tokens"] == sum(round((b - a) / 4) for b, a in kept)
    t = period["totals"]
    assert t["sessions"] == 2 and t["recorded_sessions"] == 2
    assert t["added_tokens"] == sum(s["added_tokens"] for s in rows.values())
    assert t["kept_out_tokens"] == sum(s["kept_out_tokens"] for s in rows.values())
    assert t["net_tokens"] == t["added_tokens"] - t["kept_out_tokens"]
    # the time of the last change is UTC and says so, as the transcripts' times are
    import time

    ended = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.stat(hk.transcript).st_mtime))
    assert rows[hk.session]["ended"] == ended, rows[hk.session]
    text = _report(hk, "--since", "7d").stdout
    assert hk.session in text and other in text and "total (~tokens)" in text
    assert "last change (UTC)" in text and ended in text
    assert f"{t['net_tokens']:+,}" in text
    bad = hk.engine("session", "report", "--since", "seven", env=_env(hk))
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "--since" in bad.stderr


def test_the_html_forms_render_and_escape(hk, tmp_path):
    hk.rule("style.md", "# Style\nMarker STYLE: run the formatter.\n")
    injected, _kept = _session(hk)
    page = tmp_path / "r.html"
    _report(hk, str(hk.transcript), "--html", page)
    html = page.read_text()
    assert "What the engine did" in html and "<td>rules</td>" in html and f">{injected:,}<" in html
    assert stat.S_IMODE(os.stat(page).st_mode) == 0o600
    # A session id is a file name: whatever it holds reaches the page escaped.
    odd = "<i>&x"
    _transcript(hk, odd)
    week = tmp_path / "week.html"
    _report(hk, "--since", "7d", "--html", week)
    w = week.read_text()
    assert w.startswith("<!DOCTYPE html>") and hk.session in w
    # the additions by handler, as the terminal form lists them
    for a in json.loads(_report(hk, "--since", "7d", "--json").stdout)["totals"]["added"]:
        assert f"<td>{a['handler']}</td><td class=\"n\">{a['count']}</td><td class=\"n\">{a['tokens']:,}</td>" in w
    assert "&lt;i&gt;&amp;x" in w and "<i>" not in w
    assert stat.S_IMODE(os.stat(week).st_mode) == 0o600
