"""The other coding agents, real and offline: Codex CLI, Gemini CLI and
Copilot CLI each run one scripted shell call against a local stand-in of its
model API, inside a loopback-only network namespace (tests/support/offline.py),
with a logging hook (tests/support/loghook.py) installed the agent's own way.
Each smoke test checks the hook fired for the events the engine needs, with
the payload fields it will read, and that the hook's added context reached
the model (in the request bodies the stand-in recorded).

The facts these runs show, and how they were measured, are written down in
tests/support/AGENTS-MEASURED.md. The first tests here check the stand-ins
and the name server themselves, with no agent.

Each agent test starts its own stand-in and HOME, so they run in parallel
under xdist; each takes 2-5 s.
"""

import json
import socket
import urllib.request

import pytest

from support import gemini_api, responses_api
from support.codex import codex_hooks, rollout_lines, run_codex
from support.copilot import copilot_hooks, events_of, run_copilot
from support.gemini import gemini_hooks, run_gemini
from support.hooks import LogHook, context_answer
from support.nodns import NoDNS
from support.standin import say, shell

# ---------------------------------------------------------------- the stand-ins alone


def _post(api, path, body):
    req = urllib.request.Request(api.url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read().decode()


def _sse_data(text):
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


CODEX_TOOLS = [{"type": "function", "name": "exec_command", "parameters": {}}]


def test_the_responses_stand_in_counts_requests_served_not_tool_calls_and_answers_a_summary_aside():
    script = [shell("ls -la"), shell("wc -l notes.txt"), say("Two looks.")]
    with responses_api.ResponsesAPI(script) as api:
        first = _sse_data(_post(api, "/v1/responses", {"input": [], "tools": CODEX_TOOLS}))
        # a compaction request (no tools, a summary prompt) between turns does not consume the script
        summary = _sse_data(_post(api, "/v1/responses", {"input": [
            {"role": "user", "content": [{"type": "input_text", "text": "CONTEXT CHECKPOINT COMPACTION: go"}]}]}))
        # after a compaction the request holds no earlier tool call: the turn is still the second
        second = _sse_data(_post(api, "/v1/responses", {"input": [], "tools": CODEX_TOOLS}))
        third = _sse_data(_post(api, "/v1/responses", {"input": [], "tools": CODEX_TOOLS}))
        after = _sse_data(_post(api, "/v1/responses", {"input": [], "tools": CODEX_TOOLS}))
    done = [events[-1] for events in (first, summary, second, third, after)]
    assert all(d["type"] == "response.completed" and d["response"]["output"] for d in done)
    calls = [d["response"]["output"][0] for d in done]
    assert json.loads(calls[0]["arguments"]) == {"cmd": "ls -la"} and calls[0]["name"] == "exec_command"
    assert calls[1]["content"][0]["text"] == api.summary
    assert json.loads(calls[2]["arguments"]) == {"cmd": "wc -l notes.txt"}
    assert calls[3]["content"][0]["text"] == "Two looks."
    assert calls[4]["content"][0]["text"] == api.after
    assert [r.kind for r in api.log] == ["main", "summary", "main", "main", "main"]
    assert len(api.requests) == 4 and len(api.summaries) == 1


def test_the_responses_stand_in_writes_copilots_shell_call_for_copilots_tool_list():
    with responses_api.ResponsesAPI([shell("printf x")]) as api:
        events = _sse_data(_post(api, "/v1/responses", {"input": [], "tools": [
            {"type": "function", "name": "view"}, {"type": "function", "name": "bash"}]}))
    item = events[-1]["response"]["output"][0]
    assert item["name"] == "bash" and json.loads(item["arguments"])["command"] == "printf x"


def test_the_gemini_stand_in_streams_turns_and_answers_side_questions_from_their_schema():
    tools = [{"functionDeclarations": [{"name": "run_shell_command"}]}]
    schema = {"type": "object", "properties": {"reasoning": {"type": "string"},
                                               "next_speaker": {"type": "string", "enum": ["model", "user"]}}}
    with gemini_api.GeminiAPI([shell("date -u"), say("It is late.")]) as api:
        base = "/v1beta/models/gemini-x"
        one = _sse_data(_post(api, base + ":streamGenerateContent?alt=sse", {"contents": [], "tools": tools}))
        side = json.loads(_post(api, base + ":generateContent", {
            "contents": [], "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema}}))
        squeeze = json.loads(_post(api, base + ":generateContent", {
            "contents": [], "systemInstruction": {"parts": [{"text": "Write a <state_snapshot> of it all."}]}}))
        two = json.loads(_post(api, base + ":generateContent", {"contents": [], "tools": tools}))
    part = lambda answer: answer["candidates"][0]["content"]["parts"][0]
    assert part(one[0]) == {"functionCall": {"name": "run_shell_command", "args": {"command": "date -u"}}}
    assert json.loads(part(side)["text"]) == {"reasoning": "ok", "next_speaker": "user"}
    assert part(squeeze)["text"] == api.summary
    assert part(two)["text"] == "It is late."
    assert [r.kind for r in api.log] == ["main", "side", "summary", "main"]


def test_the_name_server_answers_every_question_nxdomain_and_records_it():
    dns = NoDNS(port=0)
    dns.bind()
    dns.start()
    try:
        query = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + b"\x03api\x07example\x03org\x00" + b"\x00\x01\x00\x01"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(5)
            s.sendto(query, ("127.0.0.1", dns.port))
            answer, _ = s.recvfrom(512)
    finally:
        dns.close()
    assert answer[:2] == b"\x12\x34" and answer[3] & 0x0F == 3 and answer[2] & 0x80  # same id, a response, NXDOMAIN
    assert answer[12:] == query[12:]  # the question echoed
    assert dns.names == ["api.example.org"]


# ---------------------------------------------------------------- the agents


# A command whose output is not in its text: the output in a request proves it ran.
# (No $(...): Gemini CLI refuses a command that holds a substitution.)
CMD = "printf '%%s-%%d\\n' %s 42"


def _world(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    return home, cwd


def _fields(payload, names):
    missing = [n for n in names if n not in payload]
    assert not missing, f"payload without {missing}: {payload}"


@pytest.mark.slow
def test_codex_runs_a_shell_call_offline_and_its_hooks_fire_and_reach_the_model(tmp_path):
    home, cwd = _world(tmp_path)
    hook = LogHook(tmp_path, {"*": context_answer()})
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
    run = run_codex("count for me", home, cwd, [shell(CMD % "codex"), say("It is 42.")],
                    hooks=codex_hooks(hook, events))
    assert run.returncode == 0, str(run)
    assert hook.events() == events, str(run)
    common = ["session_id", "transcript_path", "cwd", "hook_event_name", "model"]
    for call in hook.calls():
        _fields(call["stdin"], common)
        assert call["stdin"]["hook_event_name"] == call["event"]
        assert call["stdin"]["cwd"] == str(cwd)
    (start,), (prompt,), (pre,), (post,), (stop,) = (hook.payloads(e) for e in events)
    assert start["source"] == "startup" and prompt["prompt"] == "count for me"
    assert pre["tool_name"] == "Bash" and pre["tool_input"] == {"command": CMD % "codex"}
    assert post["tool_response"].strip() == "codex-42" and post["tool_use_id"] == pre["tool_use_id"]
    assert stop["last_assistant_message"] == "It is 42."
    # the transcript is the rollout the payload names
    assert run.extra["rollout"] and str(run.extra["rollout"]) == start["transcript_path"]
    assert rollout_lines(run.extra["rollout"])[0]["type"] == "session_meta"
    # every answer's additionalContext is a developer message the model reads
    first, after = run.requests
    developer = [t for role, t in responses_api.input_texts(after) if role == "developer"]
    for event in events[:-1]:
        assert f"CTX_{event}_MARK" in developer, developer
    assert "CTX_SessionStart_MARK" in responses_api.request_text(first)
    assert "codex-42" in responses_api.tool_outputs(after)[0]
    assert all(r.path == "/v1/responses" for r in run.api.log), [r.path for r in run.api.log]


@pytest.mark.slow
def test_gemini_runs_a_shell_call_offline_and_its_hooks_fire_and_reach_the_model(tmp_path):
    home, cwd = _world(tmp_path)
    hook = LogHook(tmp_path, {"*": context_answer()})
    events = ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"]
    run = run_gemini("count for me", home, cwd, [shell(CMD % "gemini"), say("It is 42.")],
                     hooks=gemini_hooks(hook, events))
    assert run.returncode == 0 and run.extra["output"]["response"] == "It is 42.", str(run)
    assert hook.events() == events, str(run)
    for call in hook.calls():
        _fields(call["stdin"], ["session_id", "transcript_path", "cwd", "hook_event_name", "timestamp"])
        assert call["stdin"]["hook_event_name"] == call["event"]
        assert call["env"]["GEMINI_PROJECT_DIR"] == str(cwd)
    (start,), (prompt,), (before,), (after_tool,), (done,), (end,) = (hook.payloads(e) for e in events)
    assert start["source"] == "startup" and prompt["prompt"].endswith("count for me")
    assert before["tool_name"] == "run_shell_command" and before["tool_input"] == {"command": CMD % "gemini"}
    assert "gemini-42" in after_tool["tool_response"]["llmContent"]
    assert done["prompt_response"] == "It is 42." and end["reason"] == "exit"
    first, after = run.requests
    # context arrives wrapped in <hook_context>: SessionStart's before the prompt, AfterTool's in the function response
    assert "<hook_context>CTX_SessionStart_MARK</hook_context>" in gemini_api.request_text(first)
    assert "<hook_context>CTX_BeforeAgent_MARK</hook_context>" in gemini_api.request_text(first)
    (output,) = gemini_api.tool_outputs(after)
    assert "gemini-42" in output and "<hook_context>CTX_AfterTool_MARK</hook_context>" in output


@pytest.mark.slow
def test_copilot_runs_a_shell_call_offline_and_its_hooks_fire_and_reach_the_model(tmp_path):
    home, cwd = _world(tmp_path)
    hook = LogHook(tmp_path, {"*": {"additionalContext": "CTX_{event}_MARK"}})
    events = ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop", "sessionEnd"]
    run = run_copilot("count for me", home, cwd, [shell(CMD % "copilot"), say("It is 42.")],
                      hooks=copilot_hooks(hook, events))
    assert run.returncode == 0, str(run)
    assert hook.events() == events, str(run)
    for call in hook.calls():
        _fields(call["stdin"], ["sessionId", "timestamp", "cwd"])
        assert call["stdin"]["cwd"] == str(cwd)
    (start,), (prompt,), (pre,), (post,), (stop,), (end,) = (hook.payloads(e) for e in events)
    assert start["source"] == "new" and prompt["prompt"] == "count for me"
    assert pre["toolName"] == "bash" and pre["toolArgs"]["command"] == CMD % "copilot"
    assert post["toolResult"]["resultType"] == "success" and "copilot-42" in post["toolResult"]["textResultForLlm"]
    assert stop["transcriptPath"].endswith("events.jsonl") and end["reason"] == "complete"
    first, after = run.requests
    assert "CTX_sessionStart_MARK" in responses_api.request_text(first)
    assert "CTX_userPromptSubmitted_MARK" in responses_api.request_text(first)
    (output,) = responses_api.tool_outputs(after)
    assert "copilot-42" in output and "CTX_postToolUse_MARK" in output  # appended to the tool's output
    assert "CTX_preToolUse_MARK" in responses_api.request_text(after)
    # the transcript records each hook and what the model saw of the tool
    records = events_of(run)
    assert [r["data"]["hookType"] for r in records if r["type"] == "hook.end"] == events
    (complete,) = [r for r in records if r["type"] == "tool.execution_complete"]
    assert complete["data"]["result"]["content"] == output
