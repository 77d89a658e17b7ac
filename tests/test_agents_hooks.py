"""The installed hook command (`engine hook --agent NAME`) on each agent's own
payloads: a large shell output is kept out by that agent's mechanism (Codex:
`decision: block` with the stub as the reason; Copilot: `modifiedResult`;
Gemini: a tail call that prints the stub), the stub reads back exactly what
it replaced, and another project cannot read it.  Payload shapes as each
agent sends them (tests/support/AGENTS-MEASURED.md, tests/agents/*.yaml)."""

import json
import os
import re
import shlex
import sys

import pytest

from hook_fixtures import CURSOR_SOURCE, profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

LINES = 60000  # ~400 KB: over every agent's threshold, as a build log would be
BIG = "".join(f"line {i:05d} of the build log\n" for i in range(LINES))
KEY_AT = "sha256:"


def _payload(agent, project, transcript):
    """(payload, event argument, the text the agent would have shown) of one
    finished shell call with a large output."""
    if agent == "codex":
        return ({"hook_event_name": "PostToolUse", "session_id": "th1", "transcript_path": str(transcript),
                 "cwd": str(project), "model": "gpt-5.1-codex", "turn_id": "t1", "tool_name": "Bash",
                 "tool_input": {"command": "make build"}, "tool_use_id": "call_0001", "tool_response": BIG},
                None, BIG)
    if agent == "gemini":
        text = f"Output: {BIG}"
        return ({"hook_event_name": "AfterTool", "session_id": "g1", "transcript_path": str(transcript),
                 "cwd": str(project), "timestamp": "2026-11-26T06:11:31Z", "tool_name": "run_shell_command",
                 "tool_input": {"command": "make build"}, "tool_response": {"llmContent": text, "returnDisplay": ""}},
                None, text)
    text = BIG + "<shellId: 0 completed with exit code 0>"
    return ({"sessionId": "c1", "timestamp": 1795674298969, "cwd": str(project), "toolName": "bash",
             "toolArgs": {"command": "make build", "description": "build", "mode": "sync"},
             "toolResult": {"textResultForLlm": text, "resultType": "success"}}, "postToolUse", text)


def _run_hook(hk, agent, payload, event_arg):
    args = ["hook", "--agent", agent] + (["--event", event_arg] if event_arg else [])
    run = hk.engine(*args, stdin=json.dumps(payload).encode())
    run.assert_ok()
    return json.loads(run.stdout)


def _stub_of(agent, answer):
    """The stub the model reads instead of the output, as the agent takes it."""
    if agent == "codex":
        assert answer["decision"] == "block", answer
        return answer["reason"]
    if agent == "copilot":
        assert answer["modifiedResult"]["resultType"] == "success", answer
        return answer["modifiedResult"]["textResultForLlm"]
    return None  # Gemini: the output of the tail call


def _key(stub):
    at = stub.index(KEY_AT) + len(KEY_AT)
    return stub[at:at + 64]


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_a_large_shell_output_is_kept_out_by_the_agents_own_mechanism_and_reads_back(hk, agent):
    payload, event_arg, shown = _payload(agent, hk.project, hk.transcript)
    answer = _run_hook(hk, agent, payload, event_arg)
    stub = _stub_of(agent, answer)
    if agent == "gemini":
        call = answer["hookSpecificOutput"]["tailToolCallRequest"]
        assert call["name"] == "run_shell_command", answer
        argv = shlex.split(call["args"]["command"])
        at = argv.index("cache")
        printed = hk.engine(*argv[at:])  # what the agent's shell runs: the engine names itself by path
        assert printed.returncode == 0 and printed.stderr == "", str(printed)
        stub = printed.stdout
    assert len(stub) < 2000 and "[CCM_CACHED]" in stub and "make build" in stub, stub
    key = _key(stub)
    back = hk.engine("cache", "show", key)
    assert back.returncode == 0, str(back)[:2000]
    assert back.stdout == shown, "the stub reads back exactly what the model would have read"
    elsewhere = hk.root / "another-project"
    elsewhere.mkdir()
    (elsewhere / ".git").mkdir()
    for args in (("cache", "show", key), ("cache", "stub", key)):
        refused = hk.engine(*args, cwd=elsewhere)
        assert refused.returncode == 1 and "make build" not in refused.stdout + refused.stderr, str(refused)


def _failing(agent, payload):
    """The payload of the same call exiting with status 3, as the agent reports it in the text."""
    text = json.dumps(payload)
    if agent == "copilot":
        return json.loads(text.replace("completed with exit code 0>", "completed with exit code 3>"))
    payload["tool_response"]["llmContent"] = (f"<untrusted_context>\nOutput: {BIG}\nExit Code: 3\n"
                                              "Process Group PGID: 29910\n</untrusted_context>")
    return payload


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_the_stubs_own_read_back_reaches_the_model_whole(hk, agent):
    """Old: the command the stub says to run (`ENGINE cache show KEY
    --lines 1:200`) printed more than the threshold, and that output was
    cached and replaced by a stub in turn: the model could never read it."""
    payload, event_arg, _shown = _payload(agent, hk.project, hk.transcript)
    answer = _run_hook(hk, agent, payload, event_arg)
    if agent == "gemini":
        key = answer["hookSpecificOutput"]["tailToolCallRequest"]["args"]["command"].split(" cache stub ")[1][:64]
    else:
        key = _key(_stub_of(agent, answer))
    read = f"engine cache show {key} --lines 1:200"
    again = json.loads(json.dumps(payload).replace("make build", read))
    run = hk.engine("hook", "--agent", agent, *(["--event", event_arg] if event_arg else []),
                    stdin=json.dumps(again).encode())
    run.assert_ok()
    out = json.loads(run.stdout) if run.stdout.strip() else {}
    assert not {"decision", "modifiedResult"} & set(out), out
    assert "CCM_CACHED" not in json.dumps(out) and "tailToolCallRequest" not in json.dumps(out), out


@pytest.mark.parametrize("agent, on_path", [("copilot", True), ("copilot", False), ("codex", True), ("gemini", True)])
def test_a_stub_names_the_engine_by_name_only_for_copilot_and_only_where_path_finds_it(hk, agent, on_path):
    """Copilot asks before a command naming a program by a path outside
    the project and refuses it under -p (measured with 1.0.102): before, the
    model could never run a stub's read-back there.  Its stubs name the
    engine by name where PATH finds this very engine; the other agents', and
    Copilot's without it on PATH, by absolute path, which works anywhere."""
    payload, event_arg, _shown = _payload(agent, hk.project, hk.transcript)
    path = os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin", "/bin"] if on_path else ["/usr/bin", "/bin"])
    args = ["hook", "--agent", agent] + (["--event", event_arg] if event_arg else [])
    run = hk.engine(*args, stdin=json.dumps(payload).encode(), env={"PATH": path})
    run.assert_ok()
    answer = json.loads(run.stdout)
    if agent == "gemini":  # the tail call prints the stub
        argv = shlex.split(answer["hookSpecificOutput"]["tailToolCallRequest"]["args"]["command"])
        stub = hk.engine(*argv[argv.index("cache"):], env={"PATH": path}).stdout
    else:
        stub = _stub_of(agent, answer)
    told = re.search(r"To read it: `(.+) cache show ", stub)
    assert told, stub
    if agent == "copilot" and on_path:
        assert told.group(1) == "engine", stub
    else:
        assert told.group(1).startswith(shlex.quote(sys.executable) + " -I "), stub


SESSION_FILES = {"codex": ".codex/sessions/2026/11/29/rollout-2026-11-29T07-00-00-th1.jsonl",
                 "gemini": ".gemini/tmp/p1/chats/session-2026-11-29T07-00-g1.jsonl",
                 "copilot": ".copilot/session-state/c1/events.jsonl"}


@pytest.mark.parametrize("agent", sorted(SESSION_FILES))
def test_gc_keeps_an_output_whose_stub_an_agents_session_holds(hk, agent):
    """Old: gc, prune and the size bound searched Claude Code's transcripts
    only: an hour after a hook handed Codex, Gemini or Copilot CLI a stub,
    `engine cache gc` deleted its output though the session (resumed, or
    simply long) still held the stub, and `engine cache show KEY` said
    absent.  Now every agent's session files are searched."""
    import time

    payload, event_arg, shown = _payload(agent, hk.project, hk.transcript)
    answer = _run_hook(hk, agent, payload, event_arg)
    if agent == "gemini":  # what its tail call printed is what its session keeps
        argv = shlex.split(answer["hookSpecificOutput"]["tailToolCallRequest"]["args"]["command"])
        stub = hk.engine(*argv[argv.index("cache"):]).stdout
    else:
        stub = _stub_of(agent, answer)
    key = _key(stub)
    session = hk.home / SESSION_FILES[agent]
    session.parent.mkdir(parents=True)
    session.write_text(json.dumps({"type": "tool_output", "output": stub}) + "\n")
    meta = hk.cache / "ccm" / "meta" / f"{key}.json"
    aged = json.loads(meta.read_text())
    aged["created"] = aged["last_used"] = time.time() - 7200  # past gc.grace_seconds
    meta.write_text(json.dumps(aged))
    unset = {"CODEX_HOME": None, "COPILOT_HOME": None}
    gc = hk.engine("cache", "gc", env=unset)
    assert gc.returncode == 0 and "deleted 0 " in gc.stdout and "(1 referenced)" in gc.stdout, str(gc)
    assert hk.engine("cache", "show", key, env=unset).stdout == shown
    session.write_text("")  # the session names nothing (and the read above was long ago): the entry goes
    aged = json.loads(meta.read_text())
    aged["created"] = aged["last_used"] = time.time() - 7200
    meta.write_text(json.dumps(aged))
    gc = hk.engine("cache", "gc", env=unset)
    assert gc.returncode == 0 and "deleted 1 " in gc.stdout, str(gc)


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
def test_the_stub_of_a_failing_command_says_the_exit_status_the_model_would_have_read(hk, agent):
    """Copilot and Gemini write a command's exit status at the end of the
    output's text: the stub the model reads instead says that status, not 0."""
    payload, event_arg, _shown = _payload(agent, hk.project, hk.transcript)
    answer = _run_hook(hk, agent, _failing(agent, payload), event_arg)
    stub = _stub_of(agent, answer)
    if agent == "gemini":
        argv = shlex.split(answer["hookSpecificOutput"]["tailToolCallRequest"]["args"]["command"])
        stub = hk.engine(*argv[argv.index("cache"):]).stdout
    assert "\nexit: 3\n" in stub, stub


@pytest.mark.parametrize("agent", ["codex", "gemini", "copilot"])
def test_a_small_shell_output_is_left_as_it_is(hk, agent):
    payload, event_arg, _shown = _payload(agent, hk.project, hk.transcript)
    small = json.loads(json.dumps(payload).replace(BIG.replace("\n", "\\n"), "ok\\n"))
    args = ["hook", "--agent", agent] + (["--event", event_arg] if event_arg else [])
    run = hk.engine(*args, stdin=json.dumps(small).encode())
    run.assert_ok()
    out = json.loads(run.stdout) if run.stdout.strip() else {}
    assert not {"decision", "modifiedResult"} & set(out) and "tailToolCallRequest" not in json.dumps(out), out


# A subagent's call, as each agent marks it (measured: Codex 0.169.0's
# spawn_agent subagent, its hooks with the parent's session_id; Copilot
# 1.0.102's task subagent, its own id as sessionId).
INSIDE_A_SUBAGENT = {"codex": {"agent_id": "01a22097-ad23-77e1-815f-a51694cf8cd3", "agent_type": "default"},
                     "copilot": {"sessionId": "9e8d7c6b-5a49-4382-b716-a5f4e3d2c1b0",
                                 "agentId": "9e8d7c6b-5a49-4382-b716-a5f4e3d2c1b0", "agentType": "general-purpose",
                                 "parentAgentId": "c1"}}


@pytest.mark.parametrize("agent", sorted(INSIDE_A_SUBAGENT))
def test_a_subagents_large_output_is_left_to_it(hk, agent):
    """A subagent reads its output in full, as Claude Code's does (ccm_output):
    the engine knows a subagent's call by the field the agent marks it with."""
    payload, event_arg, _shown = _payload(agent, hk.project, hk.transcript)
    answer = hk.engine("hook", "--agent", agent, *(["--event", event_arg] if event_arg else []),
                       stdin=json.dumps(dict(payload, **INSIDE_A_SUBAGENT[agent])).encode())
    answer.assert_ok()
    out = json.loads(answer.stdout) if answer.stdout.strip() else {}
    assert not {"decision", "modifiedResult"} & set(out) and "CCM_CACHED" not in json.dumps(out), out
    assert _stub_of(agent, _run_hook(hk, agent, payload, event_arg)), "the main agent's same call is kept out"


@pytest.mark.parametrize("mode,rewritten", [("bypassPermissions", True), ("default", False), (None, False)])
def test_codex_runs_a_large_command_through_the_wrapper_only_where_nothing_would_ask(hk, mode, rewritten):
    """Codex cuts an output over ~10 KB before PostToolUse, so a command known
    to be large is rewritten at PreToolUse to run through `engine cache run`,
    and only in a session that asks for nothing: an `allow` anywhere else
    would widen what the user approved."""
    payload = {"hook_event_name": "PreToolUse", "session_id": "th1", "transcript_path": str(hk.transcript),
               "cwd": str(hk.project), "model": "gpt-5.1-codex", "turn_id": "t1", "tool_name": "Bash",
               "tool_input": {"command": "make build"}, "tool_use_id": "call_0001"}
    if mode:
        payload["permission_mode"] = mode
    run = hk.engine("hook", "--agent", "codex", stdin=json.dumps(payload).encode())
    run.assert_ok()
    out = json.loads(run.stdout) if run.stdout.strip() else {}
    specific = out.get("hookSpecificOutput", {})
    if not rewritten:
        assert "updatedInput" not in specific and "permissionDecision" not in specific, out
        return
    assert specific["permissionDecision"] == "allow", out
    argv = shlex.split(specific["updatedInput"]["command"])
    assert argv[argv.index("cache"):argv.index("cache") + 2] == ["cache", "run"] and argv[-2:] == ["--", "make build"]


def _session_events(agent, hk, error):
    """[(payload, event argument)] of one failed shell call as the agent
    reports it after the fact (its payload names no call),
    then the turn's end and the session's end, twice as Gemini CLI sends it
    at an interactive exit; the recorded session of the agent, which holds
    that failure, is where the agent keeps it."""
    from testdata import agent_transcript

    sample = agent_transcript(agent)
    command = "ls /no-such-folder-for-the-sample"
    if agent == "gemini":
        hk.transcript.parent.mkdir(parents=True, exist_ok=True)
        hk.transcript.write_bytes(sample.read_bytes())
        base = {"session_id": "c03b9526-ecbd-49a5-a45f-34eababde849", "transcript_path": str(hk.transcript),
                "cwd": str(hk.project), "timestamp": "2026-11-26T08:56:09Z"}
        return [(dict(base, hook_event_name="AfterTool", tool_name="run_shell_command", tool_input={"command": command},
                      tool_response={"llmContent": error, "returnDisplay": ""}), None),
                (dict(base, hook_event_name="AfterAgent", prompt="go", prompt_response="done",
                      stop_hook_active=False), None)] + [(dict(base, hook_event_name="SessionEnd", reason="exit"), None)] * 2
    session = "d16ca2b3-0e0d-4f10-b1e8-5f975a4065ca"
    events = hk.home / ".copilot" / "session-state" / session / "events.jsonl"
    events.parent.mkdir(parents=True)
    events.write_bytes(sample.read_bytes())
    base = {"sessionId": session, "timestamp": 1795674298969, "cwd": str(hk.project)}
    return [(dict(base, toolName="bash", toolArgs={"command": command, "description": "run the command", "mode": "sync"},
                  toolResult={"textResultForLlm": error, "resultType": "success"}), "postToolUse"),
            (dict(base, transcriptPath=str(events), stopReason="end_turn"), "agentStop")] + \
        [(dict(base, reason="complete"), "sessionEnd")] * 2


@pytest.mark.parametrize("agent", ["gemini", "copilot"])
def test_a_failure_reported_without_a_call_id_is_remembered_once(hk, agent):
    """Gemini CLI's AfterTool and Copilot CLI's postToolUse name no call
    (tests/support/AGENTS-MEASURED.md): the failure they report is recorded
    then, and the scan of the session's transcript at the turn's end and at
    each session end finds the same failure again.  With Gemini CLI run
    interactively (a failing `ls`, then `/quit`), `engine memory list` said
    "(2 times)" for it."""
    from engine.memory.scan import transcript_failures
    from testdata import agent_transcript

    (failed,) = transcript_failures(str(agent_transcript(agent)), 10**6, (), agent)
    for payload, event_arg in _session_events(agent, hk, failed["error"]):
        args = ["hook", "--agent", agent] + (["--event", event_arg] if event_arg else [])
        hk.engine(*args, stdin=json.dumps(payload).encode()).assert_ok()
    listed = hk.engine("memory", "list", "--json")
    assert listed.returncode == 0, str(listed)
    assert [(e["tool"], e["count"]) for e in json.loads(listed.stdout)] == [(failed["tool"], 1)]


def test_a_copilot_subagents_events_belong_to_its_session_and_its_end_is_not_the_turns(hk):
    """Copilot CLI 1.0.102 gives the events inside a task's subagent the
    subagent's id as their sessionId (with agentId, and parentAgentId its
    parent's), ends the subagent with an agentStop of its own, and writes
    the subagent's records into its parent's events.jsonl (measured;
    tests/support/AGENTS-MEASURED.md).  A failing command of the subagent's
    is remembered once: its postToolUse is the session's, and the
    subagent's agentStop is no end of the turn (no scan of the parent's
    file under another session).  No state is kept for the subagent's id."""
    main, sub = "5d7f0c2e-1a3b-4c5d-8e9f-0a1b2c3d4e5f", "9e8d7c6b-5a49-4382-b716-a5f4e3d2c1b0"
    events = hk.home / ".copilot" / "session-state" / main / "events.jsonl"
    events.parent.mkdir(parents=True)
    command, error = "cat nope-1.txt", "cat: nope-1.txt: No such file or directory\n<shellId: 0 completed with exit code 1>"
    lines = [
        {"type": "session.start", "data": {"sessionId": main, "copilotVersion": "1.0.102", "context": {"cwd": str(hk.project)}}},
        {"type": "user.message", "data": {"content": "go"}},
        {"type": "assistant.message", "data": {"toolRequests": [{"toolCallId": "call_0001", "name": "task", "arguments": {
            "name": "probe", "prompt": "Say hi.", "agent_type": "general-purpose", "description": "probe it"}}]}},
        {"type": "subagent.started", "agentId": sub, "data": {"toolCallId": "call_0001"}},
        {"type": "user.message", "agentId": sub, "data": {"content": "Say hi."}},
        {"type": "assistant.message", "agentId": sub, "data": {"toolRequests": [
            {"toolCallId": "call_0002", "name": "bash", "arguments": {"command": command}}]}},
        {"type": "tool.execution_complete", "agentId": sub, "data": {
            "toolCallId": "call_0002", "success": True, "shellExecution": {"exitCode": 1}, "result": {"content": error}}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "call_0001", "success": True,
                                                      "result": {"content": "sub says hi"}}},
    ]
    events.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    inside = {"sessionId": sub, "timestamp": 1795842557024, "cwd": str(hk.project), "agentId": sub,
              "agentType": "general-purpose", "parentAgentId": main}
    base = {"sessionId": main, "timestamp": 1795842557084, "cwd": str(hk.project)}
    session = [(dict(inside, toolName="bash", toolArgs={"command": command, "description": "run", "mode": "sync"},
                     toolResult={"textResultForLlm": error, "resultType": "success"}), "postToolUse"),
               (dict(inside, transcriptPath=str(events), stopReason="end_turn", stop_hook_active=False), "agentStop"),
               (dict(base, transcriptPath=str(events), agentId=sub, agentType="general-purpose",
                     agentName="general-purpose", response="sub says hi", stopReason="end_turn",
                     stop_hook_active=False, parentAgentId=main), "subagentStop"),
               (dict(base, transcriptPath=str(events), stopReason="end_turn", stop_hook_active=False), "agentStop")]
    for payload, event in session:
        hk.engine("hook", "--agent", "copilot", "--event", event, stdin=json.dumps(payload).encode()).assert_ok()
    listed = hk.engine("memory", "list", "--json")
    assert listed.returncode == 0, str(listed)
    assert [(e["tool"], e["input"], e["count"]) for e in json.loads(listed.stdout)] == [("bash", command, 1)]
    kept = sorted(p.stem for p in (hk.state / "sessions").glob("*.json"))
    assert kept and all(sub not in name for name in kept) and any(main in name for name in kept), kept


def test_a_copilot_subagents_subagent_belongs_to_the_session_too(hk):
    """A task inside a task (measured with Copilot CLI 1.0.102): the inner
    subagent's events name the outer subagent as parentAgentId, its
    subagentStart and subagentStop a sessionId of their own.  The engine
    noted at the outer subagent's start which session it belongs to, so the
    inner subagent's events are that session's too: its failing command is
    remembered once, its start gets the rules a subagent lacks, and no state
    is kept under any subagent's id."""
    main, outer, inner, other = ("5d7f0c2e-1a3b-4c5d-8e9f-0a1b2c3d4e5f", "9e8d7c6b-5a49-4382-b716-a5f4e3d2c1b0",
                                 "6fbf306a-a01c-4bd3-85e9-98afcec47671", "d8508a0e-0633-4c7b-b09a-2807af596a57")
    rules = hk.project / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "names.mdc").write_text("---\nalwaysApply: true\n---\nName every branch NESTED_RULE_5c.\n")
    profile = shared_profile(profile_text({"prompt": [{"name": "rules", "sources": [
        {"agent": "rules"}, CURSOR_SOURCE]}]}, name="nested-copilot"))
    hk.compiled(profile)
    command, error = "cat nope-2.txt", "cat: nope-2.txt: No such file or directory\n<shellId: 0 completed with exit code 1>"
    where = {"timestamp": 1795842557024, "cwd": str(hk.project)}
    starts = {"agentType": "general-purpose", "agentName": "general-purpose"}
    session = [
        (dict(where, sessionId=main, agentId=outer, parentAgentId=main, **starts), "subagentStart"),
        (dict(where, sessionId=other, agentId=inner, parentAgentId=outer, **starts), "subagentStart"),
        (dict(where, sessionId=inner, agentId=inner, parentAgentId=outer, toolName="bash",
              toolArgs={"command": command}, toolResult={"textResultForLlm": error, "resultType": "success"}),
         "postToolUse"),
        (dict(where, sessionId=inner, agentId=inner, parentAgentId=outer, stopReason="end_turn"), "agentStop"),
        (dict(where, sessionId=other, agentId=inner, parentAgentId=outer, stopReason="end_turn", **starts),
         "subagentStop"),
        (dict(where, sessionId=outer, agentId=outer, parentAgentId=main, stopReason="end_turn"), "agentStop"),
        (dict(where, sessionId=main, agentId=outer, parentAgentId=main, stopReason="end_turn", **starts),
         "subagentStop")]
    said = []
    for payload, event in session:
        run = hk.engine("hook", "--agent", "copilot", "--event", event, "--profile", str(profile),
                        stdin=json.dumps(payload).encode()).assert_ok()
        said.append(run.stdout)
    assert "NESTED_RULE_5c" in said[0] and "NESTED_RULE_5c" in said[1], said[:2]
    listed = hk.engine("memory", "list", "--json")
    assert [(e["input"], e["count"]) for e in json.loads(listed.stdout)] == [(command, 1)], listed.stdout
    kept = sorted(p.name for p in (hk.state / "sessions").glob("*.json"))
    assert kept and all(main in name for name in kept), kept


# What Copilot CLI 1.0.102 gives a Claude Code hook it runs (a project's
# .claude/settings.json hooks, a Claude Code plugin's): Claude Code's words,
# its own session id, and COPILOT_CLI in the hook's environment (measured:
# tests/support/AGENTS-MEASURED.md, "Distribution").
def _copilot_in_claude_words(project):
    return {"hook_event_name": "SessionStart", "session_id": "cc1", "timestamp": "2026-11-28T07:55:04.670Z",
            "cwd": str(project), "source": "new", "initial_prompt": "run it"}


@pytest.mark.parametrize("variables,runner", [
    ({"COPILOT_CLI": "1"}, "copilot"),  # Copilot runs it: not Claude Code's event
    ({"GEMINI_SESSION_ID": "g1"}, "gemini"),  # Gemini runs it (copied by its `hooks migrate --from-claude`)
    ({"COPILOT_CLI": "1", "CLAUDECODE": "1"}, None),  # Claude Code's own variable: its event (started from Copilot's shell)
    ({}, None),  # nothing tells: as the command says
])
def test_a_claude_code_hook_another_agent_runs_is_left_to_that_agents_own(hk, variables, runner):
    """Copilot runs the engine's Claude Code hooks of a project too, in Claude
    Code's words: the engine would take its session for Claude Code's (its
    records, its state, its transcript) and, with Copilot's own hooks
    installed too, handle every event twice.  A hook named for one agent
    whose environment carries another's variable (`hook_env`) and not its
    own does nothing, and the log says why."""
    env = {"CLAUDECODE": None, "COPILOT_CLI": None, "GEMINI_SESSION_ID": None, **variables}
    stays_out = runner is not None
    run = hk.engine("hook", "--agent", "claude-code", stdin=json.dumps(_copilot_in_claude_words(hk.project)).encode(),
                    env=env)
    run.assert_ok()
    logged = "\n".join(hk.log_lines())
    assert ("runs this claude-code hook; nothing to do" in logged) is stays_out, logged
    assert not stays_out or f"{runner} runs this claude-code hook" in logged, logged
    session = list((hk.state / "sessions").glob("cc1-*"))  # what handling it keeps for its session
    assert (run.stdout == "" and not session) if stays_out else bool(session), (run.stdout, session)


def test_a_project_naming_an_agents_hook_variable_cannot_make_the_engine_stay_out(hk):
    """Which agent runs a hook is read from the variable each agent sets for
    its hooks; where a project's settings `env` names one (Claude Code puts
    it into the hooks' environment), it tells nothing, and the hook does its
    work."""
    (hk.project / ".claude").mkdir(exist_ok=True)
    (hk.project / ".claude" / "settings.json").write_text(json.dumps({"env": {"COPILOT_CLI": "1"}}))
    env = {"CLAUDECODE": None, "COPILOT_CLI": "1", "GEMINI_SESSION_ID": None}
    run = hk.engine("hook", "--agent", "claude-code", stdin=json.dumps(_copilot_in_claude_words(hk.project)).encode(),
                    env=env)
    run.assert_ok()
    logged = "\n".join(hk.log_lines())
    assert "runs this claude-code hook" not in logged, logged
    assert list((hk.state / "sessions").glob("cc1-*")), "the event was handled"


def test_a_fifo_in_place_of_a_subagents_note_is_not_waited_on(hk):
    """The note of the session a subagent belongs to (engine/hooks/lineage.py)
    was read with a plain open: a FIFO at its path held every event of that
    subagent's own subagents until the hook's deadline."""
    import os
    import time

    from engine.base.digest import safe_key

    outer = "9e8d7c6b-5a49-4382-b716-a5f4e3d2c1b0"
    (hk.state / "sessions").mkdir(parents=True)
    os.mkfifo(hk.state / "sessions" / f"{safe_key(outer)}.session")
    payload = {"timestamp": 1795842557024, "cwd": str(hk.project), "sessionId": "6fbf306a", "agentId": "6fbf306a",
               "parentAgentId": outer, "toolName": "bash", "toolArgs": {"command": "ls"}}
    started = time.monotonic()
    hk.engine("hook", "--agent", "copilot", "--event", "preToolUse", stdin=json.dumps(payload).encode(),
              timeout=60).assert_ok()
    assert time.monotonic() - started < 8, "the hook waited for its deadline"


def _copilot_usage_at(hk, session, tokens):
    """Copilot's events.jsonl of `session` where it keeps it, its last
    call's usage `tokens` of a 128,000-token window."""
    events = hk.home / ".copilot" / "session-state" / session / "events.jsonl"
    events.parent.mkdir(parents=True)
    usage = {"inputTokens": tokens, "outputTokens": 10, "cacheReadTokens": 0, "cacheWriteTokens": 0,
             "model": "gpt-5", "apiCallId": "r1", "maxPromptTokens": 128000}
    events.write_text(json.dumps({"type": "session.usage_record", "data": {"usage": usage}}) + "\n")


@pytest.mark.parametrize("session, planted", [("...", True), (".hidden", True), ("a..b", True), ("y" * 300, False),
                                              ("a\u0000b", False), ("5d7f0c2e-1a3b-4c5d-8e9f-0a1b2c3d4e5f", True)])
def test_a_copilot_session_id_becomes_a_folder_name_only_in_the_shape_of_its_ids(hk, session, planted):
    """Copilot's payload names the transcript at agentStop only; for its
    other events the engine builds the path from the payload's sessionId,
    which was used as a folder name unless it held a '/' or was '.' or
    '..': '...', '.hidden', 300 characters or a NUL were looked up as
    such.  Now only an id of the shape its ids have
    (transcript.session_shape in its YAML) is; with another, what reads
    the transcript (here the context monitor, past 70%) goes without it,
    and the hook log says so once per session."""
    from engine.base.digest import safe_key

    if planted:
        _copilot_usage_at(hk, session, 100_000)
    payload = {"sessionId": session, "timestamp": 1795842557084, "cwd": str(hk.project), "toolName": "bash",
               "toolArgs": {"command": "ls"}, "toolResult": {"textResultForLlm": "a b", "resultType": "success"}}
    for _ in range(3):
        _stdin = json.dumps(payload).encode()
        hk.engine("hook", "--agent", "copilot", "--event", "postToolUse", stdin=_stdin).assert_ok()
    state = hk.state / "sessions" / f"{safe_key(session)}.json"
    held = json.loads(state.read_text()) if state.exists() else {}  # no marks, no file
    read = any(k.startswith(("fill_", "warned:")) for k in held)
    said = [line for line in hk.log_lines() if "is not of the shape" in line]
    if session.startswith("5d7f"):  # a session id of its shape: its transcript is read, nothing said
        assert read and said == [], hk.log_lines()
        return
    assert not read, held
    assert len(said) == 1 and "transcript.session_shape" in said[0], hk.log_lines()


def test_a_session_id_is_checked_against_its_shape_without_a_regular_expression(monkeypatch):
    """Copilot's every event checks its sessionId's shape before the id
    names a folder.  Written as a regular expression, that check imported
    `re` into every Copilot hook (about 7 ms of a 20 ms hook: 24.7-27.5 ms
    against 19.8-20.7 ms for the other agents, bench/agent_hooks.py); the
    shape is character sets now, checked with `re` unimportable here."""
    from engine.agents.table import get

    copilot = get("copilot")
    monkeypatch.setitem(sys.modules, "re", None)
    uuid = "5d7f0c2e-1a3b-4c5d-8e9f-0a1b2c3d4e5f"
    assert copilot.session_component(uuid) == uuid and copilot.session_component("a1b2c3d4") == "a1b2c3d4"
    for unsafe in ("", ".", "..", "a..b", "a/b", "-a", "a\0b", "a b", "é1", "x" * 129):
        assert copilot.session_component(unsafe) is None, unsafe
