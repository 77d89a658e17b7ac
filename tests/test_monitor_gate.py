"""The growth gates (issue 23, finding 14): between two reads of the
context's size, PostToolUse reads it again only when the transcript grew
enough bytes to hold the tokens still missing (to the context monitor's next
threshold; to the growth cadence's next delivery).  The growth counts from
where the response whose usage was read began, not from where the
transcript ended at the read: the tool results written after that response
are context its figure does not hold, and the next response pays for them.

Sessions fed event by event as the agent sends them: a PostToolUse fires
before its tool_result line is written (engine/replay/events.py)."""

import json
import os
import re

import pytest

from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture
from testdata import transcript

WINDOW = 200000


def _usage(tokens):
    third = tokens // 4
    return {"input_tokens": tokens - 3 * third, "cache_creation_input_tokens": third,
            "cache_read_input_tokens": 2 * third, "output_tokens": 211}


def _call(hk, message_id, tokens, tid):
    return {"type": "assistant", "isSidechain": False, "sessionId": hk.session, "uuid": f"a-{tid}",
            "message": {"id": message_id, "role": "assistant", "model": "claude-x", "type": "message",
                        "content": [{"type": "tool_use", "id": tid, "name": "Read",
                                     "input": {"file_path": f"/src/{tid}.txt"}}], "usage": _usage(tokens)}}


def _result(hk, tid, size):
    return {"type": "user", "isSidechain": False, "sessionId": hk.session, "uuid": f"r-{tid}",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                     "content": "q" * size}]}}


def _post(hk, tid):
    return hk.event("PostToolUse", tool_name="Read", tool_input={"file_path": f"/src/{tid}.txt"},
                    tool_use_id=tid, tool_response={"type": "text"})


def _warnings(run):
    if not run.stdout.strip():
        return []
    return re.findall(r"past (\d+)%", run.json.get("systemMessage", ""))


@pytest.mark.parametrize("shape", ["grouped", "interleaved"])
def test_results_written_after_the_read_response_count_as_growth(hk, shape):
    """One response at 61% asks for four files at once; three come back
    large (46 KB each), the last small.  The fill is read at each of their
    PostToolUse (61%, nothing to say).  The next response sends them all:
    78%, past 70%.  Old code: the last read anchored after the three large
    results, so the 3 KB written since could not hold the 18,000 tokens
    missing to 70%, and the crossing went unread (then auto-compaction).
    grouped: the response's lines first, then the results (2.0.x);
    interleaved: each result after its own line (2.1.5x)."""
    sizes = [46000, 46000, 46000, 900]
    tids = [f"toolu_r1_{i}" for i in range(len(sizes))]
    first = 122000  # 61%
    hk.write_transcript([{"type": "user", "isSidechain": False, "sessionId": hk.session, "uuid": "p0",
                          "message": {"role": "user", "content": "read the four inputs"}}])
    if shape == "grouped":
        hk.append_transcript([_call(hk, "msg_r1", first, t) for t in tids])
    for tid, size in zip(tids, sizes):
        if shape == "interleaved":
            hk.append_transcript([_call(hk, "msg_r1", first, tid)])
        assert _warnings(hk.hook(_post(hk, tid)).assert_ok()) == []
        hk.append_transcript([_result(hk, tid, size)])
    second = int(0.78 * WINDOW)
    hk.append_transcript([_call(hk, "msg_r2", second, "toolu_r2_0")])
    warned = _warnings(hk.hook(_post(hk, "toolu_r2_0")).assert_ok())
    assert warned == ["70"], f"the crossing to 78% in one response was not read at once: {warned}"


def test_nothing_written_since_the_last_read_reads_nothing(hk):
    """The gate's other half: a PostToolUse with the transcript unchanged
    since the fill was read does not read it again, whatever the anchor."""
    tids = ["toolu_n_0", "toolu_n_1"]
    # 139,950 tokens: just under 70%, so only the unchanged size (not the growth bound) can skip the read
    hk.write_transcript([_call(hk, "msg_n1", 130000, tids[0]), _result(hk, tids[0], 30000),
                         _call(hk, "msg_n2", 139950, tids[1])])
    assert _warnings(hk.hook(_post(hk, tids[1])).assert_ok()) == []
    # a usage record claiming 90% with no byte added is not read: nothing changed on disk
    data = hk.transcript.read_bytes().replace(b'"input_tokens": 34989', b'"input_tokens": 75039')
    assert data != hk.transcript.read_bytes()
    assert len(data) == hk.transcript.stat().st_size
    stat = hk.transcript.stat()
    hk.transcript.write_bytes(data)
    os.utime(hk.transcript, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _warnings(hk.hook(_post(hk, tids[1])).assert_ok()) == []


def test_the_growth_cadence_counts_results_written_after_the_response_it_read(hk):
    """A turn at 41,000 tokens reads a 64 KB file, and the user types the next
    prompt before the model answers (an interrupt).  The growth cadence
    (40,000) delivers the rule at that prompt, from the figure of the
    response before the file.  The next response reports 87,000 tokens: the
    rule went 46,000 back, and the next tool call must bring it.  Old code:
    the cadence's gate anchored at the prompt, after the file, so the 2 KB
    written since could not hold 40,000 tokens and it never read."""
    hk.rule("plain.md", "Marker GATEPLAIN: keep each commit to one change.\n")
    version = "2.1.56"

    def line(rec):
        return dict(rec, version=version, cwd=str(hk.project))

    call = _call(hk, "msg_g1", 41000, "toolu_g1")
    hk.write_transcript([line({"type": "user", "isSidechain": False, "sessionId": hk.session, "uuid": "p1",
                               "message": {"role": "user", "content": "read the spec"}}),
                         line(call), line(_result(hk, "toolu_g1", 64000))])
    delivered = hk.hook(hk.prompt(2)).assert_ok()
    assert "GATEPLAIN" in (delivered.context or ""), "the cadence is due at the prompt (41,000 >= 40,000)"
    hk.append_transcript([line({"type": "user", "isSidechain": False, "sessionId": hk.session, "uuid": "p2",
                                "message": {"role": "user", "content": "[Request interrupted by user] go on"}}),
                          line(_call(hk, "msg_g2", 87000, "toolu_g2"))])
    again = hk.hook(_post(hk, "toolu_g2")).assert_ok()
    assert "GATEPLAIN" in (again.context or ""), f"the rule went 46,000 tokens back and was not read: {again}"


# -- real sessions -------------------------------------------------------------

def _responses(data):
    """Per main-chain response, in order: (start of its first line, tokens of
    its last, epoch); synthetic records aside."""
    order, first, last, epoch, offset = [], {}, {}, 0, 0
    for raw in data.splitlines(keepends=True):
        start, offset = offset, offset + len(raw)
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(rec, dict) or rec.get("isSidechain"):
            continue
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            epoch += 1
            continue
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        usage = msg.get("usage")
        if rec.get("type") != "assistant" or not isinstance(usage, dict) or msg.get("model") == "<synthetic>":
            continue
        key = (msg.get("id"), epoch)
        if key not in first:
            order.append(key)
            first[key] = start
        last[key] = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                         "cache_read_input_tokens"))
    return [(first[k], last[k], k[1]) for k in order]


def _crossings(responses, thresholds):
    """(offset, threshold) for each response that passes a threshold the
    response before it in the same epoch was below (the first response of an
    epoch follows a compaction whose fill is unknown: not a crossing)."""
    out, before = [], {}
    for start, tokens, epoch in responses:
        pct = 100.0 * tokens / WINDOW
        if epoch in before:
            out += [(start, t) for t in thresholds if before[epoch] < t <= pct]
        before[epoch] = pct
    return out


def _replay(path, profile, world):
    """[(offset, warned thresholds)] of the monitors' answers at each
    PostToolUse and Stop, fed in this process as `engine replay` does."""
    from engine.hooks.dispatch import handle, settings_for
    from engine.replay.events import events

    data = path.read_bytes()
    tpath = os.path.join(world.fresh(), "s.jsonl")
    hooks = settings_for(str(profile), world.project)
    log = lambda _line: None
    log.event, log.max_bytes = {}, None
    heard, written = [], 0
    with open(tpath, "wb") as out:
        for ev, offset in events(path, cwd=world.project, session_id="s", transcript_path=tpath):
            out.write(data[written:offset])
            out.flush()
            written = offset
            if ev["hook_event_name"] not in ("PostToolUse", "Stop"):
                continue
            trace = []
            handle(ev, str(profile), log, hooks, None, trace=trace)
            said = [v for _h, f, v in trace[0].origins if f == "user_message"] if trace else []
            heard.append((offset, [int(t) for s in said for t in re.findall(r"past (\d+)%", s)]))
    return heard


def _monitor_profile(folder, threshold):
    """The built-in profile with only its two fill monitors, on one threshold
    (once one is passed the monitor reads at every event: a second one would
    hide the gate)."""
    off = {"UserPromptSubmit": ("rules", "instructions", "content_pins"),
           "SessionStart": ("after_compaction", "effort_guidance"),
           "PreToolUse": ("scoped_rules", "tool_memory", "subagent_effort", "content_cache"),
           "PostToolUse": ("rules_pending", "rules_on_growth", "large_bash_output", "remember_failures",
                           "learn_large_commands"),
           "Stop": ("remember_unseen_failures", "context_audit")}
    events = {e: [{"name": n, "enabled": False} for n in names] for e, names in off.items()}
    events["PostToolUse"].append({"name": "context_monitor_tools", "thresholds": [threshold]})
    events["Stop"].append({"name": "context_monitor", "thresholds": [threshold]})
    path = folder / f"monitor-{threshold}.yaml"
    path.write_text(json.dumps({"kind": "profile", "name": "monitor", "extends": "default",
                                "hooks": {"events": events}}))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("threshold", [40, 70])
def test_a_crossing_in_a_real_session_warns_at_the_next_event(tmp_path, threshold):
    """A real session (24: 2.1.56, 12 prompts, tool results between a
    response's lines), fed event by event with the built-in gate: the
    response that crosses the threshold warns at the first PostToolUse or
    Stop after its lines are on disk.  Old code: the crossing of 40% warned
    one tool call late (bench/monitor_crossings.py: 42 of 43 crossings of the
    six sessions on time, 35 of 43 with a gate of 4 bytes a token; now all)."""
    from engine.replay.world import World

    source = transcript("24-erk-interactive-12prompts-api500-393e5f27.jsonl")
    crossings = _crossings(_responses(source.read_bytes()), [threshold])
    with World() as world:
        heard = _replay(source, _monitor_profile(tmp_path, threshold), world)
    assert crossings, "the session crosses the threshold"
    for start, _t in crossings:
        first = next((h for h in heard if h[0] >= start), None)
        assert first is not None and first[1] == [threshold], (start, first, [h for h in heard if h[1]])


def test_a_transcript_that_shrank_is_read_again(hk):
    """A transcript rewritten smaller (`engine purge --force` of a live
    session; an agent that rewrites its history shorter at a compaction) is
    no growth from the size the last read saw: the bytes written after it
    are.  Old code took a shrink for no growth at all: after a purge took
    200 KB of results out at 50%, a response at 75% went unread until the
    transcript had grown back past its old size."""
    hk.write_transcript([{"type": "user", "isSidechain": False, "sessionId": hk.session, "uuid": "p0",
                          "message": {"role": "user", "content": "read the logs"}},
                         _call(hk, "msg_s1", 100000, "toolu_s1"), _result(hk, "toolu_s1", 200000)])
    assert _warnings(hk.hook(_post(hk, "toolu_s1")).assert_ok()) == []
    before = hk.transcript.stat().st_size
    purged = hk.engine("purge", str(hk.transcript), "--force")
    assert purged.returncode == 0, str(purged)
    hk.append_transcript([_call(hk, "msg_s2", 150000, "toolu_s2")])
    assert hk.transcript.stat().st_size < before, "the purge made the transcript smaller"
    assert _warnings(hk.hook(_post(hk, "toolu_s2")).assert_ok()) == ["70"]


def _boundary(hk):
    return {"type": "system", "subtype": "compact_boundary", "isSidechain": False, "sessionId": hk.session,
            "uuid": "cb-1", "compactMetadata": {"trigger": "auto", "preTokens": 160000}}


def test_a_shrink_within_an_epoch_does_not_warn_again(hk):
    """Shared session 21 (Claude Code 2.0.67): the fill crossed 70%
    (140,068 tokens), the next response after a subagent's answer read
    116,800 (58%: no compaction line; the agent sent a shorter request), and seven tool
    calls later 140,448: "Context 70% full" a second time in one epoch.
    The thresholds are armed again by a compaction (its line in the
    transcript after the warned response), not by any shrink."""
    hk.write_transcript([_call(hk, "m1", 140068, "t1"), _result(hk, "t1", 400)])
    assert _warnings(hk.hook(_post(hk, "t1"))) == ["70"]
    hk.append_transcript([_call(hk, "m2", 116800, "t2"), _result(hk, "t2", 30000)])
    assert _warnings(hk.hook(_post(hk, "t2"))) == []
    hk.append_transcript([_call(hk, "m3", 140448, "t3"), _result(hk, "t3", 400)])
    assert _warnings(hk.hook(_post(hk, "t3"))) == [], "the same epoch: warned already"
    hk.append_transcript([_boundary(hk), _call(hk, "m4", 40000, "t4"), _result(hk, "t4", 100000)])
    assert _warnings(hk.hook(_post(hk, "t4"))) == []
    hk.append_transcript([_call(hk, "m5", 141000, "t5"), _result(hk, "t5", 400)])
    assert _warnings(hk.hook(_post(hk, "t5"))) == ["70"], "a new epoch: warned again"
