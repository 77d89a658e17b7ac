"""End to end (`engine hook` processes, events in the agent's shapes): tool
memory, context audit and monitor, effort policy, compaction instructions,
the passthrough switch, install's auto-compact setting, and what a hook
does with a broken event, transcript or store."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from hook_fixtures import profile_text, shared_profile, transcript_records
from test_hooks_conftest_fixtures import hk, redis_server  # noqa: F401 - fixtures
from testdata import transcript

REPO = Path(__file__).resolve().parent.parent

SECRET = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7"
SECRET2 = "sk-ant-" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4"


def failure(hk, command, error, tid="toolu_fail1", **kw):
    return hk.event("PostToolUseFailure", tool_name="Bash", tool_input={"command": command, "description": "x"},
                    tool_use_id=tid, error=error, **kw)


def store_lines(hk):
    path = hk.state / "tool-memory.ndjson"
    return [json.loads(l) for l in path.read_text().splitlines()] if path.exists() else []


def engine_files(hk):
    return hk.engine_files()


def test_a_failure_is_remembered_redacted_and_shown_once_per_tool(hk):
    run = hk.hook(failure(hk, f"curl -H 'Authorization: token {SECRET}' https://api.github.com/user",
                          f"Exit code 22\ncurl: (22) The requested URL returned error: 401 for {SECRET2}"))
    run.assert_silent()
    lines = store_lines(hk)
    assert len(lines) == 1 and lines[0]["tool"] == "Bash"
    assert "[REDACTED]" in lines[0]["input"] and "[REDACTED]" in lines[0]["error"]
    assert lines[0]["error"].startswith("curl: (22)")
    # the next session sees it before its first Bash call, once
    other = hk.event("PreToolUse", session="other-session", tool_name="Bash", tool_input={"command": "ls"})
    first = hk.hook(other)
    assert "TOOL MEMORY" in first.context and "curl: (22)" in first.context, str(first)
    hk.hook(other).assert_silent()
    # another tool has nothing remembered: nothing said
    hk.hook(hk.event("PreToolUse", tool_name="Read", tool_input={"file_path": "/x"})).assert_silent()
    for p in engine_files(hk):
        data = p.read_bytes()
        assert SECRET.encode() not in data and SECRET2.encode() not in data, f"secret written to {p}"


def test_a_lesson_a_subagent_was_given_is_given_to_the_main_model_too(hk):
    """Old: shown once per tool per session, a lesson a subagent's first
    Bash call took went into the subagent's context only, and the main
    model, whose context never held it, was not given it at its own first
    Bash call.  Now once in each context: each subagent's, and the main one's."""
    hk.hook(failure(hk, "kubectl get pods", "bash: kubectl: command not found")).assert_silent()

    def bash(**sub):
        return hk.event("PreToolUse", session="other-session", tool_name="Bash", tool_input={"command": "ls"}, **sub)

    first = hk.hook(bash(agent_id="a1b2c3", agent_type="general-purpose"))
    assert "kubectl: command not found" in (first.context or ""), str(first)
    hk.hook(bash(agent_id="a1b2c3", agent_type="general-purpose")).assert_silent()
    main = hk.hook(bash())
    assert "kubectl: command not found" in (main.context or ""), str(main)
    hk.hook(bash()).assert_silent()
    other = hk.hook(bash(agent_id="d4e5f6", agent_type="general-purpose"))
    assert "kubectl: command not found" in (other.context or ""), "another subagent, another context"


def test_a_profile_can_wait_for_a_failure_met_again(hk):
    """The built-in profile shows a failure from its first meeting (a
    failure in one session is a lesson in the next); a user's profile with
    `min_count: 2` shows only one met again, in any sessions, with its
    count, and the built-in still shows one met once."""
    again = shared_profile(profile_text({"PreToolUse": [{"name": "tool_memory", "min_count": 2}]}, name="again"))
    read = hk.event("PostToolUseFailure", tool_name="Read", tool_input={"file_path": "/src/test_finalize_pr.py"},
                    tool_use_id="toolu_r1", error="<tool_use_error>File does not exist.</tool_use_error>")
    hk.hook(read).assert_silent()

    def first_read(session, profile=None):
        return hk.hook(hk.event("PreToolUse", session=session, tool_name="Read", tool_input={"file_path": "/a"}),
                       profile=profile)

    first_read("next-1", again).assert_silent()
    assert '"File does not exist."' in first_read("next-2").context, "the built-in: from the first meeting"
    hk.hook(dict(read, session_id="next-1", tool_use_id="toolu_r2")).assert_silent()  # met again, elsewhere
    shown = first_read("next-3", again)
    assert '"File does not exist." (2 times)' in (shown.context or ""), str(shown)


def test_the_same_failure_twice_is_one_entry_with_a_count(hk):
    for tid in ("toolu_a", "toolu_b"):
        hk.hook(failure(hk, "kubectl get pods", "bash: kubectl: command not found", tid=tid)).assert_silent()
    listed = hk.engine("memory", "list", "--json")
    assert listed.returncode == 0, str(listed)
    entries = json.loads(listed.stdout)
    assert [(e["tool"], e["error"], e["count"]) for e in entries] == [("Bash", "bash: kubectl: command not found", 2)]
    assert hk.engine("memory", "clear", "--tool", "Read").stdout.strip().endswith("0 entries forgotten")
    assert hk.engine("memory", "clear").stdout.strip().endswith("1 entry forgotten")
    assert json.loads(hk.engine("memory", "list", "--json").stdout) == []


def test_a_successful_call_records_nothing(hk):
    ev = hk.event("PostToolUse", tool_response={"stdout": "x" * 400, "stderr": "", "interrupted": False})
    hk.hook(ev).assert_silent()
    assert store_lines(hk) == []
    assert hk.log_lines() == []


def test_stop_scans_the_transcript_for_unreported_errors_once(hk):
    """...and once only after the session ended: Gemini CLI fires SessionEnd
    twice at an interactive exit, and a resumed session brings the same
    transcript back (tests/support/AGENTS-MEASURED.md)."""
    hk.transcript.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(transcript("09-ccviewer-v10108-inline-sidechain.jsonl"), hk.transcript)
    hk.hook(hk.event("Stop")).assert_ok()
    tools = sorted(l["tool"] for l in store_lines(hk))
    assert tools == ["Bash", "Edit", "Task"]
    hk.hook(hk.event("Stop")).assert_ok()
    assert len(store_lines(hk)) == 3, "each error is recorded once"
    hk.hook(hk.event("SessionEnd")).assert_ok()
    hk.hook(hk.event("SessionEnd")).assert_ok()
    hk.hook(hk.event("Stop")).assert_ok()  # resumed
    assert len(store_lines(hk)) == 3


def test_an_error_first_found_at_session_end_is_recorded_once_though_session_end_comes_twice(hk):
    hk.transcript.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(transcript("09-ccviewer-v10108-inline-sidechain.jsonl"), hk.transcript)
    hk.hook(hk.event("SessionEnd")).assert_ok()
    hk.hook(hk.event("SessionEnd")).assert_ok()
    assert sorted(l["tool"] for l in store_lines(hk)) == ["Bash", "Edit", "Task"]


def test_an_error_reported_by_post_tool_use_is_not_recorded_again_at_stop(hk):
    hk.transcript.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(transcript("02-spotter-subagent-a2898e3.jsonl"), hk.transcript)
    found = [json.loads(l) for l in hk.transcript.read_text().splitlines()]
    errs = [b for r in found for b in (r.get("message") or {}).get("content") or []
            if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error")]
    first = errs[0]
    hk.hook(hk.event("PostToolUseFailure", tool_name="Read", tool_input={"file_path": "/x"},
                     tool_use_id=first["tool_use_id"], error=first["content"])).assert_ok()
    hk.hook(hk.event("Stop")).assert_ok()
    ids_counts = sum(l.get("n", 1) for l in store_lines(hk))
    # the calls a failed parallel call cancelled ("Sibling tool call errored") are no lessons
    not_lessons = yaml.safe_load((REPO / "pipelines" / "agents" / "claude-code.yaml").read_text())["failure"]["not_lessons"]
    lessons = [b for b in errs if not any(re.search(p, json.dumps(b["content"])) for p in not_lessons)]
    assert 0 < len(lessons) < len(errs)
    assert ids_counts == len(lessons), "the call PostToolUseFailure reported is not counted twice"


def test_a_failure_is_not_counted_again_after_the_session_left_redis(hk, redis_server):
    """The mark that says a failure is in the store lived in Redis only: once
    Redis went away mid-session, the Stop scan found the call PostToolUseFailure
    had recorded and recorded it again (the next session's lesson said
    "(2 times)")."""
    hk.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    hk.transcript.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(transcript("02-spotter-subagent-a2898e3.jsonl"), hk.transcript)
    found = [json.loads(l) for l in hk.transcript.read_text().splitlines()]
    lessons = [b for r in found for b in (r.get("message") or {}).get("content") or []
               if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("is_error")
               and "File does not exist" in json.dumps(b["content"])]
    assert len(lessons) == 1
    hk.hook(hk.event("PostToolUseFailure", tool_name="Read", tool_input={"file_path": "/x"},
                     tool_use_id=lessons[0]["tool_use_id"], error=lessons[0]["content"])).assert_ok()
    redis_server.stop()
    hk.hook(hk.event("Stop")).assert_ok()
    assert sum(l.get("n", 1) for l in store_lines(hk)) == 1, store_lines(hk)


def tool_records(outputs, session="s"):
    """A transcript's tool calls and the tool_results the model read:
    [(tool, output text)], each a tool_use line and its tool_result line."""
    recs = []
    for i, (tool, text) in enumerate(outputs):
        tid = f"toolu_{i:04d}"
        recs.append({"type": "assistant", "isSidechain": False, "sessionId": session, "uuid": f"a{i}",
                     "message": {"id": f"msg_t{i}", "role": "assistant", "model": "claude-x",
                                 "content": [{"type": "tool_use", "id": tid, "name": tool, "input": {}}]}})
        recs.append({"type": "user", "isSidechain": False, "sessionId": session, "uuid": f"u{i}",
                     "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid,
                                                              "content": text}]},
                     # what the hook's tool_response held: never what the audit counts
                     "toolUseResult": {"originalFile": "o" * 50000}})
    return recs


TOOLS = [("Bash", "y" * 4000)] * 3 + [("Read", "z" * 1000)]


def _fill(hk, tokens, tools=TOOLS):
    hk.write_transcript(tool_records(tools, session=hk.session) + transcript_records(tokens, session=hk.session))


def test_context_audit_and_monitor_speak_once_per_threshold(hk):
    # The Edit's tool_response holds a whole file the model never read: not counted.
    hk.hook(hk.event("PostToolUse", tool_name="Edit", tool_input={"file_path": "/f"},
                     tool_response={"originalFile": "e" * 90000})).assert_silent()
    _fill(hk, 100000)
    hk.hook(hk.event("Stop")).assert_silent()  # 50%: nothing
    _fill(hk, 150000)
    run = hk.hook(hk.event("Stop"))
    msg = run.json["systemMessage"]
    assert "Context audit (fill: 75%" in msg and "Bash: ~3000 tokens in 3 call(s) (92.3%)" in msg, msg
    assert "tool output: ~3250 tokens" in msg and "Edit" not in msg, msg
    # Read's 250 tokens (7.7%) are listed, and not worth asking to drop (shared session 24's audit
    # advised dropping Bash's 262 tokens, 0.4%, beside Read's 96.1%)
    assert "Suggestion: /compact, and ask to drop the output of Bash first." in msg, msg
    # the Stop monitor crossed 70% too: the audit said it, and it is not said again in other words
    assert "Context 75% full" not in msg and msg.count("/compact") == 1, msg
    assert "hookSpecificOutput" not in run.json, "shown to the user, not the model"
    hk.hook(hk.event("Stop")).assert_silent()
    _fill(hk, 170000)
    msg = hk.hook(hk.event("Stop")).json["systemMessage"]
    assert "past 80%" in msg and "Context audit" not in msg
    assert msg.endswith("Consider /compact; the largest tool outputs: Bash."), msg
    # a shrink within the epoch (the agent's context editing): crossing again is warned already
    hk.append_transcript(transcript_records(120000, session=hk.session))
    hk.hook(hk.event("Stop")).assert_silent()
    hk.append_transcript(transcript_records(150000, session=hk.session))
    hk.hook(hk.event("Stop")).assert_silent()
    # a compaction: below every threshold, then crossing again warns again
    boundary = {"type": "system", "subtype": "compact_boundary", "isSidechain": False, "sessionId": hk.session,
                "uuid": "cb", "compactMetadata": {"trigger": "auto", "preTokens": 170000}}
    hk.append_transcript([boundary] + transcript_records(40000, session=hk.session))
    hk.hook(hk.event("Stop")).assert_silent()
    hk.append_transcript(transcript_records(145000, session=hk.session))
    assert "Context audit (fill: 72%" in hk.hook(hk.event("Stop")).json["systemMessage"]


def test_audit_agrees_with_the_session_report(hk):
    """The audit's consumers are the report's `tools_in_context`: the tool
    results since the last compaction, the same figures."""
    before = [("Read", "r" * 30000), ("Grep", "g" * 9000)]
    boundary = {"type": "system", "subtype": "compact_boundary", "isSidechain": False, "sessionId": hk.session,
                "parentUuid": None, "uuid": "cb", "compactMetadata": {"trigger": "auto", "preTokens": 160000}}
    after = tool_records([("Bash", "b" * 6000), ("Read", "r" * 2000), ("Bash", "c" * 2000)], session=hk.session)
    for r in after:
        r["uuid"] += "-after"
        r["message"]["id"] = r["message"].get("id", "") + "-after"
    hk.write_transcript(tool_records(before, session=hk.session) + [boundary] + after
                        + transcript_records(150000, session=hk.session))
    msg = hk.hook(hk.event("Stop")).json["systemMessage"]
    report = json.loads(hk.engine("session", "report", str(hk.transcript), "--json").stdout)
    top = report["tools_in_context"][0]
    assert (top["name"], top["est_tokens"], top["share"]) == ("Bash", 2000, 80.0)
    total = round(report["tool_result_bytes_in_context"] / report["bytes_per_token"])
    assert f"tool output: ~{total} tokens" in msg and "Bash: ~2000 tokens in 2 call(s) (80.0%)" in msg, msg
    assert "Grep" not in msg, "what the compaction removed is not in the context"


def test_monitor_warns_between_stops_and_once_per_epoch(hk):
    """An agentic session: tool calls, no Stop. The PostToolUse monitor warns
    at each threshold once; the Stop monitor then says nothing more."""
    post = hk.event("PostToolUse", tool_response={"stdout": "ok"})
    _fill(hk, 100000)
    hk.hook(post).assert_silent()
    _fill(hk, 150000, tools=TOOLS + [("Bash", "n" * 60000)])
    msg = hk.hook(post).json["systemMessage"]
    assert "Context 75% full" in msg and "past 70%" in msg, msg
    hk.hook(post).assert_silent()
    stop = hk.hook(hk.event("Stop")).json["systemMessage"]
    assert "Context audit" in stop and "Context 75% full" not in stop, "one warning per threshold between them"
    _fill(hk, 30000, tools=TOOLS + [("Bash", "n" * 60000), ("Read", "m" * 100)])  # compacted
    hk.hook(post).assert_silent()
    _fill(hk, 165000, tools=TOOLS + [("Bash", "n" * 60000), ("Read", "m" * 100), ("Bash", "q" * 140000)])
    assert "past 80%" in hk.hook(post).json["systemMessage"]


def test_monitor_reads_the_fill_only_when_growth_could_cross(hk):
    """After reading 50%, a transcript grown by a few bytes cannot be past
    70% (it would need 40,000 more tokens): the fill is not read, so a usage
    record claiming 75% is not seen until the transcript grew enough."""
    post = hk.event("PostToolUse", tool_response={"stdout": "ok"})
    _fill(hk, 100000)
    hk.hook(post).assert_silent()
    small = transcript_records(150000, session=hk.session)
    hk.append_transcript(small[1:])
    hk.hook(post).assert_silent()
    hk.append_transcript(tool_records([("Bash", "w" * 40000)], session=hk.session) + small[1:])
    assert "past 70%" in hk.hook(post).json["systemMessage"]


def test_monitor_to_model_when_the_profile_says_so(hk):
    prof = shared_profile(profile_text({"Stop": [{"name": "context_monitor", "to_model": True},
                                                 {"name": "context_audit", "enabled": False}]}))
    _fill(hk, 185000)
    run = hk.hook(hk.event("Stop"), profile=prof)
    assert "past 90%" in run.context and "past 90%" in run.json["systemMessage"]


def test_monitor_to_model_waits_for_the_main_model_not_a_subagent(hk):
    """The fill is the main chain's: a subagent's tool call must not put the
    warning in the subagent's context (its model never saw that figure) nor
    use the threshold up; the main model's next tool call gets it."""
    prof = shared_profile(profile_text({"PostToolUse": [{"name": "context_monitor_tools", "to_model": True}]}))
    _fill(hk, 150000)
    sub = hk.event("PostToolUse", tool_response={"stdout": "ok"}, agent_id="a1b2c3", agent_type="general-purpose")
    hk.hook(sub, profile=prof).assert_silent()
    run = hk.hook(hk.event("PostToolUse", tool_response={"stdout": "ok"}), profile=prof)
    assert "past 70%" in run.context and "past 70%" in run.json["systemMessage"], str(run)


def test_effort_guidance_at_session_start(hk):
    """...and after a compaction, which took what the start added (Claude
    Code 2.1.332: no request after an auto-compaction held it, measured;
    Codex: tests/test_agents_e2e.py)."""
    assert "[Effort policy: medium]" in hk.hook(hk.event("SessionStart", source="startup")).context
    assert "[Effort policy: medium]" in hk.hook(hk.event("SessionStart", source="compact")).context
    assert "[Effort policy: medium]" in hk.hook(hk.event("SessionStart", source="clear")).context
    low = shared_profile(profile_text(effort="low"))
    assert "[Effort policy: low]" in hk.hook(hk.event("SessionStart", source="resume"), profile=low).context
    high = shared_profile(profile_text(effort="high"))
    hk.hook(hk.event("SessionStart", source="startup"), profile=high).assert_silent()


def test_subagent_on_an_expensive_model_is_warned_or_asked(hk):
    task = hk.event("PreToolUse", tool_name="Task", tool_input={"description": "d", "prompt": "p",
                                                                 "subagent_type": "general-purpose", "model": "opus"})
    assert hk.hook(task).context.endswith("[Effort policy: medium] This subagent asks for model opus, an expensive "
                                          "one; under medium effort prefer a cheaper model unless the task needs deep "
                                          "planning.")
    ask = shared_profile(profile_text({"PreToolUse": [{"name": "subagent_effort", "action": "ask"}]}))
    out = hk.hook(task, profile=ask).json["hookSpecificOutput"]
    assert out["permissionDecision"] == "ask" and "opus" in out["permissionDecisionReason"]
    high = shared_profile(profile_text(effort="high"))
    hk.hook(task, profile=high).assert_silent()
    cheap = dict(task, tool_input={"prompt": "p", "model": "sonnet"})
    hk.hook(cheap).assert_silent()


def test_precompact_prints_the_instructions(hk):
    """...and not the text given to `/compact`: the agent puts that in the
    summary request itself, before the hook's (Claude Code 2.1.332,
    measured: `/compact keep the API notes` with the engine's hooks gave
    "Additional Instructions:\nkeep the API notes\n\nFocus on preserving:
    ... - keep the API notes ..."; the user's words twice)."""
    ev = hk.event("PreCompact", trigger="manual", custom_instructions="keep the failing test names")
    run = hk.hook(ev)
    assert run.returncode == 0 and run.stdout.startswith("Focus on preserving:")
    assert "keep the failing test names" not in run.stdout
    mine = hk.home / ".claude" / "compact-instructions.txt"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("Keep only the plan.\n")
    assert hk.hook(ev).stdout == "Keep only the plan.\n"


def test_precompact_cuts_the_users_file_between_characters(hk):
    """A file over max_file_bytes (20000) whose cut falls inside a two-byte
    character: the instructions end on the last whole character, within
    the bound, with no replacement character."""
    mine = hk.home / ".claude" / "compact-instructions.txt"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("K" + "\u00e9" * 10050, encoding="utf-8")
    out = hk.hook(hk.event("PreCompact", trigger="auto")).stdout
    assert out == "K" + "\u00e9" * 9999 + "\n", repr(out[-8:])


@pytest.mark.parametrize("agent", ["codex", "copilot", "claude-code"])
def test_precompact_instructions_are_made_only_for_an_agent_that_takes_them(hk, agent):
    """Codex and Copilot CLI take no answer at their PreCompact (their YAML's
    `answers` has no compaction_instructions): the instructions were made
    there all the same (the user's file read, over max_file_bytes: a log
    line), then dropped with a second line ("codex takes no
    compaction_instructions at PreCompact; left out"), at each compaction.
    Now the handler does not run there; Claude Code's PreCompact still
    answers, and Copilot's still readies the rules its background summary
    will take (another handler of the event, run as before)."""
    mine = hk.home / ".claude" / "compact-instructions.txt"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("Keep only the plan.\n" + "K" * 30000)
    if agent == "copilot":
        payload, args = {"sessionId": hk.session, "timestamp": 1795674298969, "cwd": str(hk.project),
                         "trigger": "auto"}, ("--event", "preCompact")
    else:
        payload, args = hk.event("PreCompact", trigger="auto"), ()
    run = hk.engine("hook", "--agent", agent, *args, stdin=json.dumps(payload).encode())
    assert run.returncode == 0 and run.stderr == "", str(run)[:2000]
    if agent == "claude-code":
        assert run.stdout.startswith("Keep only the plan.\n") and len(run.stdout) <= 20001, run.stdout[:80]
        assert [l for l in hk.log_lines() if "over max_file_bytes" in l], hk.log_lines()
        return
    assert run.stdout == "" and hk.log_lines() == [], hk.log_lines()
    state = "".join(p.read_text() for p in hk.session_files())
    assert ("iv_ahead:rules" in state) is (agent == "copilot"), state


def test_passthrough_makes_every_hook_do_nothing(hk):
    env = {"ENGINE_HOOKS_PASSTHROUGH": "1"}
    for ev in (hk.event("SessionStart"), failure(hk, "x", "boom"), hk.event("PreCompact", trigger="auto"), b"not json"):
        hk.hook(ev, env=env).assert_silent()
    assert not hk.state.exists() or list(hk.state.rglob("*")) == []


@pytest.mark.parametrize("case", ["malformed", "truncated", "missing", "huge_line", "fifo"])
def test_broken_transcripts_and_events_exit_0(hk, case):
    if case == "malformed":
        run = hk.hook(b'{"hook_event_name": "PostToolUseFailure", "session_id": ')
        run.assert_silent()
        assert len(hk.log_lines()) == 1
        return
    hk.transcript.parent.mkdir(parents=True, exist_ok=True)
    if case == "truncated":
        hk.transcript.write_text(json.dumps(transcript_records(150000)[1])[:-40])
    elif case == "huge_line":
        big = transcript_records(150000)
        big[0]["message"]["content"] = "x" * 3_000_000
        hk.write_transcript(big[:1])
    elif case == "fifo":
        os.mkfifo(hk.transcript)
    run = hk.hook(hk.event("Stop"))
    run.assert_silent()
    assert hk.log_lines() == []


def test_an_unwritable_store_costs_one_log_line(hk):
    prof = shared_profile(profile_text(memory={"path": "/proc/engine-cannot-write/mem.ndjson"}))
    run = hk.hook(failure(hk, "make", "make: *** [all] Error 2"), profile=prof)
    run.assert_silent()
    lines = hk.log_lines()
    assert len(lines) == 1 and "tool memory" in lines[0], lines


def test_a_fifo_in_place_of_the_store_is_never_waited_on(hk):
    """The store was opened with a plain open: a FIFO at its path held every
    PreToolUse (the banner's read) and every failure (the append) until the
    hook's deadline, and `engine memory list` for good."""
    hk.state.mkdir(parents=True, exist_ok=True)
    os.mkfifo(hk.state / "tool-memory.ndjson")
    hk.hook(hk.event("PreToolUse"), timeout=60).assert_silent()
    hk.hook(failure(hk, "make", "make: *** [all] Error 2"), timeout=60).assert_silent()
    lines = hk.log_lines()
    assert len(lines) == 1 and "cannot write the tool memory" in lines[0], lines  # one line, no deadline
    listed = hk.engine("memory", "list", timeout=60)
    assert listed.returncode == 1 and "not a regular file" in listed.stderr, str(listed)


# Exactness, not speed: 50 processes on a shared 2-core machine can take
# longer than the default deadline, so this profile gives them a minute.
PATIENT = profile_text(deadline_ms=60000, kill_after_ms=61000, install_timeout_seconds=62,
                       state={"call_timeout_ms": 10000, "connect_timeout_ms": 10000})


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["files", "redis"])
def test_fifty_parallel_hooks_keep_memory_exact(hk, backend, request):
    if backend == "redis":
        server = request.getfixturevalue("redis_server")
        hk.extra_env["ENGINE_REDIS_URL"] = server.url
    # ten different errors (words, not numbers: errors that differ only in a
    # number are one entry, see tests/test_memory_lessons.py), five times each
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
    events = [failure(hk, f"step {words[i % 10]}", f"error {words[i % 10]}", tid=f"toolu_{i:03d}") for i in range(50)]
    prof = shared_profile(PATIENT)
    # Compiled once (no deadline), and the hooks settings and redaction
    # patterns cached by one failure of another tool, not 50 times at once.
    assert hk.engine("memory", "list", "--profile", prof).returncode == 0
    warm = hk.event("PostToolUseFailure", session="warm", tool_name="Warm", tool_input={}, error="x")
    hk.hook(warm, profile=prof).assert_silent()
    assert hk.log_lines() == [], "the warm-up itself ran to the end"
    runs = hk.hooks_parallel(events, profile=prof)
    for r in runs:
        r.assert_silent()
    assert hk.log_lines() == []
    entries = json.loads(hk.engine("memory", "list", "--json", "--tool", "Bash").stdout)
    assert sorted(e["count"] for e in entries) == [5] * 10, entries
    assert hk.log_lines() == []


def test_validate_points_at_a_bad_template(hk):
    prof = hk.root / "bad.yaml"
    prof.write_text("kind: profile\nname: bad\nextends: default\nhooks:\n  events:\n    Stop:\n"
                    "      - name: context_monitor\n        template: 'Context {{ fil_pct }}%'\n")
    run = hk.engine("validate", "--profile", str(prof), str(prof))
    assert run.returncode != 0
    assert "bad.yaml:8:" in run.stderr + run.stdout and "fil_pct" in run.stderr + run.stdout, str(run)


def test_install_sets_and_uninstall_removes_only_its_autocompact_value(hk):
    prof = shared_profile(profile_text(autocompact_pct=80))
    run = hk.engine("install", "--profile", str(prof))
    assert run.returncode == 0, str(run)
    settings = json.loads((hk.project / ".claude" / "settings.json").read_text())
    assert settings["env"]["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] == "80"
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "PreCompact", "SessionStart", "SessionEnd"):
        assert event in settings["hooks"], event
    assert hk.engine("uninstall").returncode == 0
    assert not (hk.project / ".claude").exists(), "the file and the folder install created are gone"
    # a value the user set is theirs: install leaves it and uninstall keeps it
    path = hk.project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "60"}}))
    hk.engine("install", "--profile", str(prof))
    assert json.loads(path.read_text())["env"]["CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"] == "60"
    hk.engine("uninstall")
    assert json.loads(path.read_text()) == {"env": {"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "60"}}


def test_preview_shows_the_answer_and_writes_nothing(hk):
    _fill(hk, 150000)
    run = hk.engine("memory", "preview", "Stop", "--transcript", str(hk.transcript))
    assert run.returncode == 0, str(run)
    assert "# context fill: 75.0% (150000 of 200000 tokens)" in run.stdout
    assert "Context audit (fill: 75%" in run.stdout and "remember_unseen_failures: records only" in run.stdout
    quiet = hk.engine("memory", "preview", "SessionStart", "--effort", "high")
    assert quiet.stdout.rstrip().endswith("(nothing printed)"), str(quiet)
    assert not (hk.state / "tool-memory.ndjson").exists() and hk.session_files() == []


def test_a_secret_in_a_broken_event_never_reaches_the_log(hk):
    raw = ('{"hook_event_name": "PostToolUseFailure", "session_id": "s", "tool_name": "Bash", '
           f'"tool_input": {{"command": "export T={SECRET}"}}, "error": "{SECRET2}" ').encode()
    hk.hook(raw).assert_silent()
    hk.hook(failure(hk, f"export T={SECRET}", SECRET2),
            profile=shared_profile(profile_text(memory={"path": "/proc/engine-cannot-write/mem.ndjson"}))).assert_silent()
    assert len(hk.log_lines()) == 2
    for p in engine_files(hk):
        data = p.read_bytes()
        assert SECRET.encode() not in data and SECRET2.encode() not in data, f"secret written to {p}"


def test_validate_names_a_bad_error_pattern_once(hk):
    prof = hk.root / "badre.yaml"
    prof.write_text("kind: profile\nname: badre\nextends: default\nhooks:\n  memory:\n    error_patterns: ['(unclosed']\n")
    run = hk.engine("validate", "--profile", str(prof), str(prof))
    assert run.returncode != 0
    lines = [l for l in (run.stderr + run.stdout).splitlines() if "error_patterns[0]" in l]
    # at the pattern itself: line 6, after "    error_patterns: ["
    assert len(lines) == 1 and lines[0].startswith(f"{prof}:6:22:"), str(run)


def test_validate_names_a_tool_memory_pattern_that_runs_away(hk):
    """hooks.memory's patterns run with Python's re over every failed tool
    call's output: one that backtracks without end would take each such
    hook to its deadline. validate probes it as it probes a protect
    pattern, and says so once."""
    prof = hk.root / "slowre.yaml"
    prof.write_text("kind: profile\nname: slowre\nextends: default\nhooks:\n  memory:\n    skip_lines: ['(a+)+$']\n")
    run = hk.engine("validate", str(prof))
    assert run.returncode == 1, str(run)
    lines = [l for l in (run.stderr + run.stdout).splitlines() if "skip_lines[0]" in l]
    assert len(lines) == 1 and lines[0].startswith(f"{prof}:6:18: hooks.memory.skip_lines[0]: pattern runs away"), str(run)


def test_context_audit_without_a_tally_says_so(hk):
    """A session whose context filled without tool output (no PostToolUse
    recorded) still gets an audit that says what it knows, not an empty list."""
    _fill(hk, 150000, tools=[])
    msg = hk.hook(hk.event("Stop")).json["systemMessage"]
    assert "Context audit (fill: 75%" in msg and "No tool output was tallied" in msg, msg
    assert "Suggestion: /compact." in msg


def test_a_context_warning_is_not_given_again_after_redis_fails_mid_session(hk, redis_server):
    """With the state in Redis, the monitor's record of the thresholds it
    warned at lived in Redis only: when Redis failed mid-session the
    session went on in files, which did not hold it, and the next event
    past 70% warned again.  That record is kept in the session's file as
    well (as the records of what the engine delivered are): after the
    failover the warning is not repeated, and the next threshold still
    warns."""
    hk.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    post = hk.event("PostToolUse", tool_response={"stdout": "ok"})
    _fill(hk, 150000)
    assert "Context 75% full" in hk.hook(post).json["systemMessage"]
    hk.hook(post).assert_silent()
    assert redis_server.client().hget(f"rules-engine:session:{hk.session}", "warned:context_monitor:70") == b"1"
    redis_server.stop()
    hk.append_transcript(transcript_records(152000, session=hk.session))
    hk.hook(post).assert_silent()
    lines = hk.log_lines()
    assert len(lines) == 1 and "redis" in lines[0].lower(), lines  # the session left Redis: said once
    hk.append_transcript(transcript_records(165000, session=hk.session))
    assert "past 80%" in hk.hook(post).json["systemMessage"]
