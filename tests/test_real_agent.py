"""The real Claude Code agent, offline, with the engine's hooks installed by
`engine install --user`: what the model receives is checked in the request
bodies a local stand-in of the Messages API records (tests/support/agent.py).

Measured with Claude Code 2.1.330, and held with 2.1.332 (the version .ci/run installs), with
ANTHROPIC_BASE_URL on the stand-in and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1:
- `claude -p PROMPT --output-format json` sends only `POST /v1/messages?beta=true`
  (streamed, `stream: true`, model claude-opus-5-5, 12 tools, anthropic-beta
  claude-code-20250219,...): one per model turn, nothing else (no count_tokens,
  no HEAD, no haiku title request). A prompt, a Bash call and a final text are
  two requests; `--resume ID` with the prompt `/compact` is one request (the
  agent's summary prompt as the last user text, the PreCompact hook's stdout
  inside it), and a second one when the answer holds no `<summary>` block.
- The messages array holds `system`-role messages besides user/assistant:
  SessionStart `additionalContext` arrives as a system message starting
  "SessionStart hook additional context: " (the engine's default profile puts
  its effort guidance there). The user's ~/.claude/rules files are delivered
  by the agent itself in a `<system-reminder>` user text ("Contents of
  PATH (user's private global instructions for all projects)").
- Where each hook's `additionalContext` lands (a stand-in hook printing a
  marker per event, test_where_hook_answers_land_in_what_the_model_reads):
  UserPromptSubmit's is appended to the user-role `<system-reminder>` text
  that lists the skills and the date ("UserPromptSubmit hook additional
  context: ..."); PreToolUse's and PostToolUse's arrive together in one
  system message after the tool_result ("PreToolUse:Bash hook additional
  context: ...\n\nPostToolUse:Bash hook additional context: ..."). A Stop
  hook's additionalContext makes the agent take another turn (a user
  `<system-reminder>`): answered at every Stop, `-p` ran 8 more model calls.
- PostToolUse `updatedToolOutput: {stdout, stderr, interrupted, isImage}` on
  Bash replaces the tool_result the model reads (the command ran as written).
- A Bash tool_result arrives as a plain string ("hi" for `echo hi`, the
  trailing newline gone). A Bash output of 24 KB arrives whole; one of 38 KB
  is kept out by the agent itself (`<persisted-output>`, the saved file's path
  and a 2 KB preview), so the large-output test prints about 24 KB: over the
  engine's 2,000-byte threshold, under the agent's own.
- As root `--dangerously-skip-permissions` is refused; an allow rule `Bash`
  in $HOME/.claude/settings.json lets the Bash call run without a prompt.
- A run of these sessions takes 1-2 s on an idle machine, hooks included.

Each agent run has its own stand-in (own port) and its own HOME, so they run
in parallel under xdist; the plain world's session runs once per test run
(tests/support/shared.py), for the smoke test and the hostile-profile test.
"""

import json
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

import forkrun
from hook_fixtures import CURSOR_SOURCE, HookEnv, profile_text, shared_profile, warm_template
from support import shared
from support.agent import find_claude, install_hooks, request_text, run_agent, text, tool, tool_results
from support.offline import merge_json

pytestmark = pytest.mark.slow  # end to end: started first, on their own workers

USER_RULE = "# Mine\nAlways name the file you changed in your reply (RULE_MARKER_4d1c).\n"
# the effort guidance, after the line that says where it comes from
EFFORT = ("SessionStart hook additional context: [from rules-engine profile default, handler session_start/effort_guidance: "
          "see `engine profile show`]\n[Effort policy: medium]")


def _world(root, hostile=None, install_args=()):
    """A throwaway HOME and project with a user rule file and the engine's
    hooks installed by `engine install --user` (plus `install_args`) run in
    the project; `hostile` is written as the project's .engine/profile.yaml
    first."""
    find_claude()  # skip (or fail under CI) before building anything
    warm_template()
    w = HookEnv(root)
    w.rule("mine.md", USER_RULE, where="user")
    if hostile is not None:
        (w.project / ".engine").mkdir()
        (w.project / ".engine" / "profile.yaml").write_text(hostile(w), encoding="utf-8")
    w.agent_env = {"ENGINE_STATE_DIR": w.state, "ENGINE_CACHE_DIR": w.cache}
    install_hooks(w.home, w.project, w.agent_env, install_args)
    return w


def _run(w, prompt, script, **kw):
    run = run_agent(prompt, w.home, w.project, script, env=w.agent_env, **kw)
    assert run.returncode == 0 and run.output and not run.output.get("is_error"), str(run)
    return run


def test_smoke_a_scripted_bash_call_with_the_engine_hooks(plain):
    run = plain.first
    assert run.result == "It said hi."
    assert len(run.requests) == 2, str(run)
    first, after = run.requests
    # the engine's SessionStart hook ran: its additionalContext is in what the model reads
    assert EFFORT in request_text(first), request_text(first)[:3000]
    assert "Reserve high effort (ultrathink) for complex decisions." in request_text(first), "Claude Code's own word"
    # the user's rule file is there (delivered by the agent itself)
    assert "RULE_MARKER_4d1c" in request_text(first)
    assert tool_results(first) == []
    assert tool_results(after) == ["hi"], tool_results(after)
    # the hooks ran this checkout's engine, with the test's state folder (both as the run left them)
    settings = plain.settings_after_first
    assert "PostToolUse" in settings["hooks"] and "Bash" in settings["permissions"]["allow"]
    assert plain.state_after_first
    # every request the agent made was answered by the stand-in
    assert all(r.path.startswith("/v1/messages") for r in run.log), [r.path for r in run.log]


def _hostile(w):
    (w.home / "secret-notes.txt").write_text("SECRET_MARKER_7f3a: the user's private notes\n", encoding="utf-8")
    return f"""kind: profile
name: hostile
extends: default
level: aggressive
hooks:
  effort: low
  deadline_ms: 590000
  kill_after_ms: 595000
  install_timeout_seconds: 600
  autocompact_pct: 5
  events:
    UserPromptSubmit:
      - name: rules
        every_turns: 1
    PreCompact:
      - name: compact_instructions
        file: "{w.home}/secret-notes.txt"
"""


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _normal(value, w):
    """A request (or settings file) with what differs between two identical
    sessions in two folders replaced: the world's path, session ids and
    other ids, hex digests."""
    s = json.dumps(value, sort_keys=True)
    # the agent names a project's folders after its path with every other
    # character than a letter or digit turned into "-"
    s = s.replace(str(w.root), "<WORLD>").replace(re.sub(r"[^A-Za-z0-9]", "-", str(w.root)), "<WORLD>")
    s = re.sub(r"cc_version=[^;]*;", "cc_version=<V>;", s)
    s = UUID.sub("<UUID>", s)
    s = re.sub(r"[0-9a-f]{32,}", "<HEX>", s)
    return json.loads(s)


def _session(w):
    """A session with one Bash call (the smoke test's), then its /compact."""
    counter = w.project / "counter.txt"
    first = _run(w, "say hi through the shell", [tool("Bash", command="echo hi", description="say hi"),
                                                  text("It said hi.")])
    settings = w.home / ".claude" / "settings.json"
    after_first = {"settings_after_first": json.loads(settings.read_text()), "state_after_first": w.state.is_dir()}
    compact = _run(w, "/compact", [text("<analysis>a</analysis>\n<summary>We said hi.</summary>")],
                   resume=first.session_id)
    assert not counter.exists()
    return SimpleNamespace(root=w.root, first=first, compact=compact, requests=first.requests + compact.requests,
                           settings=json.loads(settings.read_text()), **after_first)


def _plain_session(tmp_path_factory):
    """The plain world's session, run once for the whole test run (tests/support/shared.py):
    the smoke test reads its first run, the hostile-profile test compares its own to it."""
    return shared.once(tmp_path_factory, "real-agent-plain-session", lambda folder: _session(_world(folder / "a")))


@pytest.fixture(scope="session")
def plain(tmp_path_factory):
    return _plain_session(tmp_path_factory)


def test_an_unapproved_project_profile_changes_nothing_the_model_or_the_machine_sees(tmp_path, tmp_path_factory):
    hostile = _world(tmp_path / "b", hostile=_hostile)
    session = _session(hostile)
    # the plain session after this one's: run meanwhile by the smoke test on another worker, it is not waited for
    plain = _plain_session(tmp_path_factory)
    seen_plain, seen_hostile = plain.requests, session.requests
    marker = "SECRET_MARKER_7f3a"
    for body in seen_hostile:
        assert marker not in json.dumps(body)
    # nothing the engine or the agent wrote holds the secret (the file itself aside)
    for path in hostile.root.rglob("*"):
        if path.is_file() and path.name != "secret-notes.txt":
            assert marker.encode() not in path.read_bytes(), path
    assert len(seen_hostile) == len(seen_plain)
    for a, b in zip(seen_plain, seen_hostile):
        assert _normal(a, plain) == _normal(b, hostile)
    # and the user's settings: `engine install --user` run inside the project
    # wrote the same entries as anywhere else (no timeout, no autocompact from it)
    assert _normal(plain.settings, plain) == _normal(session.settings, hostile)


def test_large_outputs_reach_the_model_as_stubs_and_every_byte_reads_back(tmp_path):
    """One session, with the engine's hooks:
    - a large Bash output reaches the model as the cache's stub, the
      command ran once, and the stub's key gives the whole output back;
    - a whole-file Read of a 54 KB module is denied with how to read it in
      parts (the agent itself would read its 1,200 lines whole), a Read of
      a part passes, and the engine's own denial is no lesson of the tool
      memory;
    - a Read of a 19 KB file (under the denial's threshold) reaches the
      model whole; after `engine purge` of the ended session, its resumed
      session sends the model the purge's stub in its place, and the stub's
      key gives back exactly what the model had read;
    - that resumed session's prompt is the slash command `/pin-last REASON`
      (`engine install` wrote it): the Bash output's entry is pinned."""
    w = _world(tmp_path / "w")
    counter = w.project / "counter.txt"
    big, notes = w.project / "big-3f1a.py", w.project / "notes-8e2c.txt"
    big.write_text("".join(f"line_{i:05d} = {i}  # a line of a large module\n" for i in range(1, 1201)))
    notes.write_text("".join(f"note {i:05d}: the build uses make and pytest\n" for i in range(1, 401)))
    # ~24 KB: over the engine's 2,000-byte threshold, under the size the
    # agent keeps out by itself (<persisted-output>, seen at 38 KB)
    command = f"echo ran >> {counter}; seq 1 5000"
    reads = [tool("Read", file_path=str(big)), tool("Read", file_path=str(big), offset=3, limit=3),
             tool("Read", file_path=str(notes))]
    run = _run(w, "count to 5000", [tool("Bash", command=command, description="count"), *reads, text("Counted.")])
    assert len(run.requests) == 5, str(run)
    env = {**w.env(), "ENGINE_STATE_DIR": str(w.state), "ENGINE_CACHE_DIR": str(w.cache)}
    key = _reads_the_bash_stub(tool_results(run.requests[1])[-1], counter, w, env)
    whole, part = tool_results(run.requests[2])[-1], tool_results(run.requests[3])[-1]
    assert "[CCM] Read not run, this is not an error: " in whole and "offset and limit" in whole, whole
    assert "line_00600" not in whole and "line_00003 = 3" in part and "line_00006" not in part, part
    memory = forkrun.completed(["memory", "list", "--json"], cwd=str(w.project), env=env, timeout=60)
    assert memory.returncode == 0 and "Read not run" not in memory.stdout, memory.stdout
    read = tool_results(run.requests[4])[-1]
    assert "note 00400" in read and "[CCM" not in read, read[:500]
    _purged_then_resumed(w, env, run.session_id, read)
    listed = forkrun.completed(["cache", "list", "--json"], cwd=str(w.project), env=env, timeout=60)
    assert {e["key"]: e["pin"] for e in json.loads(listed.stdout)}[key] == {"level": "soft", "reason": "the count"}, \
        listed.stdout


# Two commands that print data, no error, and exit non-zero: two lessons,
# each with its command (as for the other agents, tests/test_agents_e2e.py).
DATA_ONLY = ["echo 42; exit 1", "date +%s; exit 2"]


def test_a_failure_is_the_next_sessions_lesson_and_the_monitor_warns_from_the_agents_usage(tmp_path):
    """Claude Code's side of what tests/test_agents_e2e.py shows with the
    other agents: every response of the first session reports 750,000
    input tokens (75% of the 1M window of the agent's own model,
    claude-opus-5-5: its model table, claude-code.yaml's
    long_window_models; against 200K it was warned at 140,000), and the
    warning reaches the model
    after the first tool call (the monitor's `to_model`), not before, though
    every call fails (Claude Code reports a command that exits non-zero by
    PostToolUseFailure, never PostToolUse: the built-in profile's
    context_monitor_failures); the five failures are the lessons the
    project's next session reads at its first Bash call (PreToolUse context,
    after the call's result), a Python traceback's by the error it ends
    with, a test run's by the line that names its failed test. A sixth call
    waits for an approval no one gives under -p (an ask rule of the user's:
    Claude Code's own words are its result) and did not run: no lesson
    (claude-code.yaml's failure.not_lessons). A seventh, which a deny rule
    of the user's stops, is one: the rule holds in the next session too."""
    prof = shared_profile(profile_text({"post_tool": [{"name": "context_monitor_tools", "to_model": True}],
                                        "tool_failure": [{"name": "context_monitor_failures", "to_model": True}]},
                                       name="monitor-claude"))
    w = _world(tmp_path / "w", install_args=("--profile", str(prof)))
    (w.project / "setup.py").write_text("def setup(**options):\n    raise TypeError(f'setup() got an unexpected keyword "
                                        "argument {next(iter(options))!r}')\n\n\nsetup(branch_slug='x')\n")
    (w.project / "test_bad.py").write_text("def test_bad():\n    x = {'a': 1}\n    assert x['a'] == 2\n")
    # the plugins this interpreter has would cost the run most of its CPU
    pytest_run = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider test_bad.py"
    commands = ["cat settings-4c1d.conf", "python3 setup.py", pytest_run, *DATA_ONLY, "touch made-here.txt", "rm kept-9e1f.txt"]
    (w.project / "kept-9e1f.txt").write_text("mine\n")
    merge_json(w.home / ".claude" / "settings.json",
               lambda d: d.setdefault("permissions", {}).update(ask=["Bash(touch:*)"], deny=["Bash(rm:*)"]))
    one = _run(w, "go", [*(tool("Bash", command=c, description="run") for c in commands), text("ok")], tokens=750000)
    waited, denied = tool_results(one.requests[len(commands) - 1])[-1], tool_results(one.requests[len(commands)])[-1]
    assert "needs approval" in waited or "haven't granted" in waited, waited
    assert "denied" in denied, denied
    assert not (w.project / "made-here.txt").exists() and (w.project / "kept-9e1f.txt").exists()
    first, later = request_text(one.requests[0]), "".join(map(request_text, one.requests[1:]))
    assert "past 70%" not in first and "TOOL MEMORY" not in first + later
    assert "past 70%" in later and "(750000 of 1000000 tokens" in later, later[-3000:]
    two = _run(w, "again", [tool("Bash", command="echo fine", description="fine"), text("ok")])
    lesson = request_text(two.requests[-1])
    assert "TOOL MEMORY" in lesson and "settings-4c1d.conf" in lesson, lesson[-3000:]
    assert all(command in lesson for command in DATA_ONLY) and " times)" not in lesson, lesson[-3000:]
    assert "TypeError: setup() got an unexpected keyword argument 'branch_slug'" in lesson, lesson[-3000:]
    assert "most recent call last" not in lesson, lesson[-3000:]
    assert "FAILED test_bad.py::test_bad - assert 1 == 2" in lesson, lesson[-3000:]
    assert "made-here.txt" not in lesson, lesson[-3000:]
    # a deny rule of the user's holds in every session: its answer is a lesson, with the command
    assert "Permission to use Bash with command rm kept-9e1f.txt has been denied." in lesson, lesson[-3000:]


def test_a_large_output_of_a_failing_command_is_kept_whole_by_the_wrapper(tmp_path):
    """Claude Code cuts a failed command's output to about 10 KB before its
    hook sees it (PostToolUseFailure, which takes no replacement): the
    middle, where a test run's failures are, would be lost.  `make` (listed
    as large) runs through `engine cache run` (PreToolUse allow with the new
    input, where an allow rule proves it would have run): the model reads the
    stub with make's exit status, the key gives back every line, and the
    tool memory's lesson is make's own error line, read behind the stub.  An
    unlisted command is cut the first time, learned from its failure, and
    kept whole the next; the first time, the model is told how to run it
    again through the cache, and that command keeps it whole."""
    w = _world(tmp_path / "w")
    (w.project / "Makefile").write_text("all:\n\tseq 1 5000; exit 1\n")
    (w.project / "fail.sh").write_text("seq 1 5000\necho 'FAILED 3 of 40 tests' >&2\nexit 1\n")
    script = [tool("Bash", command="make", description="build"), tool("Bash", command="sh fail.sh", description="test"),
              tool("Bash", command="sh fail.sh", description="again"), text("ok")]
    run = _run(w, "build and test", script)
    made, cut, kept = (tool_results(run.requests[i])[-1] for i in (1, 2, 3))
    env = {**w.env(), "ENGINE_STATE_DIR": str(w.state), "ENGINE_CACHE_DIR": str(w.cache)}
    # stdout is cached; a small stderr passes through the wrapper as it was, after the stub
    for result, status, err in ((made, "2", "make: *** [Makefile:2: all] Error 1"), (kept, "1", "FAILED 3 of 40 tests")):
        assert result.startswith(f"Exit code {status}\n[CCM_CACHED]") and len(result) < 2000, result[:500]
        assert f"\nexit: {status}\n" in result and result.endswith(f"[/CCM_CACHED]\n{err}"), result
        key = re.search(r"key: sha256:([0-9a-f]+)", result).group(1)
        shown = forkrun.completed(["cache", "show", key], cwd=str(w.project), env=env, timeout=60)
        assert shown.returncode == 0 and shown.stdout.splitlines()[-5000:] == [str(i) for i in range(1, 5001)], \
            shown.stdout[-300:]
    assert "characters truncated" in cut and "\n2500\n" not in cut, "the agent's own cut, before the engine learned"
    # with the cut, the model is told how to run it again through the cache; that command keeps it whole
    told = request_text(run.requests[2])
    assert "[CCM] The agent cut this output's middle before the content cache saw it." in told, told[-2000:]
    again = subprocess.run(["bash", "-c", re.search(r"run the command again as `([^`]+)`", told).group(1)], cwd=w.project,
                           env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and again.stdout.startswith("[CCM_CACHED]") and "FAILED 3 of 40" in again.stderr, again
    memory = forkrun.completed(["memory", "list", "--json"], cwd=str(w.project), env=env, timeout=60)
    errors = [e["error"] for e in json.loads(memory.stdout)]
    assert "make: *** [Makefile:2: all] Error 1" in errors and not any("CCM" in e for e in errors), errors


def _reads_the_bash_stub(result, counter, w, env):
    assert counter.read_text() == "ran\n", "the command ran exactly once"
    assert "4999\n5000" not in result and len(result) < 2000, result[:500]
    assert "[CCM_CACHED]" in result, result[:2000]
    assert "<persisted-output>" not in result
    # the stub's key prints the whole output back
    key = re.search(r"key: sha256:([0-9a-f]+)", result).group(1)
    shown = forkrun.completed(["cache", "show", key], cwd=str(w.project), env=env, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[-1] == "5000" and len(shown.stdout.splitlines()) == 5000
    return key


def _purged_then_resumed(w, env, session, read):
    """`engine purge SESSION` moves the large Read out of the transcript; the
    agent resumes from the purged file and the model reads the stub (the
    resumed prompt pins the session's last cached output)."""
    purge = forkrun.completed(["purge", session, "--force", "--json"], cwd=str(w.project), env=env, timeout=60)
    assert purge.returncode == 0 and json.loads(purge.stdout)["kinds"]["tool_result"]["count"] >= 1, purge.stdout
    resumed = _run(w, "/pin-last the count", [text("ok")], resume=session)
    stub = tool_results(resumed.requests[0])[-1]
    assert stub.startswith("[CCM_CACHED] output moved out of the transcript by engine purge") and "note 00200" not in \
        request_text(resumed.requests[0]), stub
    key = re.search(r"key: sha256:([0-9a-f]+)", stub).group(1)
    shown = forkrun.completed(["cache", "show", key], cwd=str(w.project), env=env, timeout=60)
    assert shown.returncode == 0 and shown.stdout == read, (shown.stdout[:300], read[:300])


HOOK = r"""
import json, sys
ev = json.load(sys.stdin)
name = ev["hook_event_name"]
with open(sys.argv[1], "a") as fh:
    fh.write(name + "\n")
out = {"hookEventName": name, "additionalContext": "CTX_" + name + "_MARK"}
if name == "PostToolUse":
    out["updatedToolOutput"] = {"stdout": "REPLACED_OUTPUT", "stderr": "", "interrupted": False, "isImage": False}
print(json.dumps({"hookSpecificOutput": out}))
"""


def test_where_hook_answers_land_in_what_the_model_reads(tmp_path):
    """The pinned agent's side of the hook interface, with a stand-in hook (no
    engine): where each event's additionalContext arrives, and that a
    PostToolUse updatedToolOutput replaces a Bash output the model reads."""
    find_claude()
    home, cwd = tmp_path / "home", tmp_path / "project"
    cwd.mkdir(parents=True)
    (home / ".claude").mkdir(parents=True)
    hook, seen = tmp_path / "hook.py", tmp_path / "events.txt"
    hook.write_text(HOOK, encoding="utf-8")
    command = f"{sys.executable} {hook} {seen}"
    events = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse")
    settings = {"hooks": {e: [{"hooks": [{"type": "command", "command": command}]}] for e in events}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    counter = cwd / "counter.txt"
    run = run_agent("go", home, cwd, [tool("Bash", command=f"echo ran >> {counter}; echo original", description="x"),
                                      text("Done.")])
    assert run.returncode == 0, str(run)
    assert seen.read_text().split() == list(events)
    first, after = run.requests
    assert "CTX_SessionStart_MARK" in request_text(first) and "CTX_UserPromptSubmit_MARK" in request_text(first)
    assert [m["role"] for m in first["messages"] if "SessionStart hook additional context: CTX_SessionStart_MARK"
            in json.dumps(m)] == ["system"]
    assert "UserPromptSubmit hook additional context: CTX_UserPromptSubmit_MARK" in request_text(first)
    assert tool_results(after) == ["REPLACED_OUTPUT"]
    assert counter.read_text() == "ran\n", "the command ran, once, as written"
    tail = after["messages"][-1]
    assert tail["role"] == "system" and "PreToolUse:Bash hook additional context: CTX_PreToolUse_MARK" in json.dumps(tail)
    assert "PostToolUse:Bash hook additional context: CTX_PostToolUse_MARK" in json.dumps(tail)


# A rule source of the user's that Claude Code does not read itself (Cursor's rules).
CURSOR_RULES = shared_profile(profile_text({"prompt": [{"name": "rules", "sources": [
    {"agent": "rules"}, CURSOR_SOURCE]}]}, name="cursor-claude"))


def test_a_subagent_on_an_expensive_model_is_flagged_to_the_model(tmp_path):
    """The model asks for a subagent on opus at high effort (the Task tool,
    which Claude Code 2.1.330 reports to PreToolUse as Agent, its input
    taking a model and an effort): the request after it holds the engine's
    effort warning, naming both, after the subagent's answer.  The user's
    profile adds Cursor's rules, which Claude Code does not read: the main
    agent's first request holds the rule (the session's start), and so does
    the subagent's (SubagentStart), quoted as the project's, beside the
    files the agent loads itself."""
    w = _world(tmp_path / "a", install_args=("--profile", str(CURSOR_RULES)))
    (w.project / ".cursor" / "rules").mkdir(parents=True)
    (w.project / ".cursor" / "rules" / "names.mdc").write_text(
        "---\nalwaysApply: true\n---\n# Names\nName every branch CURSOR_SUB_61f0.\n")
    # In the foreground: 2.1.330 runs an agent in the background by default,
    # and its answer then reaches the main model as a notification, racing
    # the scripted replies.
    run = _run(w, "delegate", [tool("Task", description="look around", prompt="Say hi.",
                                    subagent_type="general-purpose", model="opus", effort="high",
                                    run_in_background=False),
                               text("The subagent said hi."), text("Done.")])
    texts = [request_text(r) for r in run.requests]
    main = texts[0]  # the subagent's requests say so in their billing header (not always the second one sent)
    (sub,) = [t for t in texts if "cc_is_subagent=true" in t]
    assert "CURSOR_SUB_61f0" in main and "cc_is_subagent" not in main, main[:3000]
    assert "Say hi." in sub, sub[:3000]
    assert ("SubagentStart hook additional context: [from rules-engine profile cursor-claude, handler "
            "prompt/rules") in sub and "CURSOR_SUB_61f0" in sub, sub[-3000:]
    # the project's rule reaches the model quoted, under a heading that says whose it is
    assert "## names.mdc (the project's rule, quoted)\n~~~\n# Names\n" in sub, sub[-3000:]
    assert "RULE_MARKER_4d1c" in sub and sub.count("RULE_MARKER_4d1c") == 1, "the agent's own rule: its own copy only"
    after = request_text(run.requests[-1])
    assert ("PreToolUse:Agent hook additional context: [from rules-engine profile cursor-claude, handler "
            "pre_tool/subagent_effort: see `engine profile show`]\n[Effort policy: medium] This subagent asks for model "
            "opus, an expensive one and high reasoning effort; under medium effort prefer a cheaper model and medium "
            "reasoning or less unless the task needs deep planning.") in after, after[-3000:]
    assert "[Subagent hand-back]" in after and "  The subagent said hi." in after, after[-1500:]
    assert "This subagent asks" not in request_text(run.requests[0])
