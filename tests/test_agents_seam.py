"""The agent seam: each agent document read against payloads as the agent
sends them, and the answers rendered in its own shape (fixtures in
tests/agents/<agent>.yaml, one per agent), and every transcript reader on
lines of its agent's format."""

from pathlib import Path

import pytest
import yaml

from engine.agents import table
from engine.agents.answer import render
from engine.agents.event import Event

FIXTURES = sorted((Path(__file__).parent / "agents").glob("*.yaml"))


def _load(path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_every_built_in_agent_has_a_fixture():
    assert sorted(p.stem for p in FIXTURES) == table.names()


def _cases(what):
    for path in FIXTURES:
        data = _load(path)
        for i, case in enumerate(data.get(what, ())):
            yield pytest.param(data["agent"], case, id=f"{path.stem}-{i}")


def _value(event, name):
    if name in ("output_streams",):
        found = event.output_streams()
        return list(found) if found is not None else None
    if name == "file_paths":
        return event.file_paths()
    return getattr(event, name)


@pytest.mark.parametrize("agent,case", list(_cases("events")))
def test_payload_fields_in_the_engines_words(agent, case):
    event = Event(table.get(agent), case["payload"], agent_event=case.get("event"))
    for name, want in case["expect"].items():
        assert _value(event, name) == want, name


@pytest.mark.parametrize("agent,case", list(_cases("answers")))
def test_answers_in_the_agents_shape(agent, case):
    spec = table.get(agent)
    event = Event(spec, case["event"], agent_event=case.get("agent_event"))
    out = render(spec, event, **case["give"])
    if "expect_text" in case:
        assert out.text == case["expect_text"] and out.obj is None
    else:
        assert out.obj == case["expect"]
    assert out.dropped == case.get("dropped", [])


# ------------------------------------------------------------ the readers

import json  # noqa: E402

from engine.agents.transcripts import backwards, forwards  # noqa: E402
from engine.core.transcript import Problems  # noqa: E402

READING = {"max_line_bytes": 1 << 20, "chunk_bytes": 1 << 16}

LINES = {
    "claude": [
        {"type": "user", "version": "2.1.330", "message": {"content": "deploy it"}},
        {"type": "assistant", "version": "2.1.330", "message": {"id": "m1", "model": "claude-opus-4-6",
         "usage": {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900,
                   "output_tokens": 7},
         "content": [{"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "make"}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "tu1", "is_error": True,
                                                   "content": [{"type": "text", "text": "Exit code 2"}]}]}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "abcdef123", "compactMetadata": {"preTokens": 155000}},
        {"type": "attachment", "attachment": {"type": "nested_memory", "path": "/p/.claude/rules/py.md"}},
    ],
    "codex": [
        {"type": "session_meta", "payload": {"cli_version": "0.169.0", "cwd": "/p"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                               "content": [{"type": "input_text", "text": "deploy it"}]}},
        {"type": "token_usage_record", "payload": {"response_id": "r1", "usage": {
            "input_tokens": 1000, "cached_input_tokens": 900, "output_tokens": 7}}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "c1",
                                               "arguments": "{\"cmd\": \"make\"}"}},
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                                               "output": "Process exited with code 2\nOutput:\nboom\n"}},
        {"type": "compacted", "ordinal": 9, "payload": {"message": "summary"}},
        {"type": "event_msg", "payload": {"type": "token_count", "info": {"model_context_window": 258400}}},
    ],
    "gemini": [
        {"sessionId": "g1", "startTime": "2026-11-26T06:11:30Z", "kind": "main"},
        {"id": "u1", "type": "user", "content": [{"text": "<hook_context>RULES</hook_context>\n\ndeploy it"}]},
        {"id": "m1", "type": "gemini", "model": "gemini-2.5-pro", "content": "",
         "tokens": {"input": 1000, "output": 7, "cached": 900, "thoughts": 3},
         "toolCalls": [{"id": "c1", "name": "run_shell_command", "args": {"command": "make"}}]},
        {"id": "u2", "type": "user", "content": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                                                       "response": {"error": "boom"}}}]},
        {"$set": {"lastUpdated": "x"}},
    ],
    "copilot": [
        {"type": "session.start", "data": {"copilotVersion": "1.0.102", "selectedModel": "gpt-5.1"}},
        {"type": "user.message", "data": {"content": "deploy it"}},
        {"type": "session.usage_record", "data": {"usage": {"model": "gpt-5.1", "inputTokens": 1000,
                                                             "outputTokens": 7, "cacheReadTokens": 900,
                                                             "maxPromptTokens": 128000, "apiCallId": "r1"}}},
        {"type": "assistant.message", "data": {"toolRequests": [{"toolCallId": "c1", "name": "bash",
                                                                  "arguments": {"command": "make"}}]}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": False,
                                                      "result": {"content": "boom"}}},
        {"type": "session.compaction_complete", "data": {"preCompactionTokens": 20000}},
    ],
}


@pytest.mark.parametrize("reader", sorted(LINES))
def test_reader_records(tmp_path, reader):
    path = tmp_path / "t.jsonl"
    text = "".join(json.dumps(o) + "\n" for o in LINES[reader]) + '{"torn": '
    path.write_text(text + "\nnot json\n", encoding="utf-8")
    with open(path, "rb") as fh:
        recs = list(forwards(reader, fh, READING, Problems()))
    kinds = [r.kind for r in recs]
    assert "prompt" in kinds and "tool_call" in kinds and "tool_result" in kinds and "usage" in kinds
    call = next(r for r in recs if r.kind == "tool_call")
    result = next(r for r in recs if r.kind == "tool_result")
    assert result.id == call.id and result.is_error
    usage = next(r for r in recs if r.kind == "usage")
    assert usage.context == (1003 if reader == "claude" else 1000)
    assert next(r for r in recs if r.kind == "prompt").text.strip().endswith("deploy it")
    if reader != "gemini":
        assert "compaction" in kinds
    newest = [r.kind for r in backwards(reader, str(path), 1 << 20)]
    assert newest[0] == kinds[-1] and sorted(newest) == sorted(kinds)


def test_backwards_reads_only_the_kinds_asked(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in LINES["claude"]), encoding="utf-8")
    found = list(backwards("claude", str(path), 1 << 20, kinds=("usage",)))
    assert [r.kind for r in found] == ["usage"] and found[0].model == "claude-opus-4-6"
