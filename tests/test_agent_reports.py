"""`engine session report`, `engine replay` and the tool memory's scan on
the recorded sessions of Codex CLI, Gemini CLI and Copilot CLI
(tests/data/transcripts/<agent>/, made by the real agents offline: see
tests/support/samples.py): every figure checked against a plain reading of
the file in this test, in the agent's own format; where each agent keeps
its sessions, found as it keeps them; a model with no price said, never
priced at 0."""

import html
import json
import os
import re
import shutil
import time

import pytest

from engine.base.errors import UserError
from engine.memory.scan import transcript_failures
from engine.replay.events import events
from engine.session import build_report, find, load_style
from engine.session.locate import EVERY
from support import code
from testdata import agent_transcript

AGENTS = ("codex", "gemini", "copilot")


def _lines(agent):
    return [json.loads(line) for line in agent_transcript(agent).read_text(encoding="utf-8").splitlines()]


# ------------------------------------------------------------ plain readings, one per format

def _codex(lines):
    items = [l["payload"] for l in lines if l["type"] == "response_item"]
    kinds = lambda i: i.get("internal_chat_message_metadata_passthrough", {}).get("content_item_kinds", [])
    hooks = [c["text"] for i in items if i["type"] == "message" for c, k in zip(i["content"], kinds(i))
             if k == "hooks.additional_context"]
    outputs = [i["output"] for i in items if i["type"] == "function_call_output"]
    return {"fill": {l["payload"]["response_id"]: l["payload"]["usage"]["input_tokens"]
                     for l in lines if l["type"] == "token_usage_record"},
            "turns": sum(k == "user.text" for i in items if i["type"] == "message" for k in kinds(i)),
            "hooks": hooks, "compactions": sum(l["type"] == "compacted" for l in lines),
            "window": max(l["payload"]["info"]["model_context_window"] for l in lines
                          if l["type"] == "event_msg" and l["payload"]["type"] == "token_count"),
            "tools": {"exec_command": sum(len(o.encode()) for o in outputs)},
            "calls": sum(i["type"] == "function_call" for i in items),
            "model": next(l["payload"]["model"] for l in lines if l["type"] == "turn_context")}


def _copilot(lines):
    data = [(l["type"], l["data"]) for l in lines]
    usage = [d["usage"] for t, d in data if t == "session.usage_record"]
    outputs = [d["result"]["content"] for t, d in data if t == "tool.execution_complete"]
    return {"fill": {u["apiCallId"]: u["inputTokens"] for u in usage},
            "turns": sum(t == "user.message" for t, _ in data),
            "hooks": [d["output"]["additionalContext"] for t, d in data if t == "hook.end" and d.get("output")],
            "compactions": sum(t == "session.compaction_complete" and d["success"] for t, d in data),
            "window": max(u["maxPromptTokens"] for u in usage),
            "tools": {"bash": sum(len(o.encode()) for o in outputs)},
            "calls": sum(len(d["toolRequests"]) for t, d in data if t == "assistant.message"),
            "model": usage[0]["model"]}


def _gemini(lines):
    answers = [l for l in lines if l.get("type") == "gemini"]
    responses = [p["functionResponse"]["response"]["output"] for l in lines if l.get("type") == "user"
                 for p in l["content"] if "functionResponse" in p]
    texts = [p["text"] for l in lines if l.get("type") == "user" for p in l["content"] if "text" in p]
    hooks = [t.split("<hook_context>")[1].split("</hook_context>")[0] for t in texts + responses
             if "<hook_context>" in t]
    return {"fill": {a["id"]: a["tokens"]["input"] for a in answers},
            "turns": sum(not t.startswith("<session_context>") for t in texts), "hooks": hooks,
            "compactions": 1,  # the resumed run compressed once (tests/support/samples.py)
            "window": 1048576,  # the style's, for a Gemini 2.5 model: the agent records none
            "tools": {"run_shell_command": sum(len(o.encode()) for o in responses)},
            "calls": len({c["id"] for a in answers for c in a.get("toolCalls", [])}),
            "model": answers[0]["model"]}


PLAIN = {"codex": _codex, "copilot": _copilot, "gemini": _gemini}


@pytest.fixture(scope="module")
def style():
    return load_style()


@pytest.mark.parametrize("agent", AGENTS)
def test_the_session_report_of_each_agent_is_its_file_read_plainly(agent, style, tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "state"))
    want = PLAIN[agent](_lines(agent))
    r = build_report(str(agent_transcript(agent)), style)  # the agent told by the file's lines
    assert r["agent"] == agent and r["kind"] == "main"
    assert [p["tokens"] for p in r["fill"]] == list(want["fill"].values())
    assert r["api_calls"] == len(want["fill"]) and r["context_window"] == want["window"]
    assert r["peak"]["tokens"] == max(want["fill"].values()) and r["models"] == [want["model"]]
    assert r["turns"] == want["turns"] and len(r["compactions"]) == want["compactions"]
    assert [p["segment"] for p in r["fill"]][-1] == want["compactions"]  # the fill starts a stretch at each
    assert len(r["refreshes"]) == len(want["hooks"]) and r["hook_contexts"] == len(want["hooks"])
    banners = [f for f in r["refreshes"] if f["handler"] == "rules"]
    assert len(banners) == sum(h.startswith("[Rules refresh") for h in want["hooks"]) >= 1
    assert all(f["chars"] == len(h) for f, h in zip(r["refreshes"], want["hooks"]))
    assert {t["name"]: t["result_bytes"] for t in r["tools"]} == want["tools"]
    assert r["tools"][0]["calls"] == want["calls"] and r["error_count"] == 1
    (err,) = r["errors"]
    assert err["message"] == "ls: cannot access '/no-such-folder-for-the-sample': No such file or directory"


def test_what_a_gemini_compression_keeps_is_no_refresh_of_its_own(style, tmp_path, monkeypatch):
    """Gemini CLI 0.61.0 writes the turns its compression keeps again, the
    hook context in them too (tests/support/AGENTS-MEASURED.md, "After a
    compaction"): the report counts each hook context once, where it was
    given, not again at the compression."""
    from hook_fixtures import GeminiChat

    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "state"))
    chat = GeminiChat(tmp_path / "chats" / "session-2026-11-28T12-17-abcd1234.jsonl", "abcd1234-0000", tmp_path)
    chat.start("START CONTEXT")
    chat.prompt("go")
    chat.response(30000)
    chat.result(added="AFTER TOOL")
    chat.response(31000, call=False, text="one")
    chat.compression(kept=[[{"text": "go"}], [chat.result_part("AFTER TOOL")]])
    chat.prompt("next")
    chat.response(9000, call=False, text="two")
    r = build_report(str(chat.path), style)
    assert r["agent"] == "gemini" and len(r["compactions"]) == 1
    assert [f["chars"] for f in r["refreshes"]] == [len("START CONTEXT"), len("AFTER TOOL")]
    assert r["hook_contexts"] == 2


def test_a_patch_codex_could_not_apply_is_an_error_of_its_report(style, tmp_path, monkeypatch):
    """Codex answers a patch that does not apply with its message alone, no
    exit status (measured with 0.169.0: a file missing, lines not found, no
    patch at all): the report counts it among the session's errors, by the
    style's marker, with the sample's own failed `ls`."""
    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "state"))
    lines = _lines("codex")
    when = lines[-1]["timestamp"]
    patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: x.txt\n@@\n-two\n+three\n*** End Patch\nEOF"
    lines += [{"timestamp": when, "type": "response_item", "payload": {
                  "type": "function_call", "name": "exec_command", "call_id": "call_patch",
                  "arguments": json.dumps({"cmd": patch})}},
              {"timestamp": when, "type": "response_item", "payload": {
                  "type": "function_call_output", "call_id": "call_patch",
                  "output": "apply_patch verification failed: Failed to find expected lines in /p/x.txt:\ntwo"}}]
    path = tmp_path / agent_transcript("codex").name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    r = build_report(str(path), style)
    assert r["agent"] == "codex" and r["error_count"] == 2
    assert [e["message"] for e in r["errors"]][-1] == "apply_patch verification failed: Failed to find expected lines in /p/x.txt:"


def test_an_agent_named_reads_the_file_as_that_agents(tmp_path, style, cli):
    """--agent names the reader when the lines show no agent's format; a Codex
    file named as Claude Code's (it would read as empty) is one line saying
    whose it is; an unknown agent is one line naming them all."""
    path = agent_transcript("codex")
    run = cli("session", "report", str(path), "--agent", "claude-code")
    assert run.returncode == 1 and len(run.err.strip().splitlines()) == 1, str(run)
    assert "a transcript of codex, not of claude-code" in run.err, str(run)
    run = cli("session", "report", str(path), "--agent", "codex", "--json")
    assert run.returncode == 0 and json.loads(run.out)["agent"] == "codex", str(run)
    run = cli("session", "report", str(path), "--agent", "cursor")
    assert run.returncode == 1 and len(run.err.strip().splitlines()) == 1, str(run)
    assert "cursor" in run.err and all(n in run.err for n in ("claude-code", "codex", "gemini", "copilot"))


# ------------------------------------------------------------ replay

# Per agent: what its hooks get for each event the file shows (its events'
# names, from pipelines/agents/NAME.yaml), as a plain reading of the file says.
def _codex_events(lines):
    calls = [l["payload"] for l in lines if l["type"] == "response_item" and l["payload"]["type"] == "function_call"]
    outs = [l["payload"]["output"].split("\nOutput:\n", 1)[1] for l in lines
            if l["type"] == "response_item" and l["payload"]["type"] == "function_call_output"]
    pre = [("PreToolUse", "Bash", {"command": json.loads(c["arguments"])["cmd"]}) for c in calls]
    return {"names": ["SessionStart", "UserPromptSubmit"] + ["PreToolUse", "PostToolUse"] * 3
            + ["PreCompact", "PostCompact", "SessionStart", "Stop", "SessionEnd"], "pre": pre, "outputs": outs}


def _gemini_events(lines):
    calls = [c for l in lines if l.get("type") == "gemini" for c in l.get("toolCalls", [])]
    outs = [{"llmContent": p["functionResponse"]["response"]["output"]} for l in lines if l.get("type") == "user"
            for p in l["content"] if "functionResponse" in p]
    pre = [("BeforeTool", c["name"], c["args"]) for c in calls]
    # no compaction event: Gemini CLI sends none (PreCompress fires before every model call); the
    # session is resumed (its header written again): the first run ends, the second starts; a
    # BeforeModel before each of the 5 requests (one per response id)
    assert len({l["id"] for l in lines if l.get("type") == "gemini"}) == 5
    return {"names": ["SessionStart", "BeforeAgent"] + ["BeforeModel", "BeforeTool", "AfterTool"] * 3
            + ["BeforeModel", "AfterAgent", "SessionEnd", "SessionStart", "BeforeAgent", "BeforeModel", "AfterAgent",
               "SessionEnd"],
            "pre": pre, "outputs": outs}


def _copilot_events(lines):
    data = [(l["type"], l["data"]) for l in lines]
    calls = [r for t, d in data if t == "assistant.message" for r in d["toolRequests"]]
    outs = [{"textResultForLlm": d["result"]["content"]} for t, d in data if t == "tool.execution_complete"]
    pre = [("preToolUse", r["name"], r["arguments"]) for r in calls]
    names = ["sessionStart", "userPromptSubmitted"]
    for t, d in data:  # preCompact before a compaction starts in the background (no sessionStart after it)
        if t == "assistant.message":
            names += ["preToolUse"] * len(d["toolRequests"])
        elif t == "tool.execution_complete":
            names.append("postToolUse")
        elif t == "session.compaction_start":
            names.append("preCompact")
    return {"names": names + ["agentStop", "sessionEnd"], "pre": pre, "outputs": outs}


EVENTS = {"codex": _codex_events, "gemini": _gemini_events, "copilot": _copilot_events}
TOOL_KEYS = {"codex": ("tool_name", "tool_input", "tool_response"), "gemini": ("tool_name", "tool_input", "tool_response"),
             "copilot": ("toolName", "toolArgs", "toolResult")}


@pytest.mark.parametrize("agent", AGENTS)
def test_replay_sends_each_event_as_the_agent_would(agent, tmp_path):
    """The payloads replay builds from the agent's YAML: its event names in
    the agent's order, the calls as its hooks name them (Codex: the shell is
    Bash {command}, not the transcript's exec_command {cmd}), the outputs in
    its shape, the session's fields where its hooks find them."""
    from engine.agents import table
    from engine.replay.events import neutral_events
    from engine.replay.payload import build

    want = EVENTS[agent](_lines(agent))
    spec = table.get(agent)
    reader = spec.data["transcript"]["reader"]
    built = [build(spec, ev) for ev, _ in neutral_events(agent_transcript(agent), reader, "/here", "s-1", "/t.jsonl")]
    names = [b[0] for b in built if b]
    assert names == want["names"]
    name_key, input_key, output_key = TOOL_KEYS[agent]
    payloads = [b[1] for b in built if b]
    pre = [p for n, p in zip(names, payloads) if n == want["pre"][0][0]]
    assert [(want["pre"][0][0], p[name_key], p[input_key]) for p in pre] == want["pre"]
    posts = [p[output_key] for p in payloads if output_key in p]
    assert posts == want["outputs"]
    session_key = spec.data["payload"]["session"]
    assert {p[session_key] for p in payloads} == {"s-1"} and {p[spec.data["payload"]["cwd"]] for p in payloads} == {"/here"}
    assert [p for p, _ in events(agent_transcript(agent), cwd="/here", session_id="s-1", transcript_path="/t.jsonl")] \
        == payloads  # events() gives the same, the agent told by the file


@pytest.mark.parametrize("agent", AGENTS)
def test_replay_figures_of_each_agent(agent, tmp_path, monkeypatch):
    """API calls, compactions, the model and its price, the events sent:
    as the plain reading says.  (What the hooks answer is the hooks' own
    test; an agent whose payload today's hooks cannot read is said in
    `problems`, never hidden.)"""
    from engine.replay.run import replay

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    want, sent = PLAIN[agent](_lines(agent)), EVENTS[agent](_lines(agent))
    s = replay([str(agent_transcript(agent))], profile="default")["sessions"][0]
    assert s["agent"] == agent and s["model"] == want["model"]
    assert s["api_calls"] == len(want["fill"]) and s["compactions"] == want["compactions"]
    assert s["events"] == len(sent["names"])
    assert s["rates"]["name"] == {"codex": "gpt-5.1", "copilot": "gpt-5.1", "gemini": "gemini-2.5-flash"}[agent]
    assert s["injected"]["cost"] is not None
    # none of them takes the compaction's instructions from a hook (their YAML has no such answer): the
    # profile's compact_instructions, which runs at Codex's PreCompact and Copilot's preCompact, is not counted
    assert s["compaction_instructions"]["count"] == 0


def test_a_model_with_no_price_is_said_and_not_priced(tmp_path, monkeypatch):
    from engine.replay.run import replay

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    text = agent_transcript("codex").read_text(encoding="utf-8").replace('"gpt-5.1-codex"', '"o9-reasoner"')
    path = tmp_path / "unpriced.jsonl"
    path.write_text(text, encoding="utf-8")
    result = replay([str(path), str(agent_transcript("gemini"))], profile="default")
    unpriced, priced = result["sessions"]
    assert unpriced["model"] == "o9-reasoner" and unpriced["rates"] is None
    assert any("o9-reasoner has no price" in p for p in unpriced["problems"])
    assert unpriced["injected"]["cost"] is None and unpriced["net"]["cost"] is None
    assert result["totals"]["unpriced"] == [str(path)]
    assert result["totals"]["net"]["cost"] == pytest.approx(priced["net"]["cost"])  # only what has a price
    from engine.replay.render import load, render_html, render_text

    shown = render_text(result, load())
    assert "not priced: no price for this model" in shown and "n/a" in shown
    # the page says it as well, and shows the figures the terminal shows (costs by handler, kept out, the rates)
    page = html.unescape(render_html(result, load()))
    assert "not priced: no price for this model" in page and "Not priced (their models have no price; in no total)" in page
    assert "o9-reasoner has no price" in page and "priced as gemini-2.5-flash" in page
    figures = re.compile(r"[-+]?\d(?:[\d,]*\d)?(?:\.\d+)?")
    assert set(figures.findall(shown)) - set(figures.findall(page)) == set()


# ------------------------------------------------------------ the tool memory's scan

@pytest.mark.parametrize("agent,tool,field", [("codex", "Bash", "command"), ("gemini", "run_shell_command", "command"),
                                              ("copilot", "bash", "command")])
def test_the_scan_finds_each_agents_failed_call_as_its_hooks_name_it(agent, tool, field):
    (found,) = transcript_failures(str(agent_transcript(agent)), 1 << 20)
    assert found["tool"] == tool and found["input"][field] == "ls /no-such-folder-for-the-sample"
    assert "No such file or directory" in found["error"]
    # the call in the plain file answers to the same id
    assert found["id"] in agent_transcript(agent).read_text(encoding="utf-8")


# ------------------------------------------------------------ where each agent keeps its sessions

LAYOUT = {  # where each agent writes a session (pipelines/agents/NAME.yaml, transcript.sessions)
    "codex": ("CODEX_HOME", ".codex", "sessions/2026/11/26/rollout-2026-11-26T08-56-05-{id}.jsonl"),
    "gemini": (None, ".gemini", "tmp/project/chats/session-2026-11-26T08-56-{id8}.jsonl"),
    "copilot": ("COPILOT_HOME", ".copilot", "session-state/{id}/events.jsonl"),
}


def _session_id(agent):
    first = _lines(agent)[0]
    return {"codex": lambda: first["payload"]["id"], "gemini": lambda: first["sessionId"],
            "copilot": lambda: first["data"]["sessionId"]}[agent]()


def _install(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    placed = {}
    for agent, (var, folder, pattern) in LAYOUT.items():
        root = home / folder
        if var:
            monkeypatch.setenv(var, str(root))
        sid = _session_id(agent)
        path = root / pattern.format(id=sid, id8=sid[:8])
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(agent_transcript(agent), path)
        placed[agent] = (sid, path)
    return placed


def test_sessions_are_found_by_id_where_each_agent_keeps_them(tmp_path, monkeypatch):
    placed = _install(tmp_path, monkeypatch)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    for agent, (sid, path) in placed.items():
        assert find(sid[:13], False, str(tmp_path), agent) == str(path)  # a prefix of the id
        assert find(sid, False, str(tmp_path), EVERY) == str(path)  # any agent's, the whole id (Gemini: 8 in the name)
        with pytest.raises(UserError, match="no session"):  # without an agent named: Claude Code's (purge, gc)
            find(sid, False, str(tmp_path))


def test_a_gemini_session_resumed_in_another_minute_is_one_session_and_its_own_file(tmp_path, monkeypatch):
    """Gemini CLI 0.61.0 names a chat file by the minute it began and the
    session id's first 8 characters: a resume in a later minute leaves a
    file holding only the session's start beside the session's own, which
    the resumed run goes on writing (tests/support/AGENTS-MEASURED.md).
    Measured before: `engine session report ID` refused every id of such a
    session as ambiguous ("give more of the id", though the whole id named
    both files).  Now the session's file written last is its file; two
    sessions whose ids begin alike are still told apart by their whole ids."""
    placed = _install(tmp_path, monkeypatch)
    sid, own = placed["gemini"]
    header = json.dumps({"sessionId": sid, "projectHash": "p", "startTime": "2026-11-26T08:57:00.000Z", "kind": "main"})
    stray = own.with_name(f"session-2026-11-26T08-57-{sid[:8]}.jsonl")
    stray.write_text(header + "\n" + json.dumps({"$set": {"messages": []}}) + "\n")
    os.utime(stray, (1_800_000_000, 1_800_000_000))
    os.utime(own, (1_800_000_100, 1_800_000_100))  # the resumed run wrote on in the session's own file
    for target in (sid[:8], sid[:13], sid):
        assert find(target, False, str(tmp_path), "gemini") == str(own), target
    other = sid[:8] + "-0000-4000-8000-000000000000"
    alike = own.with_name(f"session-2026-11-26T08-58-{sid[:8]}.jsonl")
    alike.write_text(json.dumps({"sessionId": other, "projectHash": "p", "startTime": "t", "kind": "main"}) + "\n")
    with pytest.raises(UserError, match="ambiguous") as refused:
        find(sid[:8], False, str(tmp_path), "gemini")
    assert sid in str(refused.value) and other in str(refused.value), "each by its whole id"
    assert find(sid, False, str(tmp_path), "gemini") == str(own)
    assert find(other, False, str(tmp_path), "gemini") == str(alike)


def test_current_is_the_newest_session_of_this_project_of_any_agent(tmp_path, monkeypatch):
    """The recorded sessions ran in /sample/project (their lines say so;
    Gemini CLI names it by its hash): the newest of them is the current one,
    an agent named narrows it, another folder has none."""
    placed = _install(tmp_path, monkeypatch)
    for n, agent in enumerate(("copilot", "codex", "gemini")):
        os.utime(placed[agent][1], (1_800_000_000 + n, 1_800_000_000 + n))
    assert find(None, True, "/sample/project", EVERY) == str(placed["gemini"][1])
    assert find(None, True, "/sample/project", "codex") == str(placed["codex"][1])
    assert find(None, True, "/sample/project", "copilot") == str(placed["copilot"][1])
    with pytest.raises(UserError, match="no session of this project"):
        find(None, True, "/sample/elsewhere", "gemini")


def test_a_codex_subagents_rollout_is_no_session_of_its_own(tmp_path, monkeypatch):
    """Codex 0.169.0 keeps a spawned agent's rollout beside its sessions,
    its session_meta naming its parent (measured: `parent_thread_id`,
    `thread_source: subagent`).  Newer than its parent's, it is still not
    the project's current session, no session of its own in a listing,
    and not one of the sessions `engine doctor` looks for the hooks in."""
    from engine.agents.spec import Agent
    from engine.hooks.firing import recent_sessions
    from engine.session.did import sessions_since

    placed = _install(tmp_path, monkeypatch)
    main, path = placed["codex"]
    sub = "01a22099-9092-7dc3-9d1a-8f8495987349"
    meta = {"timestamp": "2026-11-26T08:56:06.000Z", "type": "session_meta", "payload": {
        "session_id": main, "id": sub, "parent_thread_id": main, "cwd": "/sample/project", "originator": "codex_exec",
        "cli_version": "0.169.0", "source": {"subagent": {"thread_spawn": {"parent_thread_id": main, "depth": 1}}},
        "thread_source": "subagent"}}
    spawned = path.with_name(f"rollout-2026-11-26T08-56-06-{sub}.jsonl")
    spawned.write_text(json.dumps(meta) + "\n", encoding="utf-8")
    os.utime(path, (1_800_000_000, 1_800_000_000))
    os.utime(spawned, (1_800_000_100, 1_800_000_100))
    assert find(None, True, "/sample/project", "codex") == str(path)
    assert find(sub, False, "/sample/project", "codex") == str(spawned), "its own file is still found by its id"
    listed = [(agent, sid) for _, sid, _project, _path, agent in sessions_since(10**10)]
    assert ("codex", main) in listed and ("codex", sub) not in listed, listed
    from engine.agents.table import agents

    assert recent_sessions(Agent(agents()["codex"]), 5) == [str(path)]


# ------------------------------------------------------------ one seam

# What the agents write in their transcripts and folders: the readers'
# (engine/agents/transcripts/) and the agents' YAML, never a report's.
AGENT_WORDS = ("isSidechain", "compact_boundary", "toolUseResult", "isCompactSummary", "isMeta", "permissionMode",
               "cache_read_input_tokens", "cache_creation_input_tokens", "input_tokens", "<synthetic>",
               "token_usage_record", "response_item", "function_call_output",
               "functionResponse", "toolCalls", "hook_context", "projectHash", "session.usage_record",
               "tool.execution_complete", "toolRequests", "hook.end", "hook_event_name", "transcript_path",
               "tool_response", ".claude", "projects", "CLAUDE.md", "Bash")


def test_no_report_module_names_what_an_agent_writes():
    from pathlib import Path

    engine = Path(__file__).resolve().parent.parent / "engine"
    modules = [*(engine / "session").glob("*.py"), *(engine / "replay").glob("*.py"), engine / "memory" / "scan.py"]
    import re

    words = re.compile("|".join(rf"(?<![\w.]){re.escape(w)}(?!\w)" for w in AGENT_WORDS))
    found = [(m.name, s) for m in modules for _, s in code.strings(m) if words.search(s)]
    assert found == []


def test_since_lists_every_agents_sessions_with_their_whole_ids(tmp_path, monkeypatch):
    """--since: each agent's sessions of the period, under the id its hooks
    record them by (Gemini CLI's file name holds only 8 characters of it)."""
    from engine.session.did import sessions_since

    placed = _install(tmp_path, monkeypatch)
    old = placed["copilot"][1]
    os.utime(old, (1_000_000_000, 1_000_000_000))  # 2001: out of a week
    rows = {(agent, sid): (project, path) for _, sid, project, path, agent in sessions_since(7 * 86400)}
    assert set(rows) == {("codex", placed["codex"][0]), ("gemini", placed["gemini"][0])}
    assert rows[("codex", placed["codex"][0])] == ("/sample/project", str(placed["codex"][1]))
    assert rows[("gemini", placed["gemini"][0])][1] == str(placed["gemini"][1])
    # a Gemini session resumed in a later minute: one row, its own file (written last)
    sid, own = placed["gemini"]
    stray = own.with_name(f"session-2026-11-26T08-57-{sid[:8]}.jsonl")
    stray.write_text(json.dumps({"sessionId": sid, "projectHash": "p", "startTime": "t", "kind": "main"}) + "\n")
    now = time.time()
    os.utime(stray, (now - 60, now - 60))
    os.utime(own, (now, now))
    gemini = [(path, mtime) for mtime, s, _, path, agent in sessions_since(7 * 86400) if agent == "gemini"]
    assert gemini == [(str(own), now)]


def test_the_period_report_names_each_sessions_agent(tmp_path, monkeypatch):
    """The --since rows, as JSON, in the terminal and on the page, say whose session each is."""
    from engine.session import load_style, render_period
    from engine.session.did import period_report

    placed = _install(tmp_path, monkeypatch)
    style = load_style()
    period = period_report("7d", style)
    assert {(s["agent"], s["session_id"]) for s in period["sessions"]} == {(a, sid) for a, (sid, _) in placed.items()}
    lines = render_period(period, style).splitlines()
    for agent, (sid, _) in placed.items():
        (row,) = [ln for ln in lines if ln.startswith(sid)]
        assert row.split()[1] == agent
    page = render_period(period, style, html=True)
    assert all(f"<td>{sid}</td><td>{agent}</td>" in page for agent, (sid, _) in placed.items())
