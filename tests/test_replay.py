"""`engine replay`: recorded sessions through a profile's hooks, offline.

- the pricing model on a hand-made transcript (numbers checked by hand);
- a kept-out Bash output is the original minus the stub the model reads;
- the user's state, cache and memory are untouched (the run lives in a
  throwaway world);
- --json shape, --html escaped and private.
That the replay's totals equal the sum of the real hook command's answers on
real sessions is checked where those sessions are fed to the hook command
event by event (tests/test_real_sessions.py).
"""

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import forkrun
from engine.replay.events import events
from engine.replay.pricing import Timeline, family, load, price
from hook_fixtures import profile_text

REPO = Path(__file__).resolve().parent.parent
BIG = "line of a long build log\n" * 400  # 10,000 bytes: over the 2,000-byte threshold


def _lines(version="2.1.200"):
    base = {"sessionId": "s1", "cwd": "/nowhere", "version": version}
    return [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "build it"}},
        {**base, "type": "assistant", "uuid": "a1", "message": {
            "id": "m1", "model": "claude-opus-4-6", "role": "assistant", "usage": {"input_tokens": 10},
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make all"}}]}},
        {**base, "type": "user", "uuid": "u2", "toolUseResult": {"stdout": BIG, "stderr": "", "interrupted": False,
                                                                 "isImage": False},
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": BIG}]}},
        {**base, "type": "assistant", "uuid": "a2", "message": {
            "id": "m2", "model": "claude-opus-4-6", "role": "assistant", "usage": {"input_tokens": 10},
            "content": [{"type": "text", "text": "done"}]}},
        {**base, "type": "system", "subtype": "compact_boundary", "uuid": "c1",
         "compactMetadata": {"trigger": "manual"}},
        {**base, "type": "user", "uuid": "u3", "isCompactSummary": True,
         "message": {"role": "user", "content": "summary"}},
        {**base, "type": "assistant", "uuid": "a3", "message": {
            "id": "m3", "model": "claude-opus-4-6", "role": "assistant", "usage": {"input_tokens": 10},
            "content": [{"type": "text", "text": "ok"}]}},
        {**base, "type": "assistant", "uuid": "a4", "message": {
            "id": "m4", "model": "claude-opus-4-6", "role": "assistant", "usage": {"input_tokens": 10},
            "content": [{"type": "text", "text": "ok again"}]}},
    ]


def tiny(tmp_path, name="tiny.jsonl", version="2.1.200"):
    path = tmp_path / name
    path.write_bytes(b"".join(json.dumps(l).encode() + b"\n" for l in _lines(version)))
    return path


def test_pricing_model_by_hand(tmp_path):
    """Four API calls, a compaction between the 2nd and the 3rd: an addition
    before call 1 is written by it and read by call 2 and by the
    compaction's own request (no usage record shows it: measured with
    Claude Code 2.1.330), not after the compaction; one before call 2 is
    written by it and read by the compaction's request; one after the
    compaction is written by call 3 and read by call 4."""
    path = tiny(tmp_path)
    data = path.read_bytes()
    t = Timeline(path)
    assert [e for _, e in t.calls] == [0, 0, 1, 1] and len(t.boundaries) == 1 and t.model == "claude-opus-4-6"
    by_name = {ev["hook_event_name"] + ev.get("source", ""): off for ev, off in events(path)}
    assert t.exposure(by_name["UserPromptSubmit"]) == (1, 2)
    assert t.exposure(by_name["PostToolUse"]) == (1, 1)
    assert t.exposure(by_name["SessionStartcompact"]) == (1, 1)
    assert t.exposure(len(data)) == (0, 0)  # after the last call: never sent
    rates = family(load(), t.model)
    assert (rates["input"], rates["cache_write"], rates["cache_read"]) == (5.0, 6.25, 0.5)
    assert rates["cache_write"] == 1.25 * rates["input"] and rates["cache_read"] == pytest.approx(0.1 * rates["input"])
    # 1,000 tokens written once and read once: 1000 * (6.25 + 0.5) / 1e6
    assert price(1000, 1, 1, rates, 1_000_000) == pytest.approx(0.00675)
    assert family(load(), "claude-sonnet-4-5")["input"] == 3.0
    # Opus 4's dated id names no minor version: $15, not Opus 4.5's $5; Haiku 3 is not Haiku 3.5
    assert [family(load(), m)["input"] for m in ("claude-opus-4-20250514", "claude-opus-4-1-20250805",
                                                 "claude-opus-4-5-20251101", "claude-opus-4-6")] == [15.0, 15.0, 5.0, 5.0]
    assert [family(load(), m)["input"] for m in ("claude-3-haiku-20240307", "claude-3-5-haiku-20241022")] == [0.25, 0.8]
    # the 5.x models at Claude Code 2.1.332's own table's rates (its opus and sonnet are the 5.5 ones):
    # (input, cache write, 1-hour write, cache read, output)
    rows = {"claude-opus-5-5": (4, 5, 8, 0.2, 20), "claude-opus-5": (5, 6.25, 10, 0.5, 25),
            "claude-opus-5-20260301": (5, 6.25, 10, 0.5, 25), "claude-sonnet-5-5": (2, 2.5, 4, 0.1, 10),
            "claude-sonnet-5": (2, 2.5, 4, 0.2, 10), "claude-fable-5-2": (8, 10, 16, 0.2, 40),
            "claude-mythos-5-1": (10, 12.5, 20, 0.25, 50), "claude-fable-5": (10, 12.5, 20, 1, 50),
            "claude-haiku-5-5": (0.1, 0.125, 0.2, 0.01, 0.5), "claude-opus-4.8": (5, 6.25, 10, 0.5, 25)}
    keys = ("input", "cache_write", "cache_write_1h", "cache_read", "output")
    assert {m: tuple(family(load(), m)[k] for k in keys) for m in rows} == rows
    assert family(load(), "some-new-model") is None  # no price of its own and no default: not priced
    assert family(dict(load(), default="sonnet"), "some-new-model")["name"] == "sonnet"  # a default names one


def test_a_call_whose_cache_read_fell_back_writes_the_addition_again(tmp_path):
    """A call after an idle pause past the cache's lifetime (or after a
    model switch) reads only a short prefix from the cache and writes the
    rest again: shared session 21's call 134 came 11 minutes after the one
    before, read 0 tokens and wrote 100,736; session 10's 3rd read 13,168
    (its system prompt) after 23,961.  An addition made before the first
    call read no more than that first call did: it was written again, at
    the write price, not read at a tenth of the input price."""
    lines = [l for l in _lines() if l.get("subtype") != "compact_boundary" and not l.get("isCompactSummary")]
    reads = iter([1000, 1500, 1000, 1600])  # the 3rd call: the cache expired, its prompt written from 1,000 on
    for line in lines:
        usage = line.get("message", {}).get("usage")
        if usage is not None:
            usage.update(cache_read_input_tokens=next(reads), cache_creation_input_tokens=500)
    path = tmp_path / "expired.jsonl"
    path.write_bytes(b"".join(json.dumps(l).encode() + b"\n" for l in lines))
    t = Timeline(path)
    assert t.cache_reads == [1000, 1500, 1000, 1600] and t.boundaries == []
    by_name = {ev["hook_event_name"]: off for ev, off in events(path)}
    assert t.exposure(by_name["UserPromptSubmit"]) == (2, 2)  # written by calls 1 and 3, read by 2 and 4
    assert t.exposure(by_name["PostToolUse"]) == (2, 1)  # first sent by call 2 (it read 1,500): call 3 missed it too
    assert Timeline(tiny(tmp_path)).exposure(by_name["UserPromptSubmit"]) == (1, 2)  # no cache figures: reads


def test_each_call_is_priced_at_its_own_models_rates(tmp_path, monkeypatch):
    """A main chain answered by two models (shared session 13: a plugin's
    command on Haiku inside an Opus session): each call writes or reads an
    addition at its own model's rates, not all at the model seen most
    (13 was priced $0.0013 for $0.0010 of writes and reads)."""
    from engine.replay.run import replay

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    lines = [l for l in _lines() if l.get("subtype") != "compact_boundary" and not l.get("isCompactSummary")]
    calls = iter([("claude-opus-4-6", 1000), ("claude-opus-4-6", 1500), ("claude-haiku-4-5", 0), ("claude-opus-4-6", 1600)])
    for line in lines:
        if line.get("message", {}).get("usage") is not None:
            model, read = next(calls)
            line["message"]["model"] = model
            line["message"]["usage"].update(cache_read_input_tokens=read, cache_creation_input_tokens=500)
    path = tmp_path / "two-models.jsonl"
    path.write_bytes(b"".join(json.dumps(l).encode() + b"\n" for l in lines))
    t = Timeline(path)
    assert t.model == "claude-opus-4-6" and t.call_models[2] == "claude-haiku-4-5"
    by_name = {ev["hook_event_name"]: off for ev, off in events(path)}
    # written by the 1st call and by Haiku's (its own cache: a miss), read by the 2nd and the 4th
    assert t.split(by_name["UserPromptSubmit"]) == {"claude-opus-4-6": [1, 2], "claude-haiku-4-5": [1, 0]}
    s = replay([str(path)], profile="default")["sessions"][0]
    rates = {m: family(load(), m) for m in ("claude-opus-4-6", "claude-haiku-4-5")}
    want = sum(p["tokens"] * sum(w * rates[m]["cache_write"] + r * rates[m]["cache_read"]
                                 for m, (w, r) in t.split(a["offset"]).items())
               for a in s["answers"] for p in a["parts"] if p["field"] == "context") / 1e6
    assert s["injected"]["tokens"] > 0 and s["injected"]["cost"] == pytest.approx(want)
    all_opus = (s["injected"]["cache_writes"] * 6.25 + s["injected"]["cache_read_tokens"] * 0.5) / 1e6
    assert s["injected"]["cost"] < all_opus


def _one_hour(lines):
    """The lines with every usage's cache writes made 1-hour ones, as Claude
    Code 2.1 records them in interactive sessions (shared sessions 22, 24, 25)."""
    for line in lines:
        usage = line.get("message", {}).get("usage")
        if usage is not None:
            usage.update(cache_creation_input_tokens=100, cache_creation={
                "ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 100})
    return lines


def test_one_hour_cache_writes_are_priced_at_the_one_hour_rate(tmp_path):
    """Anthropic bills a 1-hour cache write at 2x input, a 5-minute one at
    1.25x: a session whose usage shows 1-hour writes has its additions
    written at the 1-hour rate (opus 4.6: $10, not $6.25, per MTok)."""
    from engine.replay.pricing import session_rates
    from engine.replay.run import replay
    from testdata import transcript

    path = tmp_path / "one-hour.jsonl"
    path.write_bytes(b"".join(json.dumps(l).encode() + b"\n" for l in _one_hour(_lines())))
    t = Timeline(path)
    assert t.cache_ttl() == "1h" and Timeline(tiny(tmp_path)).cache_ttl() is None
    rates, note = session_rates(family(load(), t.model), t)
    assert (rates["cache_write"], rates["cache_read"], rates["cache_ttl"], note) == (10.0, 0.5, "1h", None)
    assert price(1000, 1, 1, rates, 1_000_000) == pytest.approx(0.0105)
    s = replay([str(path)], profile="default")["sessions"][0]
    assert s["rates"]["cache_write"] == 10.0 and s["rates"]["cache_ttl"] == "1h"
    injected = s["injected"]
    assert injected["cache_writes"] > 0
    assert injected["cost"] == pytest.approx((injected["cache_writes"] * 10.0 + injected["cache_read_tokens"] * 0.5) / 1e6)
    # a family that names no 1-hour rate: its cache_write, said
    rates, note = session_rates({k: v for k, v in family(load(), t.model).items() if k != "cache_write_1h"}, t)
    assert rates["cache_write"] == 6.25 and "no cache_write_1h" in note
    # the real sessions: 24 (2.1.56, interactive) wrote 1-hour entries, 23 (2.1.56) 5-minute ones
    assert Timeline(transcript("24-erk-interactive-12prompts-api500-393e5f27.jsonl")).cache_ttl() == "1h"
    assert Timeline(transcript("23-erk-local-v2156-compact-ae4a1257.jsonl")).cache_ttl() is None


def test_a_codex_call_began_before_the_tool_calls_it_made():
    """Codex writes a response's token_usage_record after its function_call
    lines: the request was sent before them, so what a PreToolUse hook adds
    at the first shell call is first sent by the second request (written
    by it, read by the third and the fourth, the compaction's) and the
    first call is one made before that event."""
    from testdata import agent_transcript

    path = agent_transcript("codex")
    t = Timeline(path, "codex")
    pre = [off for ev, off in events(path) if ev["hook_event_name"] == "PreToolUse"]
    assert [t.exposure(off) for off in pre] == [(1, 2), (1, 1), (1, 0)]
    assert [sum(1 for at, _ in t.calls if at <= off) for off in pre] == [1, 2, 3]


def test_a_copilot_compaction_keeps_what_the_turn_added_after_it_started():
    """Copilot compacts in the background (AGENTS-MEASURED.md, "After a
    compaction"): the summary is asked of the history as it stood at
    `session.compaction_start`; the main loop's requests until
    `session.compaction_complete` carry the whole history, and the first
    request after it carries the summary and then every call, result and
    hook addition made since the start.  The recorded session (3 calls
    between start and complete, a second compaction that failed) with what
    each call's hook additions cost: written and read in the old epoch,
    written again by the first call after the summary and read by the rest
    of the new epoch; none of what came before the start, which the summary
    request read (its usage is only the compaction's compactionTokensUsed)."""
    from engine.replay.events import neutral_events
    from testdata import agent_transcript

    path = agent_transcript("copilot", "compacting")
    t = Timeline(path, "copilot")
    assert [e for _, e in t.calls] == [0] * 5 + [1] * 4 and len(t.boundaries) == 1  # the failed one is none
    seen = {(ev["kind"], ev["tool_use_id"]): t.exposure(off) for ev, off in neutral_events(path, "copilot")
            if ev["kind"] in ("pre_tool", "post_tool")}
    # before the start: read by the summary request too (its usage is no usage record)
    want = {"call_0001": (1, 3 + 1), "call_0002": (1, 2 + 1),
            "call_0004": (1 + 1, 1 + 3), "call_0005": (1 + 1, 0 + 3), "call_0006": (0 + 1, 0 + 3),  # kept
            "call_0007": (1, 2), "call_0008": (1, 1), "call_0010": (1, 0)}  # after it
    assert seen == {(kind, call): w for call, w in want.items() for kind in ("pre_tool", "post_tool")}


def test_what_the_agent_does_not_show_is_not_counted(tmp_path, monkeypatch):
    """Replay counts what reached the agent.  Copilot CLI shows no hook's
    message to its user and takes no compaction instructions from a hook
    (copilot.yaml answers neither): in the recorded compacting session the
    context monitor's warnings and the compaction's instructions, which the
    built-in profile gives at each threshold and each preCompact, are none of
    them shown; given an agent that shows a message to its user, the same
    warnings are."""
    from engine.agents import table
    from engine.agents.spec import Agent
    from engine.replay.run import replay
    from testdata import agent_transcript

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = str(agent_transcript("copilot", "compacting"))
    s = replay([path], profile="default")["sessions"][0]
    assert s["warnings"]["count"] == 0 and s["compaction_instructions"]["count"] == 0
    copilot = table.agents()["copilot"]
    answers = {**copilot["answers"], "user_message": {"template": {"systemMessage": "{text}"}, "defaults": {}}}
    real = table.get
    monkeypatch.setattr(table, "get", lambda name: Agent({**copilot, "answers": answers}) if name == "copilot"
                        else real(name))
    shown = replay([path], profile="default")["sessions"][0]
    assert shown["warnings"]["count"] >= 1 and shown["compaction_instructions"]["count"] == 0


def test_a_resumed_gemini_session_holds_what_tool_results_got_twice_and_the_rest_no_longer():
    """Gemini CLI 0.61.0 (tests/test_agents_offline.py
    `test_fact_gemini_resumed_keeps_*`): after `--resume` its requests hold
    what AfterTool added to a tool result twice (the whole function response
    is sent twice), and what SessionStart and BeforeAgent added before the
    resume no longer.  The recorded session: 4 calls, then a resume (its
    header written again) and 2 calls; replay ends the first run (AfterAgent,
    SessionEnd) and starts the second (SessionStart resume) there."""
    from engine.replay.events import neutral_events
    from testdata import agent_transcript

    path = agent_transcript("gemini", "resumed")
    t = Timeline(path, "gemini", _resumed("gemini"))
    assert len(t.calls) == 6 and len(t.resumes) == 1 and t.boundaries == []
    sent = list(neutral_events(path, "gemini"))
    kinds = [ev["kind"] for ev, _ in sent]
    assert kinds[kinds.index("session_end"):kinds.index("session_end") + 3] == ["session_end", "session_start", "prompt"]
    assert kinds[-2:] == ["stop", "session_end"] and kinds.count("session_end") == 2
    assert [ev.get("source") for ev, _ in sent if ev["kind"] == "session_start"] == ["startup", "resume"]
    first_prompt = next(off for ev, off in sent if ev["kind"] == "prompt")
    first_result = next(off for ev, off in sent if ev["kind"] == "post_tool")
    # the first prompt's addition: read by the first run's 3 later calls, by neither resumed one
    assert t.exposure(first_prompt, "prompt") == (1, 3) and t.exposure(first_prompt, "session_start") == (1, 3)
    # the first tool result's: written by the next call, read by 2 more, then twice by each resumed call
    assert t.exposure(first_result, "post_tool") == (1, 2 + 2 + 2)
    resumed = next(off for ev, off in sent if ev.get("source") == "resume")
    assert t.exposure(resumed, "session_start") == (1, 1), "the resumed run's own start: its calls hold it once"
    kept = Timeline(path, "gemini", _resumed("claude-code"))  # an agent whose resumed requests hold all of it once
    assert kept.exposure(first_prompt, "prompt") == (1, 5) and kept.exposure(first_result, "post_tool") == (1, 4)


def _resumed(agent):
    """What the agent's YAML says its resumed requests hold (transcript.resumed)."""
    from engine.agents.table import get

    return get(agent).data["transcript"].get("resumed")


def test_a_resumed_copilot_session_holds_what_prompts_and_tool_results_got_and_no_longer_the_rest():
    """Copilot CLI 1.0.102 (tests/test_agents_offline.py
    `test_fact_copilot_resumed_*`): after `--resume=ID` its requests hold
    what userPromptSubmitted and postToolUse added before the resume once,
    and what sessionStart and preToolUse added no longer.  The recorded
    session: 4 calls, `session.shutdown`, `session.resume`, 2 calls; replay
    ends the first run there and starts the second (resume)."""
    from engine.replay.events import neutral_events
    from testdata import agent_transcript

    path = agent_transcript("copilot", "resumed")
    t = Timeline(path, "copilot", _resumed("copilot"))
    assert len(t.calls) == 6 and len(t.resumes) == 1 and t.boundaries == []
    sent = list(neutral_events(path, "copilot"))
    kinds = [ev["kind"] for ev, _ in sent]
    ended = kinds.index("session_end")
    assert kinds[ended - 1:ended + 3] == ["stop", "session_end", "session_start", "prompt"], kinds
    assert kinds.count("session_end") == 2 and kinds[-1] == "session_end"
    assert [ev.get("source") for ev, _ in sent if ev["kind"] == "session_start"] == ["startup", "resume"]
    at = {kind: next(off for ev, off in sent if ev["kind"] == kind) for kind in ("prompt", "pre_tool", "post_tool")}
    # the start's and the first call's preToolUse addition: read by the first run's 3 later calls only
    assert t.exposure(at["prompt"], "session_start") == (1, 3) and t.exposure(at["pre_tool"], "pre_tool") == (1, 2)
    # the first prompt's and the first tool result's: by both resumed calls too
    assert t.exposure(at["prompt"], "prompt") == (1, 3 + 2) and t.exposure(at["post_tool"], "post_tool") == (1, 2 + 2)
    resumed = next(off for ev, off in sent if ev.get("source") == "resume")
    assert t.exposure(resumed, "session_start") == (1, 1), "the resumed run's own start: its calls hold it once"


def test_pricing_document_errors_say_where(tmp_path):
    bad = tmp_path / "p.yaml"
    text = (REPO / "pipelines/reports/pricing.yaml").read_text()
    bad.write_text(text.replace("per_tokens: 1000000\n", "per_tokens: 1000000\ndefault: gpt\n"))
    from engine.base.errors import UserError

    with pytest.raises(UserError) as err:
        load(str(bad))
    assert f"{bad}:" in str(err.value) and "default names no family" in str(err.value)


@pytest.mark.parametrize("option, wrong, kind, found", [
    ("--pricing", "pipelines/reports/session.yaml", "pricing", "report"),
    ("--style", "pipelines/reports/pricing.yaml", "replay_report", "pricing"),
])
def test_a_document_of_another_kind_is_said_in_one_line(tmp_path, option, wrong, kind, found):
    """A report style given as --pricing (or a pricing file as --style) was
    checked against the other kind's schema: a dozen lines of keys 'required
    here' and 'unknown', the kind one among them; the loaders' own check of
    the kind, after the schema's, was never reached."""
    run = cli(str(tiny(tmp_path)), "--profile", "default", option, str(REPO / wrong), env_root=tmp_path)
    assert run.returncode == 1, run.stdout
    assert run.stderr.splitlines() == [f"{REPO / wrong}:1:7: expected a {kind} document here, found kind {found!r}"]


def snapshot(*roots):
    out = {}
    for root in roots:
        for dirpath, _dirs, files in os.walk(root):
            for f in files:
                p = os.path.join(dirpath, f)
                st = os.stat(p)
                out[p] = (st.st_size, st.st_mtime_ns)
    return out


def test_kept_out_output_and_the_users_folders_untouched(tmp_path, monkeypatch):
    """An agent that takes updatedToolOutput (2.1.200): the 10,000-byte
    output is stored and replaced; kept out = original - stub.  Nothing is
    written under the user's HOME, state or cache folders."""
    from engine.replay.run import replay

    home, state, cache = tmp_path / "home", tmp_path / "state", tmp_path / "cache"
    for d in (home / ".claude" / "rules", state, cache):
        d.mkdir(parents=True)
    (home / ".claude" / "rules" / "mine.md").write_text("# Mine\n\nKeep it short.\n")
    (state / "keep.txt").write_text("user state")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ENGINE_STATE_DIR", str(state))
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(cache))
    monkeypatch.setenv("ENGINE_REDIS_URL", "redis://127.0.0.1:1/0")  # never used: the world drops it
    before = snapshot(home, state, cache)
    result = replay([str(tiny(tmp_path))], profile="default")
    assert snapshot(home, state, cache) == before
    assert os.environ["ENGINE_STATE_DIR"] == str(state) and os.environ["HOME"] == str(home)
    s = result["sessions"][0]
    kept = s["kept_out"]
    assert kept["count"] == 1 and kept["original_bytes"] == len(BIG.encode())
    assert kept["bytes"] == kept["original_bytes"] - kept["stub_bytes"] > 9000
    # written by call 2, read by the compaction's own request only
    assert kept["tokens"] > 0 and kept["cache_writes"] == kept["tokens"] == kept["cache_read_tokens"]
    assert s["net"]["tokens"] == s["injected"]["tokens"] - kept["tokens"]
    assert s["net"]["cost"] == pytest.approx(s["injected"]["cost"] - kept["cost"])
    assert s["problems"] == []


def test_the_users_compiled_profile_is_taken_not_compiled_again_and_left_as_it_was(tmp_path, monkeypatch):
    """The hooks compiled the built-in profile in the user's cache: the
    replay's world copies those entries in (read only) and compiles
    nothing; a link in the user's cache is not followed (that entry is
    compiled in the world instead)."""
    from engine.core import profile as profile_module
    from engine.core.profile import choice, profile_of
    from engine.hooks.dispatch import settings_for
    from engine.replay.run import replay

    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(cache))
    profile_of(choice("default"))
    profile_of(choice("default"), "standard")
    settings_for("default", str(tmp_path))
    before = snapshot(cache)
    log = tmp_path / "compiled.txt"  # compiles run in a forked box: they say so in a file
    real = profile_module._compile

    def compiling(*args):
        with open(log, "a") as fh:
            fh.write(f"{args[2]}\n")
        return real(*args)

    monkeypatch.setattr(profile_module, "_compile", compiling)
    s = replay([str(tiny(tmp_path))], profile="default")["sessions"][0]
    assert not log.exists() and s["problems"] == [] and s["injected"]["count"] > 0
    assert snapshot(cache) == before
    # the compiled entries, each swapped for a link to a copy of itself
    for i, entry in enumerate(p for p in (cache / "profiles").iterdir() if p.suffix in (".pickle", ".json")):
        (tmp_path / f"elsewhere-{i}").write_bytes(entry.read_bytes())
        entry.unlink()
        entry.symlink_to(tmp_path / f"elsewhere-{i}")
    replay([str(tiny(tmp_path))], profile="default")
    assert log.exists(), "a linked entry is not taken: the world compiles its own"


def cli(*args, env_root):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "XDG_", "CLAUDE"))}
    env.update(HOME=str(env_root / "home"), ENGINE_STATE_DIR=str(env_root / "state"),
               ENGINE_CACHE_DIR=str(env_root / "cache"), PYTHONPATH=str(REPO))
    return forkrun.completed(["replay", *args], env=env, cwd=str(env_root), timeout=120)


def test_json_shape_and_glob(tmp_path):
    tiny(tmp_path, "a.jsonl")
    tiny(tmp_path, "b.jsonl", version="2.0.67")
    run = cli(str(tmp_path / "*.jsonl"), "--profile", "default", "--json", env_root=tmp_path)
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout)
    assert set(r) >= {"profile", "pricing", "tokenizer", "sessions", "totals", "notes"}
    assert [Path(s["transcript"]).name for s in r["sessions"]] == ["a.jsonl", "b.jsonl"]
    for s in r["sessions"]:
        assert set(s) >= {"answers", "injected", "by_handler", "already_in_view", "kept_out", "warnings", "net",
                          "rates", "api_calls", "compactions"}
        assert s["api_calls"] == 4 and s["compactions"] == 1
        assert s["compaction_instructions"]["count"] == 1  # Claude Code takes PreCompact's stdout
    # 2.0.67 does not take updatedToolOutput: that session keeps the output in full
    assert [s["kept_out"]["count"] for s in r["sessions"]] == [1, 0]
    assert r["totals"]["kept_out"]["tokens"] == r["sessions"][0]["kept_out"]["tokens"]
    assert "\x1b" not in run.stderr  # not a terminal: no progress bar
    bad = cli(str(tmp_path / "none-*.jsonl"), env_root=tmp_path)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "none-*.jsonl:" in bad.stderr


@pytest.mark.parametrize("where", ["no-such-folder", "a-file.md"])
def test_a_project_that_is_no_folder_is_refused(tmp_path, where):
    """--project mistyped (or naming a file) replayed every session in an
    empty folder, without its rules, and exited 0."""
    (tmp_path / "a-file.md").write_text("# rules\n")
    run = cli(str(tiny(tmp_path)), "--profile", "default", "--project", where, env_root=tmp_path)
    assert run.returncode == 1, run.stdout
    what = "no such folder" if where == "no-such-folder" else "this is a file, not a folder"
    assert run.stderr.strip() == f"{where}: {what}; --project names the folder the sessions ran in (or leave it out: an empty one)"
    assert run.stdout == ""


def test_html_is_escaped_and_private(tmp_path):
    path = tiny(tmp_path, "a<b>&x.jsonl")
    out = tmp_path / "r.html"
    run = cli(str(path), "--profile", "default", "--html", str(out), env_root=tmp_path)
    assert run.returncode == 0, run.stderr
    page = out.read_text()
    assert "a&lt;b&gt;&amp;x.jsonl" in page and "a<b>" not in page
    assert "<script" not in page and stat.S_IMODE(out.stat().st_mode) == 0o600


def test_the_replayed_session_is_named_the_same_in_every_process(tmp_path):
    """The session a replay feeds its hooks is named from the file, not from
    hash(), which Python salts per process: two runs give one name."""
    path = tmp_path / "s.jsonl"
    path.write_text("{}\n")
    code = "import sys; from engine.replay.run import session_name; print(session_name(sys.argv[1], 3))"
    names = {subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                            env=dict(os.environ, PYTHONHASHSEED=str(seed))).stdout.strip() for seed in (1, 2, 3)}
    assert len(names) == 1 and names.pop().startswith("replay-"), names


def test_a_subagents_own_file_is_said_to_be_one(tmp_path):
    """A subagent's file holds only a side chain: replay prices none of its
    calls (0 API calls), and says why, with the figure the report gives."""
    from engine.session import build_report, load_style
    from testdata import transcript

    src = transcript("02-spotter-subagent-a2898e3.jsonl")
    calls = build_report(str(src), load_style())["api_calls"]
    run = cli(str(src), "--profile", "default", "--json", env_root=tmp_path)
    assert run.returncode == 0, run.stderr
    [s] = json.loads(run.stdout)["sessions"]
    assert s["api_calls"] == 0 and calls > 0
    assert any(f"a subagent's transcript ({calls} API call(s)" in p for p in s["problems"]), s["problems"]
    main = cli(str(transcript("21-erk-ci-compact-17errors-41files-ebe65926.jsonl")), "--profile", "default", "--json",
               env_root=tmp_path)
    assert not any("subagent" in p for p in json.loads(main.stdout)["sessions"][0]["problems"])


def test_each_replayed_event_has_its_own_time_as_a_hook_process_has(tmp_path, monkeypatch):
    """A replay runs every event in one process: the rule compression's
    share of a hook's deadline counts from each event's start, not from the
    process's, so a replay that has run for minutes delivers what the hooks
    would (every rule file compressed), not one file an event."""
    from engine.hooks import deadline
    from engine.replay.run import replay

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "state"))
    project = tmp_path / "project"
    for n in "abcd":
        write = project / ".claude" / "rules" / f"{n}.md"
        write.parent.mkdir(parents=True, exist_ok=True)
        write.write_text(f"# Rule {n}\n\nIn order to ship, always run the {n} tests before you commit (MARK_{n}).\n")

    profile = tmp_path / "every-prompt.yaml"  # the rules at every prompt, whatever the agent has in view
    profile.write_text(profile_text({"prompt": [{"name": "rules", "every_turns": 1}]}))

    def delivered(started, cache):  # each with a cache of its own: nothing compressed already
        monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / cache))
        monkeypatch.setattr(deadline, "STARTED", started)
        s = replay([str(tiny(tmp_path))], profile=str(profile), project=str(project))["sessions"][0]
        assert s["problems"] == [], s["problems"]
        return s["injected"]["count"], s["injected"]["chars"]  # tokens vary with each delivery's random id

    late = delivered(time.monotonic() - 600, "late")
    fresh = delivered(time.monotonic(), "fresh")
    assert fresh[0] > 1 and late == fresh


def _edited_style(tmp_path, old, new):
    """(path, line of the terminal template) of the built-in replay style
    with `old` replaced by `new`, written into tmp_path."""
    text = (REPO / "pipelines" / "reports" / "replay.yaml").read_text(encoding="utf-8").replace(old, new, 1)
    style = tmp_path / "style.yaml"
    style.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    return style, lines.index("  template: |-", lines.index("terminal:")) + 1


def test_a_replay_style_template_past_its_bounds_is_one_line_at_its_place(tmp_path):
    """A replay style renders as a session report style does: in the bounded
    sandbox, within its `render` bounds, said at the template's place."""
    style, at = _edited_style(tmp_path, "    engine replay: profile", '    {{ "x" * 3000000000 }}engine replay: profile')
    run = cli(str(tiny(tmp_path)), "--profile", "default", "--style", str(style), env_root=tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{style}:{at}:") and "terminal.template: template repeats a value too many times" in last, \
        run.stderr


def test_an_unknown_filter_in_a_replay_style_is_said_by_validate(tmp_path):
    """Old: validate only parsed the templates: an unknown filter passed."""
    style, at = _edited_style(tmp_path, "    engine replay: profile {{ r.profile }}",
                              "    engine replay: profile {{ r.profile | upperr }}")
    run = forkrun.completed(["validate", str(style)], env=dict(os.environ, PYTHONPATH=str(REPO)), cwd=str(tmp_path),
                            timeout=120)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert run.stderr.startswith(f"{style}:{at}:") and "unknown filter 'upperr'; did you mean 'upper'?" in run.stderr, \
        run.stderr


def _delegating(version):
    """A session whose model starts a subagent (Task) and then ends."""
    base = {"sessionId": "s1", "cwd": "/nowhere", "version": version}
    usage = {"input_tokens": 10}
    return [
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": "look around"}},
        {**base, "type": "assistant", "uuid": "a1", "message": {
            "id": "m1", "model": "claude-opus-4-6", "role": "assistant", "usage": usage,
            "content": [{"type": "tool_use", "id": "t1", "name": "Task",
                         "input": {"description": "look", "prompt": "Say hi.", "subagent_type": "general-purpose"}}]}},
        {**base, "type": "user", "uuid": "u2", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "hi"}]}},
        {**base, "type": "assistant", "uuid": "a2", "message": {
            "id": "m2", "model": "claude-opus-4-6", "role": "assistant", "usage": usage,
            "content": [{"type": "text", "text": "done"}]}},
    ]


@pytest.mark.parametrize("version,given", [("2.1.200", True), ("2.1.332", False)])
def test_what_a_subagents_start_adds_is_counted_apart_and_in_the_injected(tmp_path, version, given):
    """A Task call starts a subagent: replay sends its start after the
    call's PreToolUse, as Claude Code does.  In an AGENTS.md-only project a
    Claude Code before 2.1.330 does not read that file, so the engine gives
    it at the session's start and again at the subagent's; the subagent's
    share is counted apart (`to_subagents`, priced as written once by the
    subagent's first call) and is part of the injected total."""
    path = tmp_path / "delegating.jsonl"
    path.write_bytes(b"".join(json.dumps(l).encode() + b"\n" for l in _delegating(version)))
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("# Team\nRun the linter before each commit (AGM_REPLAY_2f).\n")
    kinds = [ev["hook_event_name"] for ev, _ in events(path)]
    assert kinds[kinds.index("PreToolUse") + 1] == "SubagentStart", kinds
    run = cli(str(path), "--profile", "default", "--project", str(project), "--json", env_root=tmp_path)
    assert run.returncode == 0, run.stderr
    s = json.loads(run.stdout)["sessions"][0]
    sub = s["to_subagents"]
    (start,) = [a for a in s["answers"] if a["event"] == "SubagentStart"]
    added = [p for p in start["parts"] if p["field"] == "context"]
    if not given:  # its subagent reads AGENTS.md itself: held back as in view
        assert sub["count"] == 0 and added == [] and [p["field"] for p in start["parts"]] == ["in_view"], start
        return
    assert sub["count"] == 1 and sub["tokens"] == sum(p["tokens"] for p in added) > 0
    assert sub["cost"] == pytest.approx(sub["tokens"] * 6.25 / 1_000_000), "one cache write at opus's rate"
    assert s["injected"]["tokens"] >= 2 * sub["tokens"], "the session's start gave it to the main context too"
    text = cli(str(path), "--profile", "default", "--project", str(project), env_root=tmp_path).stdout
    assert "at subagents' starts: 1 time(s)" in text, text


def test_what_gemini_took_into_one_request_after_its_compression_is_priced_for_that_request(tmp_path):
    """Gemini CLI's BeforeModel: what the engine gives there (the first
    request after a compression, answers.request_context) reaches that
    request alone.  Replay sends a BeforeModel before each response of the
    chat file, counts what the hooks gave there as added context, and
    prices it as written once and read by no later call."""
    from hook_fixtures import CURSOR_SOURCE, GeminiChat

    project = tmp_path / "project"
    (project / ".cursor" / "rules").mkdir(parents=True)
    (project / ".cursor" / "rules" / "names.mdc").write_text("---\nalwaysApply: true\n---\nName every branch GEMRULE_9c.\n")
    prof = tmp_path / "p.yaml"
    prof.write_text(profile_text({"prompt": [{"name": "rules", "sources": [{"agent": "rules"}, CURSOR_SOURCE]}]}))
    chat = GeminiChat(tmp_path / "session-2026-11-28T12-17-5e551011.jsonl", "5e551011-0000-4000-8000-000000000000", project)
    chat.start("the session's start")  # not the replay's own delivery: taken as lost once a response came
    chat.prompt("go")
    chat.response(45000)  # past the growth cadence's 40,000: the tool call's AfterTool gives the rule
    chat.result()
    chat.response(45000, call=False, text="one")
    chat.compression()
    chat.prompt("next")
    chat.response(2500)
    chat.result()
    chat.response(2600, call=False, text="two")
    run = cli(str(chat.path), "--profile", str(prof), "--project", str(project), "--json", env_root=tmp_path)
    assert run.returncode == 0, run.stderr
    s = json.loads(run.stdout)["sessions"][0]
    assert s["events"] == 1 + 2 + 4 + 2 * 2 + 2 + 1, "the start, 2 prompts, 4 requests, 2 calls, 2 stops, the end"
    added = [(a["event"], a["epoch"], a["cache_writes"], a["cache_reads"]) for a in s["answers"]
             if any(p["field"] == "context" and p["handler"] == "rules" for p in a["parts"])]
    # the start's, written by the first call, read by the second; the tool call's, written by the call
    # after it; both also in the compression's two requests (its own prefix: written again; its check:
    # read); that request's, by itself alone; then the tool call after the compression puts it back,
    # read by the last call
    assert added == [("SessionStart", 0, 1 + 1, 1 + 1), ("AfterTool", 0, 1 + 1, 0 + 1), ("BeforeModel", 1, 1, 0),
                     ("AfterTool", 1, 1, 0)]


def test_what_gemini_added_to_the_turns_its_compression_keeps_is_priced_into_the_next_epoch(tmp_path):
    """Gemini CLI 0.61.0 keeps the newest turns after its compression's
    summary, written again (AGENTS-MEASURED.md, "After a compaction"): what
    a hook added in them is in every request after, as what Copilot keeps
    behind its background summary is.  The chat file: a turn, a second turn
    whose first tool call's result got an addition, a compression keeping
    that turn, two calls after it.  What the compression took is in its own
    two requests (the chat file records neither), what it kept is not."""
    from hook_fixtures import GeminiChat

    chat = GeminiChat(tmp_path / "session-2026-11-28T12-17-5e551012.jsonl", "5e551012-0000-4000-8000-000000000000",
                      tmp_path)
    chat.start("the session's start")
    chat.prompt("go")
    chat.response(30000)
    ends = {"go": chat.path.stat().st_size}  # the first call's AfterTool saw this much
    chat.result(added="A1")
    chat.response(30000, call=False, text="one")
    chat.prompt("next")
    since = chat.path.stat().st_size - len(chat.path.read_bytes().splitlines(keepends=True)[-1])
    chat.response(30000)
    ends["next"] = chat.path.stat().st_size
    chat.result(added="B1")
    chat.response(30000)
    chat.compression(kept=[[{"text": "next"}], [chat.result_part("B1")]])
    chat.result()
    chat.response(2600, call=False, text="two")
    chat.prompt("more")
    chat.response(2700, call=False, text="three")
    t = Timeline(chat.path, "gemini", _resumed("gemini"))
    assert [e for _, e in t.calls] == [0, 0, 0, 0, 1, 1] and t.kept_since == [since], "kept from the prompt's line"
    # compressed: the first epoch's later calls, and the compression's two requests (written again under
    # their own system instruction, then read by the check that repeats the first)
    assert t.exposure(ends["go"], "post_tool") == (1 + 1, 2 + 1)
    assert t.exposure(ends["next"], "post_tool") == (1 + 1, 0 + 1), "kept: written again after the summary, read once"


def test_where_a_prompt_gemini_keeps_was_typed_again_among_its_kept_turns_they_begin_at_the_first(tmp_path):
    """The turns a Gemini compression keeps are found by how many prompts
    they hold, not by their first prompt's text: where that text was typed
    again among them (`go` three times, the last two kept), the kept part
    begins at the second `go`, and what a hook added between it and the
    third is kept, read by every later call.  (Named by its text, the kept
    part began at the last `go`: the addition was priced as compressed.)"""
    from hook_fixtures import GeminiChat

    chat = GeminiChat(tmp_path / "session-2026-11-28T16-20-5e551013.jsonl", "5e551013-0000-4000-8000-000000000000",
                      tmp_path)
    chat.start("the session's start")
    chat.prompt("go")
    chat.response(30000, call=False, text="one")
    chat.prompt("go")
    since = chat.path.stat().st_size - len(chat.path.read_bytes().splitlines(keepends=True)[-1])
    chat.response(30000)
    added = chat.path.stat().st_size  # the call's AfterTool saw this much
    chat.result(added="B1")
    chat.response(30000, call=False, text="two")
    chat.prompt("go")
    chat.response(30000)
    chat.compression(kept=[[{"text": "go"}], [chat.result_part("B1")], [{"text": "go"}]])
    chat.result()
    chat.response(2600, call=False, text="three")
    chat.prompt("more")
    chat.response(2700, call=False, text="four")
    chat.prompt("last")
    chat.response(2800, call=False, text="five")
    t = Timeline(chat.path, "gemini", _resumed("gemini"))
    assert t.kept_since == [since], "kept from the second `go`"
    # kept: the first epoch's two later calls, then the next epoch's three (written again, then read)
    assert t.exposure(added, "post_tool") == (1 + 1, 1 + 2)
