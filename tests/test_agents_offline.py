"""The other coding agents, real and offline: Codex CLI, Gemini CLI and
Copilot CLI each run one scripted shell call against a local stand-in of its
model API, inside a loopback-only network namespace (tests/support/offline.py),
with a logging hook (tests/support/loghook.py) installed the agent's own way.
Each smoke test checks the hook fired for the events the engine needs, with
the payload fields it will read, and that the hook's added context reached
the model (in the request bodies the stand-in recorded).

The first tests here check the stand-ins and the name server themselves, with
no agent. The `test_fact_*` tests, run only with ENGINE_TEST_AGENT_FACTS=1,
each check one fact written down in tests/support/AGENTS-MEASURED.md.

Each agent test starts its own stand-in, namespace and HOME, so they run in
parallel under xdist; a smoke test takes 1.5-4 s on a quiet machine.
"""

import json
import os
import socket
import subprocess
import urllib.request
from pathlib import Path

import pytest

from support import gemini_api, responses_api
from support.codex import VERSION as CODEX_VERSION
from support.codex import codex_command, codex_hooks, list_hooks, rollout_lines, run_codex, thread_id, trust_hooks
from support.copilot import copilot_command, copilot_hooks, events_of, run_copilot, session_dirs
from support.gemini import gemini_command, gemini_hooks, run_gemini, session_files
from support.hooks import LogHook, context_answer
from support.nodns import NoDNS
from support.responses_api import ResponsesAPI
from support.standin import call, say, shell

# ---------------------------------------------------------------- the stand-ins alone


def _post(api, path, body):
    req = urllib.request.Request(api.url + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read().decode()


def _sse_data(text):
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


CODEX_TOOLS = [{"type": "function", "name": "exec_command", "parameters": {}}]


def _user(text):
    return {"role": "user", "content": [{"type": "input_text", "text": text}]}


def test_the_responses_stand_in_counts_requests_served_not_tool_calls_and_answers_a_summary_aside():
    script = [shell("ls -la"), shell("wc -l notes.txt"), say("Two looks.")]
    with responses_api.ResponsesAPI(script) as api:
        first = _sse_data(_post(api, "/v1/responses", {"input": [], "tools": CODEX_TOOLS}))
        # a compaction request (Codex's summary prompt) between turns does not consume the script
        summary = _sse_data(_post(api, "/v1/responses", {"tools": CODEX_TOOLS, "input": [_user(
            "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary")]}))
        # after a compaction the request holds no earlier tool call, only the summary quoted (as
        # Copilot quotes it): a main turn, and still the second
        second = _sse_data(_post(api, "/v1/responses", {"tools": CODEX_TOOLS, "input": [_user(
            "Here is a summary of the prior context:\n<summary>\nwe listed\n</summary>")]}))
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


def _pane_start(tmp_path, command):
    """The interactive driver's tmux, and a start that runs `command` in its pane."""
    from support.interactive_compress import TMUX_CONF

    sock, conf = str(tmp_path / "tmux.sock"), tmp_path / "tmux.conf"
    conf.write_text(TMUX_CONF)

    def tmux(*args):
        return subprocess.run(["tmux", "-S", sock, *args], capture_output=True, text=True, timeout=20)
    return tmux, lambda: subprocess.run(["tmux", "-S", sock, "-f", str(conf), "new-session", "-d", "-s", "x",
                                         command], check=True, timeout=20)


def test_the_interactive_driver_fails_where_gemini_answers_once_and_ends_showing_what_it_printed(tmp_path):
    """tests/support/interactive_compress.py: a Gemini that runs headless
    (as 0.61.0 does where CI=true, even in a terminal) prints an answer and
    ends; the driver says so at once, with its exit status and screen,
    rather than waiting out its limit for an input box (CI at 68b20b1: an
    empty pane after 120 s)."""
    import shutil

    from support import interactive_compress as ic
    from support.offline import missing

    if not shutil.which("tmux"):
        missing("no tmux: .ci/run installs it")
    tmux, start = _pane_start(tmp_path, "printf 'YOLO mode is enabled.\\none\\n'; sleep 1")
    try:
        with pytest.raises(AssertionError) as err:
            ic.start(tmux, start)
        shown = str(err.value)
        assert shown.startswith("Gemini ended while waiting for"), shown
        # its last line (tmux at times drops what a pane prints in its first moments)
        assert "one" in shown.partition("\nscreen:\n")[2].splitlines(), shown
    finally:
        tmux("kill-server")


def test_no_agent_inherits_a_ci_marker_from_the_tests(tmp_path, monkeypatch):
    """CI=true turns Gemini CLI 0.61.0 headless in a terminal: an agent run
    by the tests gets the same environment under any CI as here."""
    from support.agent import agent_env
    from support.offline import base_env

    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    env = base_env(tmp_path)
    assert "CI" not in env and "GITHUB_ACTIONS" not in env
    assert env["HOME"] == str(tmp_path)
    claude = agent_env(tmp_path)  # Claude Code's
    assert "CI" not in claude and claude["HOME"] == str(tmp_path)


# ---------------------------------------------------------------- the agents


# A command whose output is not in its text: the output in a request proves it ran.
# (No $(...): Gemini CLI refuses a command that holds a substitution.)
CMD = "printf '%%s-%%d\\n' %s 42"


def _world(tmp_path):
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir(parents=True)
    cwd.mkdir()
    return home, cwd


# A project's own variables, in every file an agent might load them from
# (its settings `env` where it has one, `.env` files): which of them reach
# the hooks' environment is an agent fact (project_environment in its YAML,
# engine/hooks/projectenv.py).  Named with each agent's prefix, which the
# stand-in hook records.
PROJECT_VARIABLE = "{prefix}_PROBE_FROM_PROJECT"


def _project_variables(cwd, prefix):
    name = PROJECT_VARIABLE.format(prefix=prefix)
    for folder in ("", ".codex", ".gemini", ".github", ".copilot"):
        (cwd / folder).mkdir(exist_ok=True)
        (cwd / folder / ".env").write_text(f"{name}=1\n", encoding="utf-8")
    (cwd / ".codex" / "config.toml").write_text(f'[shell_environment_policy]\nset = {{ {name} = "1" }}\n',
                                                encoding="utf-8")
    return name


def _reached(hook, name):
    """Whether the project's variable was in the environment of every hook call (True), of none (False)."""
    seen = {name in call["env"] for call in hook.calls()}
    assert len(seen) == 1, hook.calls()
    return seen.pop()


def _fields(payload, names):
    missing = [n for n in names if n not in payload]
    assert not missing, f"payload without {missing}: {payload}"


@pytest.mark.slow
def test_codex_runs_a_shell_call_offline_and_its_hooks_fire_and_reach_the_model(tmp_path):
    home, cwd = _world(tmp_path)
    probe = _project_variables(cwd, "CODEX")
    hook = LogHook(tmp_path, {"*": context_answer()})
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
    run = run_codex("count for me", home, cwd, [shell(CMD % "codex"), say("It is 42.")],
                    hooks=codex_hooks(hook, events))
    assert run.returncode == 0, str(run)
    assert _reached(hook, probe) is False  # none of the project's variables reaches Codex's hooks
    assert hook.events() == events, str(run)
    common = ["session_id", "transcript_path", "cwd", "hook_event_name", "model"]
    for seen in hook.calls():
        _fields(seen["stdin"], common)
        assert seen["stdin"]["hook_event_name"] == seen["event"]
        assert seen["stdin"]["cwd"] == str(cwd)
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
    probe = _project_variables(cwd, "GEMINI")
    hook = LogHook(tmp_path, {"*": context_answer()})
    events = ["SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"]
    run = run_gemini("count for me", home, cwd, [shell(CMD % "gemini"), say("It is 42.")],
                     hooks=gemini_hooks(hook, events))
    assert run.returncode == 0 and run.extra["output"]["response"] == "It is 42.", str(run)
    assert _reached(hook, probe) is True  # its trusted folder's .env reaches every hook (gemini.yaml)
    assert hook.events() == events, str(run)
    for seen in hook.calls():
        _fields(seen["stdin"], ["session_id", "transcript_path", "cwd", "hook_event_name", "timestamp"])
        assert seen["stdin"]["hook_event_name"] == seen["event"]
        assert seen["env"]["GEMINI_PROJECT_DIR"] == str(cwd)
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


def _started_together(seen):
    """Copilot 1.0.102 starts userPromptSubmitted about 0.1 s after
    sessionStart without waiting for it to end: which of the two ends (and
    logs) first depends on the machine; both end before the model's first
    request (asserted below).  Their order is normalised, the rest kept."""
    first = sorted(seen[:2], key=["sessionStart", "userPromptSubmitted"].index) if set(seen[:2]) == {
        "sessionStart", "userPromptSubmitted"} else seen[:2]
    return first + seen[2:]


@pytest.mark.slow
def test_copilot_runs_a_shell_call_offline_and_its_hooks_fire_and_reach_the_model(tmp_path):
    home, cwd = _world(tmp_path)
    probe = _project_variables(cwd, "COPILOT")
    hook = LogHook(tmp_path, {"*": {"additionalContext": "CTX_{event}_MARK"}})
    events = ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop", "sessionEnd"]
    run = run_copilot("count for me", home, cwd, [shell(CMD % "copilot"), say("It is 42.")],
                      hooks=copilot_hooks(hook, events))
    assert run.returncode == 0, str(run)
    assert _reached(hook, probe) is False  # none of the project's variables reaches Copilot's hooks
    assert _started_together(hook.events()) == events, str(run)
    for seen in hook.calls():
        _fields(seen["stdin"], ["sessionId", "timestamp", "cwd"])
        assert seen["stdin"]["cwd"] == str(cwd)
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
    assert [r["data"]["hookType"] for r in records if r["type"] == "hook.start"] == events
    assert _started_together([r["data"]["hookType"] for r in records if r["type"] == "hook.end"]) == events
    first_call = next(i for i, r in enumerate(records) if r["type"] == "session.usage_record")
    assert {r["data"]["hookType"] for r in records[:first_call] if r["type"] == "hook.end"} == set(events[:2])
    (complete,) = [r for r in records if r["type"] == "tool.execution_complete"]
    assert complete["data"]["result"]["content"] == output


# ---------------------------------------------------------------- measured facts
#
# Each test below runs the agent the way tests/support/AGENTS-MEASURED.md says a
# fact was measured, and asserts the fact: rerun them on a new agent version
# (ENGINE_TEST_AGENT_FACTS=1 python -m pytest tests/test_agents_offline.py -n 2).
# They take 2-10 s each and are left out of the ordinary suite.

facts = pytest.mark.skipif(not os.environ.get("ENGINE_TEST_AGENT_FACTS"),
                           reason="a measured fact about an agent: set ENGINE_TEST_AGENT_FACTS=1 to check it")
SEQ_349K = "seq 1 60000"  # 348,894 bytes of output


def _files(root, table):
    """Write `table` {path relative to root: marker}: each file asks the model to say its marker."""
    for rel, mark in table.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Rules\nAlways say {mark}.\n", encoding="utf-8")


def _git(folder):
    subprocess.run(["git", "init", "-q", str(folder)], check=True)


def _seen(text, marks):
    """The markers of _files whose sentence is in `text` (a marker may begin another's name)."""
    return sorted(m for m in marks if f"say {m}." in text)


# -------- Codex CLI 0.169.0 (and the pinned one since: support/codex.py VERSION)

CODEX_FILES = {".codex-home/AGENTS.md": "M_USER", "AGENTS.md": "M_ROOT", "CLAUDE.md": "M_CLAUDE",
               "GEMINI.md": "M_GEMINI", "sub/AGENTS.md": "M_SUB", "sub/AGENTS.override.md": "M_SUB_OVERRIDE",
               "sub/deep/AGENTS.md": "M_DEEP", "other/AGENTS.md": "M_OTHER"}


def _codex_world(tmp_path, git=True):
    home, cwd = _world(tmp_path)
    _files(cwd, {k: v for k, v in CODEX_FILES.items() if not k.startswith(".codex-home")})
    _files(home / ".codex", {"AGENTS.md": "M_USER"})
    (cwd / "other" / "code.py").write_text("print(2)\n", encoding="utf-8")
    if git:
        _git(cwd)
    return home, cwd


@facts
@pytest.mark.slow
def test_fact_codex_loads_agents_md_from_the_git_root_down_to_the_working_folder_and_never_lazily(tmp_path):
    home, cwd = _codex_world(tmp_path)
    marks = set(CODEX_FILES.values())
    run = run_codex("look", home, cwd / "sub", [shell("cat ../other/code.py; cd deep && pwd"), say("ok")])
    first, after = run.requests
    # ~/.codex/AGENTS.md, then each folder from the git root down to the working folder, where
    # AGENTS.override.md replaces AGENTS.md; one user message "# AGENTS.md instructions for CWD"
    assert _seen(responses_api.request_text(first), marks) == ["M_ROOT", "M_SUB_OVERRIDE", "M_USER"]
    (holder,) = [t for role, t in responses_api.input_texts(first) if "M_ROOT" in t]
    assert holder.startswith(f"# AGENTS.md instructions for {cwd / 'sub'}") and "--- project-doc ---" in holder
    # a folder below or beside the working folder: not after the shell reads or enters it
    assert _seen(responses_api.request_text(after), marks) == ["M_ROOT", "M_SUB_OVERRIDE", "M_USER"]
    # outside a git repository only the working folder's own file
    home2, cwd2 = _codex_world(tmp_path / "nogit", git=False)
    run = run_codex("look", home2, cwd2 / "sub", [say("ok")])
    assert _seen(responses_api.request_text(run.requests[0]), marks) == ["M_SUB_OVERRIDE", "M_USER"]


def _codex_first_request(tmp_path, name, files, config=""):
    """The text of the first request of `codex exec` in a git project laid
    out by `files` ({relative path: text}; `~/` for the user's home)."""
    home, project = tmp_path / name / "home", tmp_path / name / "project"
    (home / ".codex").mkdir(parents=True)
    (project / ".git").mkdir(parents=True)
    for rel, text in files.items():
        path = home / rel[2:] if rel.startswith("~/") else project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    run = run_codex("look", home, project, [say("ok")], config=config)
    assert run.returncode == 0, str(run)
    return responses_api.request_text(run.requests[0])


@facts
@pytest.mark.slow
def test_fact_codex_override_fallback_and_size_of_its_instruction_files(tmp_path):
    """Codex 0.169.0 (pipelines/agents/codex.yaml, `instructions`): its own
    folder's override replaces AGENTS.md only when it holds text; a project
    folder's as soon as it exists, fallbacks included; fallback names only
    in a project folder without AGENTS.md; the project's files cut at
    project_doc_max_bytes (32 KiB) in all, the user's file not counted."""
    seen = lambda text, marks: sorted(m for m in marks if m in text)
    text = _codex_first_request(tmp_path, "user", {"~/.codex/AGENTS.md": "U_PLAIN\n",
                                                   "~/.codex/AGENTS.override.md": "  \n"})
    assert seen(text, ["U_PLAIN"]) == ["U_PLAIN"], "an override of blanks leaves the user's AGENTS.md read"
    fallback = 'project_doc_fallback_filenames = ["CLAUDE.md", "TEAM.md"]'
    text = _codex_first_request(tmp_path, "fb", {"AGENTS.md": "P_AGENTS\n", "CLAUDE.md": "P_CLAUDE\n",
                                                 "~/.codex/CLAUDE.md": "U_CLAUDE\n", "sub/TEAM.md": "S_TEAM\n"},
                                config=fallback)
    assert seen(text, ["P_AGENTS", "P_CLAUDE", "U_CLAUDE"]) == ["P_AGENTS"]
    text = _codex_first_request(tmp_path, "blank", {"AGENTS.override.md": "", "CLAUDE.md": "P_CLAUDE\n"},
                                config=fallback)
    assert "P_CLAUDE" not in text, "a project folder's override, even empty, takes the folder's place"
    text = _codex_first_request(tmp_path, "team", {"TEAM.md": "P_TEAM\n"}, config=fallback)
    assert "P_TEAM" in text, "the first fallback name that is there"
    big = "x" * 20000 + "\n"
    text = _codex_first_request(tmp_path, "cap", {"~/.codex/AGENTS.md": "U_HEAD\n" + big + "U_TAIL\n",
                                                  "AGENTS.md": "R_HEAD\n" + big * 2 + "R_TAIL\n"})
    assert seen(text, ["R_HEAD", "R_TAIL", "U_TAIL"]) == ["R_HEAD", "U_TAIL"], "cut at 32 KiB; the user's not counted"
    text = _codex_first_request(tmp_path, "raised", {"AGENTS.md": "R_HEAD\n" + big * 2 + "R_TAIL\n"},
                                config="project_doc_max_bytes = 65536")
    assert "R_TAIL" in text, "config.toml raises the figure"


@facts
@pytest.mark.slow
def test_fact_codex_compaction_brings_back_agents_md_and_sessionstart_context_only(tmp_path):
    home, cwd = _codex_world(tmp_path)
    hook = LogHook(tmp_path, {"*": context_answer()})
    events = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "PostCompact", "Stop"]
    served = []

    def tokens(req):  # the context the model reports: over the limit from the second answer on
        served.append(req)
        return 1000 if len(served) < 2 else 1600
    api = ResponsesAPI([shell("echo one"), shell("echo two"), say("done")], tokens=tokens)
    run = run_codex("go", home, cwd / "sub", None, hooks=codex_hooks(hook, events), api=api,
                    config="model_auto_compact_token_limit = 1500")
    assert run.returncode == 0, str(run)
    assert hook.events()[:9] == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreToolUse",
                                 "PostToolUse", "PreCompact", "PostCompact", "SessionStart"]
    assert [p["trigger"] for p in hook.payloads("PreCompact")][0] == "auto"
    assert [p["source"] for p in hook.payloads("SessionStart")][:2] == ["startup", "compact"]
    kinds = [r.kind for r in run.api.log]
    assert kinds[:4] == ["main", "main", "summary", "main"], kinds
    summary, after = run.api.log[2].body, run.api.log[3].body
    assert responses_api.last_user_text(summary).startswith("You are performing a CONTEXT CHECKPOINT COMPACTION")
    text = responses_api.request_text(after)
    assert _seen(text, set(CODEX_FILES.values())) == ["M_ROOT", "M_SUB_OVERRIDE", "M_USER"]  # reloaded by the agent
    # SessionStart(compact) answered again; the compaction took SessionStart(startup)'s answer (one copy, not two)
    assert text.count("CTX_SessionStart_MARK") == 1
    assert "CTX_UserPromptSubmit_MARK" not in text and "CTX_PostToolUse_MARK" not in text  # gone with the turn
    # its PreCompact answer is ignored: no compaction instructions (docs/agents.md)
    assert not any("CTX_PreCompact_MARK" in responses_api.request_text(r.body) for r in run.api.log)
    assert api.summary in text and "go" in [t for _, t in responses_api.input_texts(after)]  # summary, user prompt kept
    lines = rollout_lines(run.extra["rollout"])
    compacted = [line for line in lines if line["type"] == "compacted"]
    assert compacted and api.summary in compacted[0]["payload"]["message"]
    assert "replacement_history" in compacted[0]["payload"]
    counts = [line["payload"]["info"] for line in lines if line["payload"].get("type") == "token_count"]
    assert counts[0]["model_context_window"] == 258400  # the fallback window of a model it has no metadata for
    assert counts[0]["last_token_usage"]["input_tokens"] == 1000 and counts[1]["last_token_usage"]["input_tokens"] == 1600
    assert lines[0]["type"] == "session_meta" and lines[0]["payload"]["cli_version"] == CODEX_VERSION


@facts
@pytest.mark.slow
def test_fact_codex_answer_shapes_block_reason_replaces_updated_output_is_discarded_updated_input_rewrites(tmp_path):
    """And PreToolUse deny stops the call; ask is not taken.  A systemMessage
    beside them is shown to no one by `codex exec` (neither its output nor
    its error stream)."""
    cmd = "printf 'orig-%d\\n' 7"

    def run_with(name, answers):
        home, cwd = _world(tmp_path / name)
        hook = LogHook(tmp_path / name, answers)
        run = run_codex("go", home, cwd, [shell(cmd), say("ok")], hooks=codex_hooks(hook, list(answers)))
        assert run.returncode == 0, str(run)
        after = run.requests[1]
        run_with.shown = run.stdout + run.stderr
        return responses_api.tool_outputs(after)[0], [t for r, t in responses_api.input_texts(after) if r == "developer"]
    out, dev = run_with("block", {"PostToolUse": {"decision": "block", "reason": "REPLACED_7f", "systemMessage": "SYS_7f",
                                                  "hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                                         "additionalContext": "CTX_POST"}}})
    assert out == "REPLACED_7f" and "CTX_POST" in dev
    assert "SYS_7f" not in run_with.shown and "SYS_7f" not in json.dumps(dev)  # the user's, and exec shows none
    out, dev = run_with("updated", {"PostToolUse": {"hookSpecificOutput": {
        "hookEventName": "PostToolUse", "additionalContext": "CTX_POST", "updatedToolOutput": "UPDATED"}}})
    assert out.endswith("Output:\norig-7\n") and "CTX_POST" not in dev  # the whole answer ignored
    out, dev = run_with("rewrite", {"PreToolUse": {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow", "additionalContext": "CTX_PRE",
        "updatedInput": {"command": "printf 'rewritten-%d' 9"}}}})
    assert out.endswith("Output:\nrewritten-9") and "CTX_PRE" in dev
    out, _ = run_with("deny", {"PreToolUse": {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "DENIED_7f"}}})
    assert out == f"Command blocked by PreToolUse hook: DENIED_7f. Command: {cmd}"
    out, _ = run_with("ask", {"PreToolUse": {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "ask", "permissionDecisionReason": "ASKED_7f"}}})
    assert out.endswith("Output:\norig-7\n"), out  # not taken: the call runs as it was (decisions of codex.yaml)


@facts
@pytest.mark.slow
def test_fact_codex_cuts_a_349_kb_shell_output_to_its_head_and_tail_and_keeps_no_copy(tmp_path):
    home, cwd = _world(tmp_path)
    run = run_codex("go", home, cwd, [shell(SEQ_349K), say("ok")])
    (out,) = responses_api.tool_outputs(run.requests[1])
    assert 9000 < len(out) < 12000, len(out)
    assert "Original token count: 87224" in out and "Total output lines: 60000" in out
    assert "\n1\n2\n3\n" in out and "59999\n60000" in out and "\n30000\n" not in out
    assert "…338894 chars truncated…" in out
    stored = [line["payload"]["output"] for line in rollout_lines(run.extra["rollout"])
              if line["payload"].get("type") == "function_call_output"]
    assert stored == [out]  # the rollout keeps what the model read, not the output


@facts
@pytest.mark.slow
def test_fact_codex_hook_trust_is_a_hash_per_hook_in_config_toml(tmp_path):
    home, cwd = _world(tmp_path)
    hook = LogHook(tmp_path, {"*": context_answer()})
    hooks = codex_hooks(hook, ["SessionStart", "PostToolUse"])
    run = run_codex("go", home, cwd, [shell("echo x"), say("ok")], hooks=hooks, bypass_hook_trust=False)
    assert run.returncode == 0 and hook.events() == []  # untrusted: skipped, nothing said
    assert "hook" not in run.stdout.lower()
    listed = trust_hooks(home, cwd)
    assert sorted(h["key"] for h in listed) == [f"{home}/.codex/hooks.json:post_tool_use:0:0",
                                                 f"{home}/.codex/hooks.json:session_start:0:0"]
    assert all(h["trustStatus"] == "untrusted" and h["currentHash"].startswith("sha256:") for h in listed)
    run = run_codex("go", home, cwd, [shell("echo x"), say("ok")], hooks=hooks, bypass_hook_trust=False)
    assert hook.events() == ["SessionStart", "PostToolUse"], str(run)
    assert {h["trustStatus"] for h in list_hooks(home, cwd)} == {"trusted"}
    # a changed command is a new hash: untrusted again
    hooks["hooks"]["SessionStart"][0]["hooks"][0]["command"] += " "
    (home / ".codex" / "hooks.json").write_text(json.dumps(hooks), encoding="utf-8")
    assert {h["key"].rsplit(":", 3)[1]: h["trustStatus"] for h in list_hooks(home, cwd)} == {
        "session_start": "modified", "post_tool_use": "trusted"}


@facts
@pytest.mark.slow
def test_fact_codex_installs_a_claude_code_plugin_marketplace_and_runs_its_hooks(tmp_path):
    home, cwd = _world(tmp_path)
    market = tmp_path / "market"
    hook = LogHook(tmp_path / "h", {"*": context_answer("PLUGIN_{event}")})
    (market / ".claude-plugin").mkdir(parents=True)
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(
        {"name": "m", "owner": {"name": "t"}, "plugins": [{"name": "p", "source": "./plugin", "description": "t"}]}))
    plugin = market / "plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "p", "version": "0.0.1"}))
    (plugin / "hooks").mkdir()
    log = hook.command("X").rsplit(" ", 1)[0]
    (plugin / "log.sh").write_text(f'#!/bin/sh\necho "$PLUGIN_ROOT|$CLAUDE_PLUGIN_ROOT|$PLUGIN_DATA" > {tmp_path}/env\n'
                                   f'exec {log} "$1"\n')
    (plugin / "log.sh").chmod(0o755)
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {ev: [{"hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/log.sh " + ev}]}] for ev in ("SessionStart", "PostToolUse")}}))
    assert codex_command(["plugin", "marketplace", "add", str(market)], home, cwd).returncode == 0
    added = codex_command(["plugin", "add", "p@m"], home, cwd)
    assert added.returncode == 0, str(added)
    root = home / ".codex" / "plugins" / "cache" / "m" / "p" / "0.0.1"
    assert (root / "hooks" / "hooks.json").is_file()
    listed = list_hooks(home, cwd)
    assert {h["key"] for h in listed} == {"p@m:hooks/hooks.json:session_start:0:0", "p@m:hooks/hooks.json:post_tool_use:0:0"}
    assert {h["source"] for h in listed} == {"plugin"} and all(h["currentHash"].count("sha256:") == 2 for h in listed)
    run = run_codex("go", home, cwd, [shell("echo x"), say("ok")])
    assert hook.events() == ["SessionStart", "PostToolUse"], str(run)
    assert "PLUGIN_PostToolUse" in responses_api.request_text(run.requests[1])
    data = home / ".codex" / "plugins" / "data" / "p-m"
    assert (tmp_path / "env").read_text().strip() == f"{root}|{root}|{data}"


# What each agent's resumed requests hold of what hooks added before the resume
# (its YAML's transcript.resumed): the first run's additions, then a second
# run on the same session whose hooks add nothing.
RESUME_MARKS = ("CTX_START_1", "CTX_PROMPT_1", "CTX_PRE_1", "CTX_AFTER_1", "OUT_7")
RESUME_SCRIPT = [shell("echo a"), shell("printf 'OUT_%s' 7"), say("one")]


def _resume_counts(body):
    text = responses_api.request_text(body)
    return [text.count(m) for m in RESUME_MARKS]


@facts
@pytest.mark.slow
def test_fact_codex_resumed_keeps_what_hooks_added_once(tmp_path):
    home, cwd = _world(tmp_path)
    answers = {"SessionStart": context_answer("CTX_START_1"), "UserPromptSubmit": context_answer("CTX_PROMPT_1"),
               "PostToolUse": context_answer("CTX_AFTER_1")}
    first = run_codex("go", home, cwd, RESUME_SCRIPT, hooks=codex_hooks(LogHook(tmp_path / "one", answers), list(answers)))
    assert [_resume_counts(r) for r in first.requests] == [[1, 1, 0, 0, 0], [1, 1, 0, 1, 0], [1, 1, 0, 2, 1]]
    hook = LogHook(tmp_path / "two")
    run = run_codex("next", home, cwd, [say("two")], hooks=codex_hooks(hook, ["SessionStart"]), resume=thread_id(first))
    assert [_resume_counts(r) for r in run.requests] == [[1, 1, 0, 2, 1]]
    assert [p["source"] for p in hook.payloads("SessionStart")] == ["resume"]
    # it writes on in the same rollout, with no line a reader could tell from a new turn's
    assert run.extra["rollout"] == first.extra["rollout"]
    types = [line["type"] for line in rollout_lines(run.extra["rollout"])]
    assert types.count("session_meta") == 1


@facts
def test_fact_codex_version_command(tmp_path):
    assert codex_command(["--version"], tmp_path, tmp_path).stdout.strip() == f"codex-cli {CODEX_VERSION}"


# -------- Gemini CLI 0.61.0

GEMINI_FILES = {"GEMINI.md": "M_ROOT", "AGENTS.md": "M_AGENTS", "CLAUDE.md": "M_CLAUDE", "sub/GEMINI.md": "M_SUB",
                "sub/deep/GEMINI.md": "M_DEEP", "other/GEMINI.md": "M_OTHER"}


def _gemini_world(tmp_path):
    home, cwd = _world(tmp_path)
    _files(cwd, GEMINI_FILES)
    _files(home / ".gemini", {"GEMINI.md": "M_USER"})
    (cwd / "other" / "code.py").write_text("print(2)\n", encoding="utf-8")
    (cwd / "sub" / "deep" / "code.py").write_text("print(1)\n", encoding="utf-8")
    _git(cwd)
    return home, cwd


@facts
@pytest.mark.slow
def test_fact_gemini_loads_gemini_md_up_to_the_git_root_and_a_subfolders_when_read_file_reads_there(tmp_path):
    home, cwd = _gemini_world(tmp_path)
    marks = set(GEMINI_FILES.values()) | {"M_USER"}
    script = [call("read_file", file_path=str(cwd / "other" / "code.py")), shell("cat sub/deep/code.py"), say("ok")]
    run = run_gemini("look", home, cwd, script)
    first, after_read, after_shell = run.requests
    # the user's file in the system instruction, the project's in the first user message
    assert _seen(gemini_api.system_text(first), marks) == ["M_USER"]
    assert _seen(gemini_api.request_text(first), marks) == ["M_ROOT", "M_USER"]
    # read_file in other/ appends other/GEMINI.md to the function response; a shell `cat` loads nothing
    (read,) = gemini_api.tool_outputs(after_read)
    assert "--- Newly Discovered Project Context ---" in read and _seen(read, marks) == ["M_OTHER"]
    assert _seen(gemini_api.request_text(after_shell), marks) == ["M_OTHER", "M_ROOT", "M_USER"]
    # from a subfolder: every GEMINI.md from the git root down to it; AGENTS.md only when named in
    # context.fileName, whose names come beside GEMINI.md (not in its place)
    home2, cwd2 = _gemini_world(tmp_path / "two")
    run = run_gemini("look", home2, cwd2 / "sub", [say("ok")], settings={"context": {"fileName": ["AGENTS.md"]}})
    assert _seen(gemini_api.request_text(run.requests[0]), marks) == ["M_AGENTS", "M_ROOT", "M_SUB", "M_USER"]


@facts
@pytest.mark.slow
def test_fact_gemini_compresses_only_at_a_later_prompt_and_reloads_its_gemini_md_files(tmp_path):
    home, cwd = _gemini_world(tmp_path)
    hook = LogHook(tmp_path, {"*": context_answer()})
    hooks = gemini_hooks(hook, ["SessionStart", "PreCompress"])
    settings = {"model": {"compressionThreshold": 0.0002}}  # of 1,048,576 tokens: about 210
    first = run_gemini("go", home, cwd, [call("read_file", file_path=str(cwd / "other" / "code.py")), say("one")],
                       hooks=hooks, settings=settings)
    # within one prompt: PreCompress before every model call, and no compression (no split point but the first message)
    assert [r.kind for r in first.api.log] == ["main", "main"]
    assert hook.events() == ["SessionStart", "PreCompress", "PreCompress"]
    assert {p["trigger"] for p in hook.payloads("PreCompress")} == {"auto"}
    run = run_gemini("next", home, cwd, [say("two")], hooks=hooks, settings=settings, args=("--resume", "latest"))
    kinds = [r.kind for r in run.api.log]
    assert kinds == ["summary", "summary", "main"], kinds  # a <state_snapshot>, then its verification
    snapshot, verify, after = (r.body for r in run.api.log)
    assert "<state_snapshot>" in gemini_api.system_text(snapshot)
    assert gemini_api.contents_texts(verify)[-1][1].startswith("Critically evaluate the <state_snapshot>")
    text = gemini_api.request_text(after)
    assert run.api.summary in text
    assert _seen(text, set(GEMINI_FILES.values()) | {"M_USER"}) == ["M_ROOT", "M_USER"]  # other/GEMINI.md is gone
    assert [p["source"] for p in hook.payloads("SessionStart")] == ["startup", "resume"]
    assert "CTX_SessionStart_MARK" in text  # this run's SessionStart context, in its prompt
    # a chat file is named by its start minute and the session id's first 8 characters (a resume in
    # another minute writes a second file). The compression is no record of its own: a {"$set":
    # {"messages": [...]}} line rewrites the history as the session context, the summary as a user
    # message and the model's "Got it. Thanks for the additional context!"
    chats = session_files(home)
    assert chats and all(c.name.endswith(first.extra["output"]["session_id"][:8] + ".jsonl") for c in chats)
    patches = [json.loads(line)["$set"]["messages"] for c in chats for line in c.read_text().splitlines()
               if '"$set"' in line and run.api.summary in line]
    assert patches and [m["type"] for m in patches[0][:3]] == ["user", "user", "gemini"]
    assert patches[0][1]["content"][0]["text"] == run.api.summary
    assert patches[0][2]["content"][0]["text"] == "Got it. Thanks for the additional context!"


@facts
@pytest.mark.slow
def test_fact_gemini_resumed_keeps_what_hooks_added_to_tool_results_and_drops_the_rest(tmp_path):
    """What a resumed Gemini session's requests hold of what hooks added
    before (engine replay prices each addition as read by every later call
    of its epoch; Claude Code 2.1.330 keeps all of it on --resume)."""
    home, cwd = _gemini_world(tmp_path)
    answers = {"SessionStart": context_answer("CTX_START_1"), "BeforeAgent": context_answer("CTX_PROMPT_1"),
               "AfterTool": context_answer("CTX_AFTER_1")}
    hook = LogHook(tmp_path / "one", answers)
    first = run_gemini("go", home, cwd, [shell("echo a"), shell("printf 'OUT_%s' 7"), say("one")],
                       hooks=gemini_hooks(hook, ["SessionStart", "BeforeAgent", "AfterTool"]))
    marks = ("CTX_START_1", "CTX_PROMPT_1", "CTX_AFTER_1", "OUT_7")
    counts = lambda body: [gemini_api.request_text(body).count(m) for m in marks]
    assert [counts(r.body) for r in first.api.log] == [[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 2, 1]]
    run = run_gemini("next", home, cwd, [say("two")], hooks=gemini_hooks(LogHook(tmp_path / "two"), ["BeforeAgent"]),
                     args=("--resume", "latest"))
    # the prompt's and the start's additions are gone; each tool result's is there twice, its output too
    assert [counts(r.body) for r in run.api.log] == [[0, 0, 4, 2]]
    # its own files, as at the start: in view again (the engine's in-view epoch of a resume loads them)
    assert _seen(gemini_api.request_text(run.api.log[0].body), set(GEMINI_FILES.values()) | {"M_USER"}) == \
        _seen(gemini_api.request_text(first.api.log[0].body), set(GEMINI_FILES.values()) | {"M_USER"}) != []
    # a compression's two requests (unrecorded) hold the tool results' additions too
    settings = {"model": {"compressionThreshold": 0.0002}}
    third = run_gemini("more", home, cwd, [say("three")], settings=settings, args=("--resume", "latest"))
    assert [(r.kind, counts(r.body)[2] > 0) for r in third.api.log] == [("summary", True), ("summary", True), ("main", False)]


@facts
@pytest.mark.slow
def test_fact_gemini_after_tool_tail_call_replaces_the_output_and_deny_makes_it_an_error(tmp_path):
    cmd = "printf 'orig-%d\\n' 7"

    def run_with(name, answer):
        home, cwd = _world(tmp_path / name)
        hook = LogHook(tmp_path / name, {"AfterTool": answer})
        run = run_gemini("go", home, cwd, [shell(cmd), say("ok")], hooks=gemini_hooks(hook, ["AfterTool"]))
        assert run.returncode == 0, str(run)
        return json.loads(gemini_api.tool_outputs(run.requests[1])[0]), hook
    tail = {"hookEventName": "AfterTool", "additionalContext": "CTX_AFTER",
            "tailToolCallRequest": {"name": "run_shell_command", "args": {"command": "printf 'tail-%d' 5"}}}
    out, hook = run_with("tail", {"if_stdin_has": "orig-", "answer": {"hookSpecificOutput": tail}})
    assert "Output: tail-5" in out["output"] and "orig-7" not in out["output"]
    assert "CTX_AFTER" not in out["output"]  # the first answer's context is dropped with its output
    assert [p["tool_input"]["command"] for p in hook.payloads("AfterTool")] == [cmd, "printf 'tail-%d' 5"]
    out, _ = run_with("deny", {"decision": "deny", "reason": "DENIED_7f",
                               "hookSpecificOutput": {"hookEventName": "AfterTool", "additionalContext": "CTX_AFTER"}})
    assert out == {"error": "DENIED_7f"}


@facts
@pytest.mark.slow
def test_fact_gemini_shows_the_first_8000_and_last_32000_characters_of_a_349_kb_output(tmp_path):
    home, cwd = _world(tmp_path)
    run = run_gemini("go", home, cwd, [shell(SEQ_349K), say("ok")])
    out = json.loads(gemini_api.tool_outputs(run.requests[1])[0])["output"]
    head, saved = out.split("\n", 1)[0], out.split("For full output see: ")[1].split("\n")[0]
    assert head.startswith("Output too large. Showing first 8,000 and last 32,000 characters.")
    assert "Output: 1\n2\n3\n" in out and "59999\n60000" in out and "\n30000\n" not in out and 40000 < len(out) < 41000
    whole = Path(saved).read_text()
    assert "\n30000\n" in whole and "\n60000\n" in whole and str(home / ".gemini" / "tmp") in saved
    # the chat record keeps what the model read as the result, the whole output as resultDisplay
    calls = [c for line in session_files(home)[0].read_text().splitlines() for c in json.loads(line).get("toolCalls", [])]
    assert calls[-1]["result"][0]["functionResponse"]["response"]["output"] == out
    assert len(calls[-1]["resultDisplay"]) >= 348000


@facts
@pytest.mark.slow
def test_fact_gemini_headless_needs_a_trusted_folder_and_then_runs_user_and_project_hooks(tmp_path):
    def run_with(name, env, trusted_file=False):
        home, cwd = _world(tmp_path / name)
        user, project = LogHook(tmp_path / name / "u", {}), LogHook(tmp_path / name / "p", {})
        (cwd / ".gemini").mkdir()
        (cwd / ".gemini" / "settings.json").write_text(json.dumps({"hooks": gemini_hooks(project, ["SessionStart"])}))
        if trusted_file:
            (home / ".gemini").mkdir()
            (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(cwd): "TRUST_FOLDER"}))
        run = run_gemini("go", home, cwd, [say("ok")], hooks=gemini_hooks(user, ["SessionStart"]), env=env)
        return run, user.events(), project.events(), home, cwd
    run, user, project, _, _ = run_with("untrusted", {"GEMINI_CLI_TRUST_WORKSPACE": None})
    assert run.returncode == 55 and user == project == [] and not run.requests
    assert "GEMINI_CLI_TRUST_WORKSPACE=true" in run.stderr
    run, user, project, home, cwd = run_with("file", {"GEMINI_CLI_TRUST_WORKSPACE": None}, trusted_file=True)
    assert run.returncode == 0 and user == project == ["SessionStart"]
    assert "The following project-level hooks have been detected" in run.stderr
    remembered = json.loads((home / ".gemini" / "trusted_hooks.json").read_text())
    assert list(remembered) == [str(cwd)] and remembered[str(cwd)][0].startswith("log-SessionStart:")


@facts
@pytest.mark.slow
def test_fact_gemini_extension_carries_hooks_linked_offline(tmp_path):
    home, cwd = _world(tmp_path)
    ext = tmp_path / "ext"
    hook = LogHook(tmp_path / "h", {"*": context_answer("EXT_{event}")})
    (ext / "hooks").mkdir(parents=True)
    (ext / "gemini-extension.json").write_text(json.dumps({"name": "engine-test", "version": "0.0.1"}))
    (ext / "log.sh").write_text(f'#!/bin/sh\necho "$GEMINI_PROJECT_DIR" > {tmp_path}/env\n'
                                f'exec {hook.command("X").rsplit(" ", 1)[0]} "$1"\n')
    (ext / "log.sh").chmod(0o755)
    (ext / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {ev: [{"hooks": [
        {"type": "command", "name": f"ext-{ev}", "command": "${extensionPath}${/}log.sh " + ev}]}]
        for ev in ("SessionStart", "AfterTool")}}))
    linked = gemini_command(["extensions", "link", str(ext), "--consent"], home, cwd)
    assert linked.returncode == 0 and 'Extension "engine-test" linked successfully and enabled.' in linked.stderr
    run = run_gemini("go", home, cwd, [shell("echo hi"), say("ok")])
    assert hook.events() == ["SessionStart", "AfterTool"], str(run)
    assert "EXT_AfterTool" in gemini_api.request_text(run.requests[1])
    assert (tmp_path / "env").read_text().strip() == str(cwd)


@facts
@pytest.mark.slow
def test_fact_gemini_payload_fields_of_every_event_and_the_hooks_environment(tmp_path):
    home, cwd = _world(tmp_path)
    hook = LogHook(tmp_path, {})
    events = ["SessionStart", "BeforeAgent", "BeforeModel", "AfterModel", "BeforeToolSelection", "BeforeTool",
              "AfterTool", "AfterAgent", "PreCompress", "SessionEnd"]
    run_gemini("go", home, cwd, [shell("echo hi"), say("ok")], hooks=gemini_hooks(hook, events))
    base = {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp"}
    extra = {"SessionStart": {"source"}, "BeforeAgent": {"prompt"}, "BeforeModel": {"llm_request"},
             "BeforeToolSelection": {"llm_request"}, "AfterModel": {"llm_request", "llm_response"},
             "BeforeTool": {"tool_name", "tool_input"}, "AfterTool": {"tool_name", "tool_input", "tool_response"},
             "AfterAgent": {"prompt", "prompt_response", "stop_hook_active"}, "PreCompress": {"trigger"},
             "SessionEnd": {"reason"}}
    for event in events:
        payload = hook.payloads(event)[0]
        assert set(payload) == base | extra[event], (event, sorted(payload))
    assert set(hook.payloads("AfterModel")[0]["llm_response"]) == {"candidates", "text", "usageMetadata"}
    assert set(hook.payloads("BeforeModel")[0]["llm_request"]) == {"model", "messages", "config"}
    env = hook.calls()[0]["env"]
    assert env["GEMINI_PROJECT_DIR"] == env["GEMINI_CWD"] == env["CLAUDE_PROJECT_DIR"] == str(cwd)


@facts
def test_fact_gemini_version_command(tmp_path):
    assert gemini_command(["--version"], tmp_path, tmp_path).stdout.strip() == "0.61.0"


# -------- Copilot CLI 1.0.102

COPILOT_FILES = {".github/copilot-instructions.md": "M_REPO", "AGENTS.md": "M_AGENTS", "CLAUDE.md": "M_CLAUDE",
                 "GEMINI.md": "M_GEMINI", "sub/AGENTS.md": "M_SUB_AGENTS", "sub/CLAUDE.md": "M_SUB_CLAUDE",
                 ".claude/rules/r.md": "M_CLAUDE_RULE"}
SCOPED = {"py": ('applyTo: "**/*.py"', "M_APPLY_PY"), "docs": ('applyTo: "docs/**"', "M_APPLY_DOCS"),
          "all": ('applyTo: "**"', "M_APPLY_ALL"), "none": (None, "M_APPLY_NONE")}


def _copilot_world(tmp_path):
    home, cwd = _world(tmp_path)
    _files(cwd, COPILOT_FILES)
    _files(home / ".copilot", {"copilot-instructions.md": "M_USER"})
    for name, (front, mark) in SCOPED.items():
        path = cwd / ".github" / "instructions" / f"{name}.instructions.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        head = f"---\n{front}\n---\n" if front else ""
        path.write_text(f"{head}Always say {mark}.\n", encoding="utf-8")
    (cwd / "sub" / "deep").mkdir(parents=True)
    (cwd / "sub" / "deep" / "code.py").write_text("print(1)\n", encoding="utf-8")
    (cwd / "docs").mkdir()
    _git(cwd)
    return home, cwd


COPILOT_MARKS = set(COPILOT_FILES.values()) | {m for _, m in SCOPED.values()} | {"M_USER"}
COPILOT_AT_START = ["M_AGENTS", "M_APPLY_ALL", "M_APPLY_NONE", "M_CLAUDE", "M_CLAUDE_RULE", "M_GEMINI", "M_REPO", "M_USER"]


@facts
@pytest.mark.slow
def test_fact_copilot_loads_its_files_at_start_and_path_scoped_ones_after_view_reads_a_match(tmp_path):
    home, cwd = _copilot_world(tmp_path)
    script = [call("view", path=str(cwd / "sub" / "deep" / "code.py")), shell("cat sub/deep/code.py"),
              call("create", path=str(cwd / "docs" / "new.md"), file_text="hello\n"), say("ok")]
    run = run_copilot("look", home, cwd, script)
    first, after_view, after_shell, after_create = run.requests
    # at start, all in the request's `instructions`: the user's and the repository's files, AGENTS.md,
    # CLAUDE.md, GEMINI.md, .claude/rules, *.instructions.md without applyTo or with "**"
    assert _seen(first["instructions"], COPILOT_MARKS) == COPILOT_AT_START
    assert _seen(responses_api.request_text(first), COPILOT_MARKS) == COPILOT_AT_START
    # the scoped ones are listed by pattern, for the model to `view`
    assert "| **/*.py | '.github/instructions/py.instructions.md' |  |" in first["instructions"]
    assert "| docs/** | '.github/instructions/docs.instructions.md' |  |" in first["instructions"]
    # `view` of sub/deep/code.py: a user message after the tool output with the matching scoped file and the
    # nested AGENTS.md and CLAUDE.md, each "<system_reminder>\nCustom instructions from PATH. ..."
    reminder = responses_api.input_texts(after_view)[-1]
    assert reminder[0] == "user" and _seen(reminder[1], COPILOT_MARKS) == ["M_APPLY_PY", "M_SUB_AGENTS", "M_SUB_CLAUDE"]
    assert "Custom instructions from .github/instructions/py.instructions.md." in reminder[1]
    # a shell `cat` and the creation of a matching file load nothing more
    for body in (after_shell, after_create):
        assert _seen(responses_api.request_text(body), COPILOT_MARKS) == sorted(
            COPILOT_AT_START + ["M_APPLY_PY", "M_SUB_AGENTS", "M_SUB_CLAUDE"])
    assert (cwd / "docs" / "new.md").read_text() == "hello\n"


@facts
@pytest.mark.slow
def test_fact_copilot_compacts_offline_under_a_small_prompt_limit_and_keeps_only_its_start_files(tmp_path):
    home, cwd = _copilot_world(tmp_path)
    hook = LogHook(tmp_path, {"*": {"additionalContext": "CTX_{event}_MARK"}})
    served = []

    def tokens(req):  # near the limit from the second answer on
        served.append(req)
        return 1000 if len(served) < 2 else 19000
    api = ResponsesAPI([call("view", path=str(cwd / "sub" / "deep" / "code.py")), shell("echo two"),
                        shell("echo three"), say("done")], tokens=tokens)
    run = run_copilot("go", home, cwd, None, api=api, env={"COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "20000"},
                      hooks=copilot_hooks(hook, ["sessionStart", "userPromptSubmitted", "preCompact"]))
    assert run.returncode == 0, str(run)
    kinds = [r.kind for r in run.api.log]
    assert "summary" in kinds, kinds
    at = kinds.index("summary")
    # the first request with the summary (a main-loop request with the whole history goes out beside the
    # summary request: it compacts in the background)
    summary = run.api.log[at].body
    after = next(r.body for r in run.api.log[at + 1:] if "<summary>" in responses_api.request_text(r.body))
    assert responses_api.last_user_text(summary).startswith("Please create a detailed summary of the conversation")
    assert "preCompact" in hook.events() and hook.events().count("sessionStart") == 1
    text = responses_api.request_text(after)
    assert _seen(text, COPILOT_MARKS) == COPILOT_AT_START  # the view-loaded files are gone
    assert "CTX_sessionStart_MARK" not in text and "CTX_userPromptSubmitted_MARK" not in text
    assert f"<summary>\n{api.summary}\n</summary>" in text and "<user_message>\ngo\n</user_message>" in text
    records = events_of(run)
    start = [r["data"] for r in records if r["type"] == "session.compaction_start"][0]
    done = [r["data"] for r in records if r["type"] == "session.compaction_complete"][0]
    assert start["tokenLimit"] == 20000 and start["trigger"] == "threshold" and start["currentTokens"] >= 19000
    assert done["success"] and done["summaryContent"] == api.summary and done["messagesRemoved"] > 0
    usage = [r["data"]["usage"] for r in records if r["type"] == "session.usage_record"]
    assert usage[0]["inputTokens"] == 1000 and {"outputTokens", "cacheReadTokens", "cacheWriteTokens"} <= set(usage[0])


def _call_ids(body):
    return [i["call_id"] for i in body.get("input") or [] if i.get("type") == "function_call_output"]


def _copilot_compacting_beside_the_turn(tmp_path, calls, events):
    """A Copilot run of `calls` shell calls under a 20,000-token prompt
    limit, its answers reporting 1,000 then 17,000 input tokens (85%): it
    compacts beside the turn, the stand-in holding the summary request until
    three more main requests are served; logging hooks on `events` answer
    CTX_<event>_MARK.  (run, hook, api)."""
    home, cwd = _world(tmp_path)
    hook = LogHook(tmp_path, {"*": {"additionalContext": "CTX_{event}_MARK"}})
    served = []

    def tokens(req):
        served.append(req)
        return 1000 if len(served) < 2 else 17000
    api = ResponsesAPI([shell(f"echo step-{i}") for i in range(1, calls + 1)] + [say("done")], tokens=tokens,
                       summary_after=3)
    run = run_copilot("go", home, cwd, None, api=api, env={"COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "20000"},
                      hooks=copilot_hooks(hook, events))
    return run, hook, api


def _codex_compacts(tmp_path, reported):
    """Does a Codex run whose answers report 1,000 input tokens, then
    `reported` (and 10 output tokens), compact?  No limit of its own in
    config.toml: its model's (tests/support/codex_catalog.json, 272,000
    tokens, auto_compact_token_limit null)."""
    home, cwd = _codex_world(tmp_path)
    served = []

    def tokens(req):
        served.append(req)
        return 1000 if len(served) < 2 else reported
    api = ResponsesAPI([shell("echo one"), shell("echo two"), say("done")], tokens=tokens)
    run = run_codex("go", home, cwd / "sub", None, api=api)
    assert run.returncode == 0, str(run)
    return "summary" in [r.kind for r in run.api.log]


@facts
@pytest.mark.slow
def test_fact_codex_compacts_at_nine_tenths_of_its_models_window(tmp_path):
    """Codex CLI 0.171.0 with no model_auto_compact_token_limit compacts
    at 90% of its model's whole window: 244,800 of 272,000, codex.yaml's
    context.compaction (measured: 244,790 tokens in all started one,
    244,770 did not)."""
    from engine.agents.table import get

    point = get("codex").data["context"]["compaction"]["tokens"]
    assert point == 272_000 * 9 // 10
    assert _codex_compacts(tmp_path / "at", point)
    assert not _codex_compacts(tmp_path / "below", point - 100)


def _copilot_reporting(tmp_path, reported, limit):
    """A Copilot run under a `limit`-token prompt limit whose answers report
    1,000 input tokens, then `reported`: its compaction_start data, or None."""
    home, cwd = _world(tmp_path)
    served = []

    def tokens(req):
        served.append(req)
        return 1000 if len(served) < 2 else reported
    api = ResponsesAPI([shell(f"echo step-{i}") for i in range(1, 5)] + [say("done")], tokens=tokens, summary_after=1)
    run = run_copilot("go", home, cwd, None, api=api, env={"COPILOT_PROVIDER_MAX_PROMPT_TOKENS": str(limit)})
    assert run.returncode == 0, str(run)
    return next((r["data"] for r in events_of(run) if r["type"] == "session.compaction_start"), None)


@facts
@pytest.mark.slow
def test_fact_copilot_compacts_at_four_fifths_of_its_prompt_limit(tmp_path):
    """Copilot CLI 1.0.102 starts a compaction once its own count of the
    prompt (compaction_start's currentTokens: the response's input tokens
    and a few of its own) reaches copilot.yaml's context.compaction
    fraction of the prompt limit: 16,006 of 20,000 started one, 15,956 did
    not (the fraction engine doctor reads)."""
    from engine.agents.table import get

    limit = 20_000
    point = get("copilot").data["context"]["compaction"]["fraction"] * limit
    at = _copilot_reporting(tmp_path / "at", int(point) - 30, limit)
    assert at is not None and at["currentTokens"] >= point and at["trigger"] == "threshold", at
    own = at["currentTokens"] - (int(point) - 30)  # what it adds to the response's count
    below = int(point) - own - 50
    assert _copilot_reporting(tmp_path / "below", below, limit) is None, (below, own)


@facts
@pytest.mark.slow
def test_fact_copilot_keeps_what_the_turn_added_during_a_background_compaction_after_the_summary(tmp_path):
    run, hook, api = _copilot_compacting_beside_the_turn(
        tmp_path, 10, ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse"])
    assert run.returncode == 0, str(run)
    log = run.api.log
    at = [r.kind for r in log].index("summary")
    snapshot = log[at].body["input"][:-1]  # the history the summary was asked of (then its own request)
    after = next(i for i in range(at + 1, len(log)) if "<summary>" in responses_api.request_text(log[i].body))
    # the main loop's requests while it compacts (one goes out beside the summary request): the whole
    # history, growing by each call
    while_compacting = [i for i in range(after) if log[i].kind == "main" and log[i].body["input"][:len(snapshot)] == snapshot]
    during = [log[i].body for i in while_compacting]
    assert len(during) >= 3 and all(i >= at - 1 for i in while_compacting), [r.kind for r in log]
    assert [len(b["input"]) for b in during] == sorted({len(b["input"]) for b in during})
    # the first request after it: the summary, then every item added since the summary was asked, kept
    first = log[after].body["input"]
    assert f"<summary>\n{api.summary}\n</summary>" in responses_api.input_texts({"input": first[:1]})[0][1]
    kept = during[-1]["input"][len(snapshot):]
    assert first[1:1 + len(kept)] == kept and len(first) > 1 + len(kept)  # and the last one's call
    new_calls = [c for c in _call_ids(log[after].body) if c not in _call_ids({"input": snapshot})]
    assert new_calls == _call_ids(log[after].body) == [f"call_{i + 1:04d}" for i in while_compacting]  # call_N: the Nth
    # what the hooks added then is among it: every output with its postToolUse text, each preToolUse message
    outs = responses_api.tool_outputs(log[after].body)
    assert all("CTX_postToolUse_MARK" in o for o in outs)
    assert responses_api.request_text(log[after].body).count("CTX_preToolUse_MARK") == len(outs)
    assert "CTX_sessionStart_MARK" not in responses_api.request_text(log[after].body)  # that was summarized
    # events.jsonl: compaction_start before the usage of the first request made with the summary's, the
    # complete (same attempt) right before the usage of the first request that holds the summary
    records = events_of(run)
    types = [r["type"] for r in records]
    start, done = types.index("session.compaction_start"), types.index("session.compaction_complete")
    assert records[start]["data"]["compactionAttemptId"] == records[done]["data"]["compactionAttemptId"]
    usage = {r["data"]["usage"]["apiCallId"]: i for i, r in enumerate(records) if r["type"] == "session.usage_record"}
    assert all(start < usage[f"resp_{i + 1:04d}"] < done for i in while_compacting)
    assert usage[f"resp_{after + 1:04d}"] == done + 1
    results = {r["data"]["toolCallId"]: i for i, r in enumerate(records) if r["type"] == "tool.execution_complete"}
    assert all(start < results[c] < done for c in new_calls)


@facts
@pytest.mark.slow
def test_fact_copilot_pre_compact_fires_as_a_background_compaction_begins_and_its_context_reaches_no_request(tmp_path):
    """preCompact (documented, not in the hooks a Copilot CLI 1.0.102 plugin
    lists by default) fires at each compaction's start, before its summary
    request, with {trigger: auto, customInstructions: ""}; the context it
    answers reaches no request.  The engine takes it as the sign that the
    summary is coming (copilot.yaml: transcript.compacts_in_background)."""
    run, hook, api = _copilot_compacting_beside_the_turn(tmp_path, 8, ["sessionStart", "postToolUse", "preCompact"])
    assert run.returncode == 0, str(run)
    (first, *_) = hook.payloads("preCompact")
    assert first["trigger"] == "auto" and first["customInstructions"] == "" and first["transcriptPath"]
    events, kinds = hook.events(), [r.kind for r in run.api.log]
    assert events.count("preCompact") == kinds.count("summary") >= 1
    texts = [responses_api.request_text(r.body) for r in run.api.log]
    assert not any("CTX_preCompact_MARK" in t for t in texts)
    assert any("CTX_postToolUse_MARK" in t for t in texts[kinds.index("summary"):])
    types = [r["type"] for r in events_of(run)]
    assert "session.compaction_start" in types


@facts
@pytest.mark.slow
def test_fact_copilot_modified_result_replaces_the_output_and_claude_shaped_answers_are_ignored(tmp_path):
    cmd = "printf 'orig-%d\\n' 7"

    def run_with(name, answer):
        home, cwd = _world(tmp_path / name)
        hook = LogHook(tmp_path / name, {"postToolUse": answer})
        run = run_copilot("go", home, cwd, [shell(cmd), say("ok")], hooks=copilot_hooks(hook, ["postToolUse"]))
        assert run.returncode == 0, str(run)
        (done,) = [r["data"]["result"] for r in events_of(run) if r["type"] == "tool.execution_complete"]
        return responses_api.tool_outputs(run.requests[1])[0], done
    out, done = run_with("modified", {"modifiedResult": {"textResultForLlm": "MODIFIED_7f", "resultType": "success"},
                                      "additionalContext": "CTX_POST"})
    assert out == 'MODIFIED_7f\n\nTool "bash" succeeded. Additional guidance from postToolUse hooks:\nCTX_POST'
    assert done["content"] == out and done["detailedContent"].startswith("orig-7")  # the original, kept aside
    out, done = run_with("claude", {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "CTX_POST",
                                                           "updatedToolOutput": {"stdout": "UPD"}}})
    assert out == "orig-7\n<shellId: 0 completed with exit code 0>" and "detailedContent" not in done


@facts
@pytest.mark.slow
def test_fact_copilot_pre_tool_ask_is_a_denial_allow_takes_modified_args_and_a_26_kb_view_is_refused(tmp_path):
    def view_with(name, answer, kb=30):
        home, cwd = _world(tmp_path / name)
        big = cwd / "big.py"
        big.write_text(("x" * 99 + "\n") * (kb * 1024 // 100))
        if answer and "modifiedArgs" in answer:
            answer["modifiedArgs"]["path"] = str(big)
        hook = LogHook(tmp_path / name, {"preToolUse": answer} if answer else {})
        run = run_copilot("go", home, cwd, [call("view", path=str(big)), say("ok")],
                          hooks=copilot_hooks(hook, ["preToolUse"]))
        assert run.returncode == 0, str(run)
        return responses_api.tool_outputs(run.requests[1])[-1]
    assert view_with("plain", None, kb=26).startswith("File too large to read at once (26.0 KB). Consider using the grep tool")
    assert view_with("ask", {"permissionDecision": "ask", "permissionDecisionReason": "ASK_R"}) == \
        "Denied by preToolUse hook (unable to ask user for confirmation): ASK_R"
    allowed = view_with("allow", {"permissionDecision": "allow", "modifiedArgs": {"path": "", "view_range": [1, 3]}})
    assert allowed.splitlines() == ["x" * 99] * 3, allowed[:500]  # the file's first three lines, as modifiedArgs asked


@facts
@pytest.mark.slow
def test_fact_copilot_saves_a_349_kb_output_to_a_temporary_file_for_the_session_and_shows_500_characters(tmp_path):
    """So it does with any output over 20 KB: one of 20,393 bytes (20,432
    characters with its exit code's line) reaches the model whole, one of
    20,478 bytes does not."""
    home, cwd = _world(tmp_path)
    run = run_copilot("go", home, cwd, [shell("seq 1 4300"), shell("seq 1 4317"), shell(SEQ_349K), say("ok")])
    below, above = (responses_api.tool_outputs(run.requests[i])[-1] for i in (1, 2))
    assert len(below) == 20432 and below.startswith("1\n2\n") and "\n4300\n" in below, below[-200:]
    assert above.startswith("Output too large to read at once (20.0 KB). Saved to: "), above[:200]
    out = responses_api.tool_outputs(run.requests[3])[-1]
    assert out.startswith("Output too large to read at once (340.7 KB). Saved to: ") and len(out) < 1000
    saved = Path(out.split("Saved to: ")[1].split("\n")[0])
    assert saved.parent == home / "tmp" and saved.name.endswith(".txt") and "-copilot-tool-output-" in saved.name
    assert "Preview (first 500 chars):\n1\n2\n" in out
    assert not saved.exists()  # the whole output lives only while the session runs
    done = [r["data"]["result"] for r in events_of(run) if r["type"] == "tool.execution_complete"]
    assert done[-1]["content"] == out


@facts
@pytest.mark.slow
def test_fact_copilot_runs_repository_hooks_only_in_a_trusted_folder_and_personal_hooks_always(tmp_path):
    def run_with(name, env=None, args=(), config=None):
        home, cwd = _world(tmp_path / name)
        user, repo = LogHook(tmp_path / name / "u", {}), LogHook(tmp_path / name / "r", {})
        (home / ".copilot" / "hooks").mkdir(parents=True)
        (home / ".copilot" / "hooks" / "mine.json").write_text(json.dumps(copilot_hooks(user, ["sessionStart"])))
        if config is not None:
            (home / ".copilot" / "config.json").write_text(json.dumps(config(cwd)))
        run = run_copilot("go", home, cwd, [say("ok")], hooks=copilot_hooks(repo, ["sessionStart"]),
                          env={"COPILOT_ALLOW_ALL": "1", **(env or {})}, args=args)  # "1": tools, not trust
        assert run.returncode == 0, str(run)
        return user.events(), repo.events(), run
    assert run_with("untrusted")[:2] == (["sessionStart"], [])
    assert run_with("allow-all", env={"COPILOT_ALLOW_ALL": "true"})[:2] == (["sessionStart"], ["sessionStart"])
    assert run_with("flag", args=("--trust-folder",))[:2] == (["sessionStart"], ["sessionStart"])
    user, repo, run = run_with("config", config=lambda cwd: {"trusted_folders": [str(cwd)]})
    assert (user, repo) == (["sessionStart"], ["sessionStart"])
    kept = (run.home / ".copilot" / "config.json").read_text()
    assert '"trustedFolders"' in kept and str(run.cwd) in kept  # the agent rewrites the key in camelCase


@facts
@pytest.mark.slow
def test_fact_copilot_hook_environment_names_the_project_for_claude_code_too(tmp_path):
    home, cwd = _world(tmp_path)
    hook = LogHook(tmp_path, {})
    run_copilot("go", home, cwd, [shell("false"), say("ok")], hooks=copilot_hooks(hook, ["sessionStart", "postToolUse"]))
    # a failing command is a "success" result, its exit code in the text
    (post,) = hook.payloads("postToolUse")
    assert post["toolResult"] == {"resultType": "success", "textResultForLlm": "\n<shellId: 0 completed with exit code 1>"}
    env = hook.calls()[0]["env"]
    assert env["COPILOT_PROJECT_DIR"] == str(cwd) and env["CLAUDE_PROJECT_DIR"] == str(cwd)
    assert env["COPILOT_HOOK_DIR"] == str(cwd / ".github" / "hooks") and env["COPILOT_CLI"] == "1"


@facts
@pytest.mark.slow
def test_fact_copilot_resumed_drops_what_session_start_and_pre_tool_added(tmp_path):
    home, cwd = _world(tmp_path)
    answers = {"sessionStart": {"additionalContext": "CTX_START_1"},
               "userPromptSubmitted": {"additionalContext": "CTX_PROMPT_1"},
               "preToolUse": {"additionalContext": "CTX_PRE_1"}, "postToolUse": {"additionalContext": "CTX_AFTER_1"}}
    first = run_copilot("go", home, cwd, RESUME_SCRIPT, hooks=copilot_hooks(LogHook(tmp_path / "one", answers), list(answers)))
    assert [_resume_counts(r) for r in first.requests] == [[1, 1, 0, 0, 0], [1, 1, 1, 1, 0], [1, 1, 2, 2, 1]]
    (session,) = [d for d in session_dirs(home) if (d / "events.jsonl").is_file()]
    hook = LogHook(tmp_path / "two")
    run = run_copilot("next", home, cwd, [say("two")], hooks=copilot_hooks(hook, ["sessionStart"]),
                      args=(f"--resume={session.name}",))
    assert [_resume_counts(r) for r in run.requests] == [[0, 1, 0, 2, 1]]
    assert [p["source"] for p in hook.payloads("sessionStart")] == ["resume"]
    # one events.jsonl: session.shutdown ends the first run, session.resume starts the next
    types = [e["type"] for e in events_of(run)]
    assert types.count("session.start") == 1 and types.count("session.shutdown") == 2
    assert types[types.index("session.shutdown") + 1] == "session.resume"
    # its own files, as at the start: in view again (the engine's in-view epoch of a resume loads them)
    (cwd / "AGENTS.md").write_text("Always say M_RESUMED_OWN.\n", encoding="utf-8")
    own = run_copilot("more", home, cwd, [say("three")], args=(f"--resume={session.name}",))
    assert "M_RESUMED_OWN" in own.requests[0]["instructions"]


@facts
def test_fact_copilot_version_command_and_transcript_field(tmp_path):
    assert copilot_command(["--version"], tmp_path, tmp_path).stdout.startswith("GitHub Copilot CLI 1.0.102.")


@facts
@pytest.mark.parametrize("sequential", [True, False])
def test_fact_gemini_before_model_answers_replace_the_request_and_sequential_hooks_pass_it_on(tmp_path, sequential):
    """Two BeforeModel hooks, each answering with `llm_request.messages`:
    run in parallel, the last one's messages replace the other's (field
    replacement); with one group `sequential`, every BeforeModel hook runs
    one after another and the second is given the request as the first
    left it, so an answer that gives back what it was given keeps an
    earlier hook's change (why the engine's group is sequential)."""
    home, cwd = _world(tmp_path)
    first = LogHook(tmp_path / "a", {"BeforeModel": {"hookSpecificOutput": {
        "hookEventName": "BeforeModel", "llm_request": {"messages": [{"role": "user", "content": "FIRST_HOOK_MARK"}]}}}})
    second = LogHook(tmp_path / "b", {"BeforeModel": {"hookSpecificOutput": {
        "hookEventName": "BeforeModel", "llm_request": {"messages": [{"role": "user", "content": "SECOND_HOOK_MARK"}]}}}})
    group = {"hooks": [{"type": "command", "name": "first", "command": first.command("BeforeModel"), "timeout": 30000}]}
    if sequential:
        group["sequential"] = True
    hooks = {"BeforeModel": [group, {"hooks": [{"type": "command", "name": "second",
                                                "command": second.command("BeforeModel"), "timeout": 30000}]}]}
    run = run_gemini("go", home, cwd, [say("ok")], hooks=hooks)
    text = gemini_api.request_text(run.requests[0])
    given = second.payloads("BeforeModel")[0]["llm_request"]["messages"]
    if sequential:
        assert given == [{"role": "user", "content": "FIRST_HOOK_MARK"}], "the second is given the first one's request"
    else:
        assert given != [{"role": "user", "content": "FIRST_HOOK_MARK"}], "each is given the agent's own request"
    assert "SECOND_HOOK_MARK" in text and "FIRST_HOOK_MARK" not in text, "the last answer's messages replace the other's"
