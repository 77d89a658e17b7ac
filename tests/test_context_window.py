"""The context window the monitor and the session report measure the fill
against, for the models Claude Code 2.1.332 runs.

Measured with the real agent (tests/support/AGENTS-MEASURED.md, "Context
windows"): `--model claude-opus-4-6[1m]` sends the model without the tag
(with the context-1m beta header) and records message.model
`claude-opus-4-6`; the line's `requestedModel` keeps the tag.  Its own model
table gives Opus 4.7 and later, Sonnet 5 and 5.5, Haiku 5.5, Fable and
Mythos a native 1,000,000-token window, and its `opus` and `sonnet` are
claude-opus-5-5 and claude-sonnet-5-5.  Old code: every such session was
measured against 200,000 tokens (its YAML knew only the `[1m]` tag, which
message.model never holds): at 140,000 tokens of a 1,000,000 window the
user read "Context 70% full (140000 of 200000 tokens)", at 160,000 80%, at
180,000 90%, and the report drew the same."""

import json

import pytest

from engine.agents import table
from engine.hooks import fill
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture


def _response(hk, n, tokens, model, requested=None, tool="Read", size=200):
    """A response of `tokens` input tokens on `model` calling `tool`, and its result of `size` bytes."""
    tid = f"toolu_{n:04d}"
    line = {"type": "assistant", "isSidechain": False, "sessionId": hk.session, "uuid": f"a{n}",
            "message": {"id": f"msg_{n}", "role": "assistant", "model": model, "type": "message",
                        "content": [{"type": "tool_use", "id": tid, "name": tool, "input": {"file_path": "/f"}}],
                        "usage": {"input_tokens": tokens, "output_tokens": 10}}}
    if requested:
        line["requestedModel"] = requested
    result = {"type": "user", "isSidechain": False, "sessionId": hk.session, "uuid": f"r{n}",
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                       "content": "x" * size}]}}
    return [line, result]


def _post(hk, n):
    return hk.event("PostToolUse", tool_name="Read", tool_input={"file_path": "/f"}, tool_use_id=f"toolu_{n:04d}",
                    tool_response={"type": "text"})


def _said(run):
    return run.json.get("systemMessage", "") if run.stdout.strip() else ""


def test_the_windows_of_the_models_claude_code_runs():
    claude = table.get("claude-code")
    for model in ("claude-opus-5-5", "claude-sonnet-5-5", "claude-opus-4-7", "claude-haiku-5-5",
                  "claude-opus-4-6[1m]", "claude-sonnet-4-6[1m]"):
        assert fill.window(claude, fill.Usage(150000, model, 0)) == 1000000, model
    for model in ("claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-4-5-20251001", "claude-opus-4-5", None):
        assert fill.window(claude, fill.Usage(150000, model, 0)) == 200000, model
    assert fill.window(claude, fill.Usage(250000, "claude-opus-4-6", 0)) == 1000000, "only a long window gets there"


def test_the_reader_keeps_the_tag_the_model_was_asked_for_with(tmp_path):
    from engine.agents.transcripts import forwards
    from engine.core.transcript import Problems

    path = tmp_path / "t.jsonl"
    lines = [{"type": "assistant", "sessionId": "s", "requestedModel": requested,
              "message": {"id": f"m{i}", "role": "assistant", "model": model, "content": [],
                          "usage": {"input_tokens": 10, "output_tokens": 1}}}
             for i, (model, requested) in enumerate((("claude-opus-4-6", "claude-opus-4-6[1m]"),
                                                     ("claude-sonnet-5-5", "claude-opus-5-5"),
                                                     ("claude-sonnet-4-6", None)))]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with open(path, "rb") as fh:
        models = [r.model for r in forwards("claude", fh, {"max_line_bytes": 1 << 20, "chunk_bytes": 1 << 16}, Problems())
                  if r.kind == "usage"]
    # a fallback or another requested model is not the one that answered
    assert models == ["claude-opus-4-6[1m]", "claude-sonnet-5-5", "claude-sonnet-4-6"]


@pytest.mark.parametrize("model,requested", [("claude-opus-5-5", None), ("claude-opus-4-6", "claude-opus-4-6[1m]")])
def test_a_long_window_session_hears_no_warning_at_eighteen_percent(hk, model, requested):
    hk.write_transcript(_response(hk, 1, 50000, model, requested, size=140000)
                        + _response(hk, 2, 185000, model, requested, size=200))
    said = _said(hk.hook(_post(hk, 2)))
    assert said == "", said
    report = json.loads(hk.engine("session", "report", str(hk.transcript), "--json").stdout)
    assert report["context_window"] == 1000000 and report["peak"]["percent"] == 18.5, report["peak"]


def test_a_switch_to_a_smaller_window_is_read(hk):
    """The gate counted growth against the window read last: after a read
    at 15% of a 1,000,000 window it waited for 700,000 tokens, and a switch
    to a 200,000-token model filled past 70% unread until the compaction."""
    records = _response(hk, 1, 150000, "claude-opus-5-5", size=50000)
    hk.write_transcript(records)
    assert _said(hk.hook(_post(hk, 1))) == ""
    hk.append_transcript(_response(hk, 2, 151000, "claude-opus-4-6", size=200))
    said = _said(hk.hook(_post(hk, 2)))
    assert "Context 75% full (151000 of 200000 tokens, past 70%)" in said, said


def test_a_switch_to_a_larger_window_warns_again_at_its_thresholds(hk):
    """Warned at 75% of 200,000; the model then changes to one of 1,000,000
    tokens (16%): its 70% is another figure, warned when reached, though no
    compaction came between."""
    hk.write_transcript(_response(hk, 1, 150000, "claude-opus-4-6", size=200))
    assert "past 70%" in _said(hk.hook(_post(hk, 1)))
    hk.append_transcript(_response(hk, 2, 160000, "claude-opus-5-5", size=600000))
    assert _said(hk.hook(_post(hk, 2))) == ""
    hk.append_transcript(_response(hk, 3, 750000, "claude-opus-5-5", size=200))
    assert "Context 75% full (750000 of 1000000 tokens, past 70%)" in _said(hk.hook(_post(hk, 3)))
