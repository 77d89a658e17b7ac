"""Every agent's transcript reader (engine/agents/transcripts/), unit by unit:
each record kind of each agent's format, with the fields the reports and
replay read; a line longer than the bound passed over and never held; a
truncated last line and garbage lines counted, not fatal; the format of a
file told from its first lines; and the recorded session of each agent
(tests/data/transcripts/<agent>/) read whole, its records counted against a
plain reading of the file here."""

import json
import tracemalloc
from collections import Counter

import pytest

from engine.agents.transcripts import backwards, forwards
from engine.core.transcript import Problems
from testdata import agent_transcript, transcript

READING = {"max_line_bytes": 1 << 20, "chunk_bytes": 1 << 16}


def _read(reader, path, reading=READING):
    problems = Problems()
    with open(path, "rb") as fh:
        return list(forwards(reader, fh, reading, problems)), problems


def _write(path, objs, tail=""):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs) + tail, encoding="utf-8")
    return path


def _one(recs, kind, **match):
    found = [r for r in recs if r.kind == kind and all(getattr(r, k) == v for k, v in match.items())]
    assert len(found) == 1, (kind, match, [(r.kind, r.line) for r in recs])
    return found[0]


# ------------------------------------------------------------ each record kind

CLAUDE = [
    {"type": "summary", "summary": "an earlier session", "leafUuid": "l0"},
    {"type": "user", "version": "2.0.41", "sessionId": "c-7", "cwd": "/w/app", "permissionMode": "plan",
     "timestamp": "2026-02-01T09:00:00Z", "message": {"content": [{"type": "text", "text": "tidy the imports"},
                                                                   {"type": "image", "source": {}}]}},
    {"type": "assistant", "sessionId": "c-7", "requestId": "req-9",
     "message": {"model": "claude-haiku-4-5", "usage": {"input_tokens": 11, "cache_read_input_tokens": "400",
                                                       "cache_creation_input_tokens": 30, "output_tokens": 5},
                 "content": [{"type": "tool_use", "id": "tu-a", "name": "Grep", "input": {"pattern": "import"}}]}},
    {"type": "user", "toolUseResult": {"filenames": ["a.py"]},
     "message": {"content": [{"type": "tool_result", "tool_use_id": "tu-a",
                              "content": [{"type": "text", "text": "a.py"}, {"type": "text", "text": "b.py"},
                                          {"type": "image"}]}]}},
    {"type": "user", "isMeta": True, "message": {"content": "<system-reminder>[Rules refresh, turn 3: x]"}},
    {"type": "system", "subtype": "api_error", "content": "overloaded", "timestamp": "2026-02-01T09:01:00Z"},
    {"type": "system", "subtype": "compact_boundary", "uuid": "b0undary-1",
     "compactMetadata": {"trigger": "manual", "preTokens": 91000}},
    {"type": "user", "isCompactSummary": True, "message": {"content": "what happened so far"}},
    {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["ADDED"]}},
    {"type": "attachment", "attachment": {"type": "instructions", "files": [{"path": "/w/app/CLAUDE.md"}]}},
    {"type": "assistant", "isSidechain": True, "message": {"id": "side-1", "usage": {"input_tokens": 3},
                                                           "model": "<synthetic>", "content": []}},
]


def test_claude_code_records(tmp_path):
    recs, problems = _read("claude", _write(tmp_path / "c.jsonl", CLAUDE))
    assert problems.bad_lines == 0 and problems.lines == len(CLAUDE)
    assert _one(recs, "version").value == "2.0.41"
    s = [r for r in recs if r.kind == "session"][0]
    assert (s.id, s.cwd, s.project, s.mode, s.time) == ("c-7", "/w/app", "/w/app", "plan", "2026-02-01T09:00:00Z")
    p = _one(recs, "prompt")
    assert (p.text, p.images, p.line) == ("tidy the imports", 1, 2)
    u = _one(recs, "usage", response="req-9")  # no message.id: the request id names the response
    assert (u.input, u.cache_read, u.cache_write, u.output, u.context) == (11, 400, 30, 5, 441)
    assert _one(recs, "tool_call").tool == "Grep"
    r = _one(recs, "tool_result")
    assert (r.id, r.text, r.size, r.image, r.is_error, r.output) == ("tu-a", "a.py\nb.py", 8, 1, False,
                                                                     {"filenames": ["a.py"]})
    hook_text = _one(recs, "delivered", via="text")
    assert hook_text.how == "hook" and hook_text.texts[0].endswith("turn 3: x]")
    assert _one(recs, "api_error").text == "overloaded"
    c = _one(recs, "compaction")
    assert (c.id, c.trigger, c.pre_tokens) == ("b0undary", "manual", 91000)
    assert _one(recs, "summary").text == "what happened so far"
    assert _one(recs, "delivered", via="record", how="hook").texts == ["ADDED"]
    assert _one(recs, "delivered", how="instructions").paths == ["/w/app/CLAUDE.md"]
    side = _one(recs, "usage", response="side-1")
    assert side.sidechain and side.synthetic
    assert not any(r.kind == "prompt" for r in recs if r.line in (4, 5, 8))  # results, meta, summary: no prompt


CODEX = [
    {"timestamp": "t0", "type": "session_meta", "payload": {"id": "x-1", "cwd": "/w/svc", "cli_version": "0.170.2"}},
    {"timestamp": "t1", "type": "turn_context", "payload": {"cwd": "/w/svc", "model": "gpt-5.2",
                                                            "approval_policy": "on-request"}},
    {"timestamp": "t2", "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "AGENTS text"},
                                                       {"type": "input_text", "text": "ship it"}],
        "internal_chat_message_metadata_passthrough": {"content_item_kinds": ["agents_md.instructions",
                                                                              "user.text"]}}},
    {"timestamp": "t3", "type": "response_item", "payload": {
        "type": "message", "role": "developer", "content": [{"type": "input_text", "text": "HOOKED"},
                                                            {"type": "input_text", "text": "<permissions>"}],
        "internal_chat_message_metadata_passthrough": {"content_item_kinds": ["hooks.additional_context",
                                                                              "permissions.instructions"]}}},
    {"timestamp": "t4", "type": "response_item", "payload": {"type": "function_call", "name": "exec_command",
                                                             "call_id": "k1", "arguments": "{\"cmd\": \"make lint\"}"}},
    {"timestamp": "t5", "type": "token_usage_record", "payload": {"response_id": "r-77", "usage": {
        "input_tokens": 5000, "cached_input_tokens": 4200, "output_tokens": 70}}},
    {"timestamp": "t6", "type": "response_item", "payload": {
        "type": "function_call_output", "call_id": "k1",
        "output": "Chunk ID: 1\nProcess exited with code 3\nOutput:\nlint: 2 problems\nProcess exited with code 0\n"}},
    {"timestamp": "t7", "type": "event_msg", "payload": {"type": "token_count", "info": {"model_context_window": 400000}}},
    {"timestamp": "t8", "type": "event_msg", "payload": {"type": "stream_error", "message": "reconnecting"}},
    {"timestamp": "t9", "type": "compacted", "ordinal": 42, "payload": {"message": "the story so far"}},
]


def test_codex_records(tmp_path):
    recs, _ = _read("codex", _write(tmp_path / "x.jsonl", CODEX))
    assert _one(recs, "version").value == "0.170.2"
    assert [(s.id, s.cwd, s.mode) for s in recs if s.kind == "session"] == [("x-1", "/w/svc", None),
                                                                           (None, "/w/svc", "on-request")]
    assert _one(recs, "window", tokens=None).model == "gpt-5.2" and _one(recs, "window", model=None).tokens == 400000
    assert _one(recs, "prompt").text == "ship it"  # the instructions item of the same message is not the prompt
    assert _one(recs, "delivered", how="instructions").texts == ["AGENTS text"]
    assert _one(recs, "delivered", how="hook").texts == ["HOOKED"]  # the permissions item is the agent's own
    call = _one(recs, "tool_call")
    assert (call.id, call.tool, call.input) == ("k1", "exec_command", {"cmd": "make lint"})
    u = _one(recs, "usage")
    assert (u.context, u.input, u.cache_read, u.output, u.response, u.time) == (5000, 800, 4200, 70, "r-77", "t5")
    r = _one(recs, "tool_result")
    # the exit status of the header, not a line the command printed; the hooks get what it printed
    assert r.is_error and r.output == "lint: 2 problems\nProcess exited with code 0\n"
    assert _one(recs, "api_error").text == "reconnecting"
    assert _one(recs, "compaction").id == "42" and _one(recs, "summary").text == "the story so far"


GEMINI = [
    {"sessionId": "g-5", "projectHash": "ab" * 32, "startTime": "2026-03-01T08:00:00Z", "kind": "main"},
    {"$set": {"messages": [{"id": "ctx", "type": "user", "content": [{"text": "<session_context>..."}]}]}},
    {"id": "p1", "timestamp": "2026-03-01T08:00:01Z", "type": "user",
     "content": [{"text": "<hook_context>RULES A</hook_context>\n\nrename the module"}]},
    {"id": "m1", "type": "gemini", "model": "gemini-2.5-pro", "content": "",
     "tokens": {"input": 9000, "output": 40, "cached": 6000, "thoughts": 12}},
    {"id": "m1", "type": "gemini", "model": "gemini-2.5-pro", "content": "",
     "tokens": {"input": 9000, "output": 40, "cached": 6000, "thoughts": 12},
     "toolCalls": [{"id": "f1", "name": "run_shell_command", "args": {"command": "git mv a b"}}]},
    {"id": "p2", "type": "user", "content": [{"functionResponse": {"id": "f1", "name": "run_shell_command", "response": {
        "output": "Output: fatal: bad source\nExit Code: 128\n<hook_context>AFTER</hook_context>"}}}]},
    {"$set": {"messages": [{"id": "ctx", "type": "user", "content": [{"text": "<session_context>..."}]},
                           {"id": "sum", "type": "user", "content": [{"text": "IN SHORT"}]},
                           {"id": "ok", "type": "gemini", "content": [{"text": "Got it."}]}]}},
]


def test_gemini_records(tmp_path):
    path = _write(tmp_path / "g.jsonl", GEMINI)
    recs, _ = _read("gemini", path)
    s = _one(recs, "session")
    assert (s.id, s.project, s.time) == ("g-5", "ab" * 32, "2026-03-01T08:00:00Z")
    assert _one(recs, "prompt").text == "rename the module"
    assert [d.texts for d in recs if d.kind == "delivered"] == [["RULES A"], ["AFTER"]]
    assert [(u.response, u.context, u.input, u.cache_read, u.output) for u in recs if u.kind == "usage"] == \
        [("m1", 9000, 3000, 6000, 52)] * 2  # recorded twice under one id: the reports count it once
    assert _one(recs, "tool_call").input == {"command": "git mv a b"}
    assert _one(recs, "tool_result").is_error  # the shell's exit code line, no error field
    # the history rewritten shorter with messages the file never had: a compression
    assert _one(recs, "compaction").line == 7 and _one(recs, "summary").text == "IN SHORT"
    assert _one(recs, "compaction").kept_prompts == 0, "it kept no turn"
    # a resumed session restores a history as long as it was: no compaction
    resumed = GEMINI[:6] + [{"$set": {"messages": [{"id": i, "type": "user", "content": []}
                                                   for i in ("ctx", "p1", "m1", "m1_response", "p2")]}}]
    recs, _ = _read("gemini", _write(tmp_path / "r.jsonl", resumed))
    assert not any(r.kind == "compaction" for r in recs)


def test_gemini_compression_keeps_the_newest_turns_with_what_hooks_added_to_them(tmp_path):
    """0.61.0 writes the kept turns again after the summary and its reply,
    under new ids (measured with tests/support/interactive_compress.py):
    their hook context is a kept delivery, in view after the compression;
    the summary is the first new message alone."""
    result = {"functionResponse": {"id": "f2", "name": "run_shell_command",
                                   "response": {"output": "b\n\n<hook_context>KEPT</hook_context>"}}}
    turn = [{"id": "p3", "type": "user", "content": [{"text": "next"}]},
            {"id": "m2", "type": "gemini", "content": "", "toolCalls": [{"id": "f2", "name": "run_shell_command"}]},
            {"id": "p4", "type": "user", "content": [result]}]
    kept = [{"id": "k1", "type": "user", "content": [{"text": "next"}]},
            {"id": "k2", "type": "gemini", "content": [{"functionCall": {"id": "f2", "name": "run_shell_command"}}]},
            {"id": "k3", "type": "user", "content": [result]}]
    patch = GEMINI[-1]["$set"]["messages"] + kept
    recs, _ = _read("gemini", _write(tmp_path / "k.jsonl", GEMINI[:-1] + turn + [{"$set": {"messages": patch}}]))
    at = [i for i, r in enumerate(recs) if r.kind == "compaction"]
    assert len(at) == 1 and _one(recs, "summary").text == "IN SHORT"
    assert _one(recs, "compaction").kept_prompts == 1, "the kept turns begin at the last prompt"
    after = [(r.kind, r.texts, r.kept) for r in recs[at[0]:] if r.kind == "delivered"]
    assert after == [("delivered", ["KEPT"], True)], "the kept result's context, and nothing else of the kept turns"
    assert not any(r.kept for r in recs[:at[0]] if r.kind == "delivered")
    assert sum(r.kind in ("tool_result", "prompt") for r in recs[at[0]:]) == 0, "no second result, no second prompt"


COPILOT = [
    {"type": "session.start", "timestamp": "T0", "data": {"sessionId": "cp-3", "copilotVersion": "1.0.110",
                                                          "selectedModel": "claude-sonnet-4.5",
                                                          "context": {"cwd": "/w/web"}}},
    {"type": "user.message", "data": {"content": "add a test"}},
    {"type": "session.usage_record", "data": {"usage": {"model": "claude-sonnet-4.5", "inputTokens": 30000,
                                                         "outputTokens": 900, "cacheReadTokens": 25000,
                                                         "cacheWriteTokens": 100, "maxPromptTokens": 128000,
                                                         "apiCallId": "a-1"}}},
    {"type": "assistant.message", "data": {"toolRequests": [{"toolCallId": "q1", "name": "bash",
                                                              "arguments": {"command": "npm test"}}]}},
    {"type": "tool.execution_complete", "data": {"toolCallId": "q1", "success": True,
                                                  "shellExecution": {"exitCode": 1},
                                                  "result": {"content": "1 failing"}}},
    {"type": "hook.end", "data": {"hookType": "userPromptSubmitted", "output": {"additionalContext": "NOTE"}}},
    {"type": "assistant.message", "data": {"toolRequests": [{"toolCallId": "q2", "name": "edit",
                                                              "arguments": {"path": "/w/web/a.ts"}}]}},
    {"type": "tool.execution_complete", "data": {"toolCallId": "q2", "success": False,
                                                  "error": {"message": "No match found", "code": "failure"}}},
    {"type": "session.error", "data": {"errorType": "query", "message": "no response"}},
    {"type": "session.compaction_complete", "data": {"success": False, "preCompactionTokens": 1}},
    {"type": "session.compaction_complete", "data": {"success": True, "compactionAttemptId": "c0mpact-9",
                                                      "trigger": "threshold", "preCompactionTokens": 118000,
                                                      "summaryContent": "SUMMED"}},
]


def test_copilot_records(tmp_path):
    recs, _ = _read("copilot", _write(tmp_path / "p.jsonl", COPILOT))
    assert _one(recs, "version").value == "1.0.110"
    s = _one(recs, "session")
    assert (s.id, s.cwd, s.time) == ("cp-3", "/w/web", "T0")
    assert _one(recs, "window").model == "claude-sonnet-4.5"
    assert _one(recs, "prompt").text == "add a test"
    u = _one(recs, "usage")
    assert (u.context, u.input, u.cache_read, u.cache_write, u.window) == (30000, 5000, 25000, 100, 128000)
    assert [c.tool for c in recs if c.kind == "tool_call"] == ["bash", "edit"]
    shell, edit = (r for r in recs if r.kind == "tool_result")
    assert shell.is_error and shell.text == "1 failing"  # `success`, but the shell exited 1
    assert edit.is_error and edit.text == "No match found"  # a failed call: no `result`, its error's message
    assert _one(recs, "delivered").texts == ["NOTE"]
    assert _one(recs, "api_error").text == "no response"
    c = _one(recs, "compaction")  # the failed attempt is none
    assert (c.id, c.trigger, c.pre_tokens) == ("c0mpact-", "threshold", 118000)
    assert _one(recs, "summary").text == "SUMMED"
    assert not any(r.sidechain for r in recs)


# A task's subagent in its parent's file (measured with 1.0.102): each of its
# lines carries agentId; what a subagentStart hook added went to the subagent.
COPILOT_SUBAGENT = [
    {"type": "user.message", "data": {"content": "go"}},
    {"type": "assistant.message", "data": {"toolRequests": [{"toolCallId": "t1", "name": "task", "arguments": {
        "agent_type": "general-purpose", "prompt": "Say hi.", "model": "claude-opus-4.5"}}]}},
    {"type": "subagent.started", "agentId": "sub-1", "data": {"toolCallId": "t1", "model": "claude-opus-4.5"}},
    {"type": "hook.end", "data": {"hookType": "subagentStart", "output": {"additionalContext": "TO_THE_SUBAGENT"}}},
    {"type": "user.message", "agentId": "sub-1", "data": {"content": "Say hi."}},
    {"type": "session.usage_record", "agentId": "sub-1", "data": {"usage": {
        "model": "claude-opus-4.5", "inputTokens": 90000, "outputTokens": 10, "cacheReadTokens": 0,
        "maxPromptTokens": 128000, "initiator": "sub-agent"}}},
    {"type": "assistant.message", "agentId": "sub-1", "data": {"toolRequests": [
        {"toolCallId": "s1", "name": "bash", "arguments": {"command": "cat nope-1.txt"}}]}},
    {"type": "hook.end", "agentId": "sub-1", "data": {"hookType": "postToolUse",
                                                      "output": {"additionalContext": "IN_THE_SUBAGENT"}}},
    {"type": "tool.execution_complete", "agentId": "sub-1", "data": {
        "toolCallId": "s1", "success": True, "shellExecution": {"exitCode": 1},
        "result": {"content": "cat: nope-1.txt: No such file or directory"}}},
    {"type": "tool.execution_complete", "data": {"toolCallId": "t1", "success": True,
                                                  "result": {"content": "sub says hi"}}},
    {"type": "session.usage_record", "data": {"usage": {"model": "gpt-5.1", "inputTokens": 3000, "outputTokens": 10,
                                                         "maxPromptTokens": 128000}}},
]


def test_a_copilot_subagents_records_are_its_own(tmp_path):
    """What a task's subagent read, used, ran and was given is not the main
    context: the in-view check, the context monitor, the session report
    and replay leave it out of the main context."""
    recs, _ = _read("copilot", _write(tmp_path / "p.jsonl", COPILOT_SUBAGENT))
    side = {(r.kind, getattr(r, "id", None) or getattr(r, "text", None) or getattr(r, "context", None))
            for r in recs if r.sidechain}
    main = {(r.kind, getattr(r, "id", None) or getattr(r, "text", None) or getattr(r, "context", None))
            for r in recs if not r.sidechain}
    assert side == {("prompt", "Say hi."), ("usage", 90000), ("tool_call", "s1"), ("tool_result", "s1"),
                    ("delivered", None)}, side
    assert main == {("prompt", "go"), ("tool_call", "t1"), ("tool_result", "t1"), ("usage", 3000)}, main
    assert sorted(r.texts[0] for r in recs if r.kind == "delivered") == ["IN_THE_SUBAGENT", "TO_THE_SUBAGENT"]
    assert all(r.sidechain for r in recs if r.kind == "delivered")


# ------------------------------------------------------------ hostile files

@pytest.mark.parametrize("reader,lines", [("claude", CLAUDE), ("codex", CODEX), ("gemini", GEMINI),
                                          ("copilot", COPILOT)])
def test_a_long_line_is_passed_over_and_never_held_garbage_and_a_torn_tail_are_counted(tmp_path, reader, lines):
    """A 1 MB line where the bound is 100 KB: skipped and counted, the
    reading's peak memory far under its size; lines that are not JSON or
    not objects counted; the last line cut mid-write noted.  The records
    are those of the clean file, read either way."""
    clean, _ = _read(reader, _write(tmp_path / "clean.jsonl", lines))
    huge = json.dumps({"type": "noise", "payload": {"text": "z" * 1_000_000}, "data": {}})
    body = [json.dumps(o) for o in lines]
    body[2:2] = [huge, "{not json", "[3, 4]", "\"text\""]
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(body) + "\n" + '{"type": "user", "message": {"con', encoding="utf-8")
    small = {"max_line_bytes": 100_000, "chunk_bytes": 16_384}
    tracemalloc.start()
    try:
        recs, problems = _read(reader, path, small)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert problems.long_lines == 1 and problems.bad_lines == 3 and problems.partial_tail
    assert peak < 400_000, peak  # pieces of the long line, never the whole of it
    assert [(r.kind, getattr(r, "id", None)) for r in recs] == [(r.kind, getattr(r, "id", None)) for r in clean]
    later = ("compaction", "summary") if reader == "gemini" else ()  # told from earlier lines: forwards only
    assert Counter(r.kind for r in backwards(reader, str(path), 1 << 22) if r.kind not in later) == \
        Counter(r.kind for r in clean if r.kind not in later)


# ------------------------------------------------------------ which format

@pytest.mark.parametrize("reader,lines", [("claude", CLAUDE), ("codex", CODEX), ("gemini", GEMINI),
                                          ("copilot", COPILOT)])
def test_the_format_is_told_from_the_first_lines(tmp_path, reader, lines):
    from engine.agents.transcripts import detect

    assert detect(str(_write(tmp_path / "f.jsonl", lines))) == reader
    # a first line too long to hold or not JSON is passed over: the next one tells
    path = tmp_path / "g.jsonl"
    path.write_text("x" * 5_000_000 + "\nnot json\n" + "".join(json.dumps(o) + "\n" for o in lines[1:]),
                    encoding="utf-8")
    assert detect(str(path)) == reader


def test_no_format_is_claimed_for_what_is_none_of_them(tmp_path):
    from engine.agents.transcripts import detect

    (tmp_path / "e.jsonl").write_text('{"kind": "unknown"}\n[1]\n', encoding="utf-8")
    assert detect(str(tmp_path / "e.jsonl")) is None
    assert detect(str(tmp_path / "missing.jsonl")) is None and detect(str(tmp_path)) is None


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_each_recorded_session_is_told_by_its_lines(agent):
    from engine.agents.transcripts import detect

    assert detect(str(agent_transcript(agent))) == agent


@pytest.mark.parametrize("name", ["02-spotter-subagent-a2898e3.jsonl", "13-sessionshare-v2115-api-errors.jsonl",
                                  "23-erk-local-v2156-compact-ae4a1257.jsonl"])
def test_claude_codes_recorded_sessions_are_told_by_their_lines(name):
    from engine.agents.transcripts import detect

    assert detect(str(transcript(name))) == "claude"


# ------------------------------------------------------------ the recorded sessions, whole

def _plain(agent):
    return [json.loads(line) for line in agent_transcript(agent).read_text(encoding="utf-8").splitlines()]


def _independent(agent):
    """Counts read from the file plainly, per agent's format (not the reader's code)."""
    lines = _plain(agent)
    if agent == "codex":
        items = [l["payload"] for l in lines if l["type"] == "response_item"]
        return {"tool_call": sum(i["type"] == "function_call" for i in items),
                "tool_result": sum(i["type"] == "function_call_output" for i in items),
                "usage": sum(l["type"] == "token_usage_record" for l in lines),
                "compaction": sum(l["type"] == "compacted" for l in lines),
                "errors": sum("Process exited with code 0" not in i["output"] for i in items
                              if i["type"] == "function_call_output")}
    if agent == "copilot":
        done = [l["data"] for l in lines if l["type"] == "tool.execution_complete"]
        return {"tool_call": sum(len(l["data"]["toolRequests"]) for l in lines if l["type"] == "assistant.message"),
                "tool_result": len(done), "usage": sum(l["type"] == "session.usage_record" for l in lines),
                "compaction": sum(l["type"] == "session.compaction_complete" for l in lines),
                "errors": sum(d["shellExecution"]["exitCode"] != 0 for d in done)}
    calls = {c["id"] for l in lines if l.get("type") == "gemini" for c in l.get("toolCalls", [])}
    results = [p["functionResponse"] for l in lines if l.get("type") == "user" for p in l["content"]
               if "functionResponse" in p]
    return {"tool_call": len(calls), "tool_result": len(results),
            "usage": len({l["id"] for l in lines if l.get("type") == "gemini"}),
            "compaction": 1,  # the resumed run compressed once (tests/support/samples.py)
            "errors": sum("Exit Code: " in r["response"]["output"] for r in results)}


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_each_recorded_session_read_whole(agent):
    recs, problems = _read(agent, agent_transcript(agent))
    want = _independent(agent)
    kinds = Counter(r.kind for r in recs)
    assert problems.bad_lines == problems.long_lines == 0 and not problems.partial_tail
    assert kinds["tool_call"] == want["tool_call"] and kinds["tool_result"] == want["tool_result"]
    assert len({r.response for r in recs if r.kind == "usage"}) == want["usage"]
    assert kinds["compaction"] == kinds["summary"] == want["compaction"]
    assert sum(r.is_error for r in recs if r.kind == "tool_result") == want["errors"] == 1
    calls = {r.id for r in recs if r.kind == "tool_call"}
    assert {r.id for r in recs if r.kind == "tool_result"} <= calls  # every result answers a call
    # cached input is a part of the input the agent reports: the context is the whole prompt
    for u in (r for r in recs if r.kind == "usage"):
        assert u.context == u.input + u.cache_read and u.cache_read <= u.context
    assert any(u.cache_read for u in recs if u.kind == "usage")


def test_a_session_report_lists_its_subagents_apart(tmp_path):
    """The session report leaves a Copilot subagent out of the main figures
    (its records are inline, each with its agentId) and lists it apart:
    in --json and in the terminal report, with its API calls and peak."""
    from engine.session import build_report, load_style, render_text

    path = _write(tmp_path / "events.jsonl", COPILOT_SUBAGENT)
    report = build_report(str(path), load_style(), agent="copilot")
    assert report["peak"]["tokens"] == 3000, report["peak"]
    assert report["subagents"] == [{"file": None, "inline": True, "api_calls": 1, "peak_tokens": 90000,
                                    "tool_result_bytes": report["subagents"][0]["tool_result_bytes"]}]
    assert report["subagents"][0]["tool_result_bytes"] > 0
    text = render_text(report, load_style())
    assert "Subagents (their own contexts, in none of the figures above):\n  in this file: 1 API call(s), peak 90,000 " \
           "tokens" in text, text
