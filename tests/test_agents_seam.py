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
from support import code

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
    if name == "exit_code":
        return event.exit_code()
    if name == "exit_status":
        return event.exit_status()
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


# -- one seam: nothing outside engine/agents names what an agent sends --------

ENGINE = Path(__file__).resolve().parent.parent / "engine"
# Modules that read Claude Code's own files by design, each with its reason
# (engine session report and replay read every agent's transcript through
# the readers: none of theirs is here).
AGENT_SPECIFIC = {"ccm/purge.py": "rewrites Claude Code's transcript lines in place (purge reads that format only)"}
# Words that are also the engine's own vocabulary (neutral fields and kinds).
NEUTRAL_WORDS = {"cwd", "prompt", "source", "model", "command", "reason", "decision", "trigger", "name",
                 "args", "text", "event", "type", "hooks", "version", "timeout", "matcher", "session", "path",
                 "transcript", "tool", "input", "output", "stdout", "stderr", "interrupted", "file_path",
                 "error", "tool_use_id", "session_id", "custom_instructions",
                 "messages"}  # the engine's records, chat message lists
# and template variables use these too


def _agent_words():
    """Event names, payload keys and answer keys of every agent document."""
    words = set()

    def keys(node):
        if isinstance(node, dict):
            for k, v in node.items():
                words.add(k)
                keys(v)
        elif isinstance(node, list):
            for v in node:
                keys(v)

    for name in table.names():
        data = table.get(name).data
        words.update(data["events"])
        for spec in data["payload"].values():
            path = spec if isinstance(spec, str) else spec.get("path", "")
            words.update(path.split("."))
        for spec in data["answers"].values():
            keys(spec.get("template"))
            keys(spec.get("rewrite"))
    from engine.agents.spec import NEUTRAL_EVENTS

    return words - NEUTRAL_WORDS - set(NEUTRAL_EVENTS) - {""}


def test_no_module_outside_the_seam_names_an_agents_events_or_fields():
    words = _agent_words()
    assert {"UserPromptSubmit", "hookSpecificOutput", "tool_response", "tailToolCallRequest",
            "modifiedResult", "postToolUse"} <= words, "the check knows what agents send"
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ENGINE).as_posix()
        if rel.startswith("agents/") or rel in AGENT_SPECIFIC:
            continue
        found += [f"engine/{rel}:{line}: {value!r}" for line, value in code.strings(path) if value in words]
    assert found == [], "read these through engine/agents (event.Event, answer.render, the agent's YAML):\n" + \
        "\n".join(found)


def _agent_folders():
    """The folders and files each agent keeps its own things in: its home's
    default name (.claude, .codex ...) and the first part of every path it
    declares in a project (.github, CLAUDE.md, AGENTS.md ...)."""
    found = set()

    def strings(node):
        if isinstance(node, dict):
            for v in node.values():
                yield from strings(v)
        elif isinstance(node, list):
            for v in node:
                yield from strings(v)
        elif isinstance(node, str):
            yield node

    for name in table.names():
        data = table.get(name).data
        found.add(Path(data["home"]["default"]).name)
        for text in strings(data):
            if text.startswith("{project}/"):
                found.add(text.split("/")[1])
    return found


def test_no_module_outside_the_seam_names_an_agents_folder():
    """...nor a folder or file of an agent's (in a path written in code,
    as a part of it): read it from the agent's YAML (engine/agents)."""
    folders = _agent_folders()
    assert {".claude", ".codex", ".gemini", ".copilot", ".github", "AGENTS.md", "CLAUDE.md"} <= folders
    found = []
    for path in sorted(ENGINE.rglob("*.py")):
        rel = path.relative_to(ENGINE).as_posix()
        if rel.startswith("agents/") or rel in AGENT_SPECIFIC or rel.startswith("cli/"):
            continue  # the CLI's help text may give examples
        found += [f"engine/{rel}:{line}: {value!r}" for line, value in code.strings(path)
                  if folders & set(value.replace("\\", "/").split("/"))]
    assert found == [], "read these from the agent's YAML (engine/agents):\n" + "\n".join(found)
