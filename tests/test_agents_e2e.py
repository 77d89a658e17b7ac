"""The engine's hook command inside each real agent, offline: Codex CLI,
Gemini CLI and Copilot CLI run `engine hook --agent NAME` for their events
(the hooks `engine install --agent NAME` wrote), the scripted model asks for
a shell command with a 349 KB output, and the request the model receives
next holds the engine's stub in place of the output (the agent's own cut
would have lost its middle), while `engine cache show KEY` gives every line
back.  The stand-in of each model API, the network namespace and the agents
are those of tests/test_agents_offline.py (tests/support/)."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import forkrun
from hook_fixtures import CURSOR_SOURCE, HookEnv, profile_text, shared_profile, warm_template
from support import gemini_api, responses_api
from support.codex import run_codex, thread_id, trust_hooks
from support.copilot import events_of, run_copilot
from support.gemini import run_gemini
from support.offline import base_env
from support.responses_api import ResponsesAPI
from support.standin import call, custom, say, shell

SEQ = "seq 1 60000"  # 348,894 bytes: every agent cuts it itself
KEY = re.compile(r"sha256:([0-9a-f]{64})")


def _install(agent, home, project, env, profile=None):
    """`engine install --agent NAME` as a user runs it: Codex and Gemini for
    the user, Copilot into the repository (.github/hooks/; its personal
    ~/.copilot/hooks/ runs too, tests/support/AGENTS-MEASURED.md); the hooks
    the agent then runs are the ones written here.  Its
    output, which says what the user still has to do.  Gemini's user
    settings file holds the user's comments first, as Gemini CLI allows
    (install.comments): the hooks it runs are in that file, comments kept."""
    scope = "--project" if agent == "copilot" else "--user"
    if agent == "gemini":
        (home / ".gemini").mkdir(parents=True, exist_ok=True)
        (home / ".gemini" / "settings.json").write_text(GEMINI_COMMENTED)
    args = ["install", "--agent", agent, scope, *(["--profile", str(profile)] if profile else [])]
    rc, out, err = _engine(home, project, env, *args)
    assert rc == 0 and "hooks added for" in out, out + err
    if agent == "gemini":
        assert "// the user's own note" in (home / ".gemini" / "settings.json").read_text()
    return out


GEMINI_COMMENTED = '{\n  // the user\'s own note\n  "ui": {"hideTips": true} /* kept */\n}\n'


# What each install asks of the user, the trust `engine doctor` then reports
# (Codex's once its /hooks dialog has written its hashes: trust_hooks), and
# how the agent is run: Codex checks that trust (bypass_hook_trust=False);
# Copilot runs with COPILOT_ALLOW_ALL=true, which is no trust on record.
TRUST = {"codex": ("open /hooks and trust", "user", "trusted"),
         "gemini": (None, "user", "not needed"),  # the user's own hooks need no trusted folder
         "copilot": ("trusted folder", "project", "untrusted")}
# The built-in profile's SessionStart answer (its effort guidance), which the
# first request holds once the agent ran the engine's hook.
EFFORT = "[Effort policy: medium]"


def _trusted(agent, home, project, env, said):
    """As the user does what the install said; the agent's run options."""
    ask, _, _ = TRUST[agent]
    assert ask is None or ask in said, said
    if agent != "codex":
        return {}
    listed = trust_hooks(home, project)  # what Codex's /hooks dialog writes into config.toml
    # SubagentStart and SessionEnd too; no PreCompact, where nothing acts for Codex
    assert len(listed) == 7 and all("--agent codex" in h["command"] for h in listed), listed
    assert not any("compact" in h["key"].lower() for h in listed), [h["key"] for h in listed]
    return {"bypass_hook_trust": False}


def _doctor_saw_one_session(agent, home, project, env):
    """`engine doctor` reports the hooks trusted as the agent sees them, and
    firing: one session, answered."""
    rc, out, err = _engine(home, project, env, "doctor", "--json", "--agent", agent)
    assert rc == 0, err
    (report,) = json.loads(out)["agents"]
    _, scope, state = TRUST[agent]
    hooks = next(s for s in report["hooks"] if s["scope"] == scope)
    assert hooks["trust"]["state"] == state, hooks
    assert (report["firing"]["sessions"], report["firing"]["answered"]) == (1, 1), report["firing"]


def _world(tmp_path):
    """HOME, a git project and the engine's folders (a warm compiled-profile cache)."""
    warm_template()
    w = HookEnv(tmp_path / "world")
    subprocess.run(["git", "init", "-q", str(w.project)], check=True)
    return w.home, w.project, {"ENGINE_STATE_DIR": str(w.state), "ENGINE_CACHE_DIR": str(w.cache)}


def _cursor_rule(project, mark):
    """The project's one Cursor rule (alwaysApply), naming `mark`: a folder
    none of the agents reads itself, which CURSOR_RULES adds."""
    (project / ".cursor" / "rules").mkdir(parents=True)
    (project / ".cursor" / "rules" / "names.mdc").write_text(
        f"---\nalwaysApply: true\n---\n# Names\nName every branch {mark}.\n")


def _with_cursor_rules(tmp_path, agent, mark, name):
    """_world with a Cursor rule, the engine installed for `agent` with
    CURSOR_RULES and trusted: (home, project, env, the agent's run options)."""
    home, project, env = _world(tmp_path)
    _cursor_rule(project, mark)
    prof = shared_profile(profile_text(CURSOR_RULES, name=name))
    return home, project, env, _trusted(agent, home, project, env, _install(agent, home, project, env, profile=prof))


def _engine(home, project, env, *args):
    """`engine ARGS` as the user runs it beside the agent (forked: tests/forkrun.py)."""
    proc = forkrun.completed(args, cwd=project, env=base_env(home, env), timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


# One session per agent shows three features (real-agent runs are few: each
# costs seconds of CPU), then the project's next session a fourth.
#
# Codex cuts a large output before PostToolUse: the first call of a command
# is cut (and learned as large), the next one runs through the engine's
# wrapper (PreToolUse rewrite, in a session that asks nothing) and is kept
# whole.  Gemini hands the whole output to AfterTool.  Copilot cuts a 349 KB
# output before postToolUse (its own temporary file, over 20 KB): below its
# cut, a 19.4 KB output is the engine's to keep.
RUNS = {"codex": run_codex, "gemini": run_gemini, "copilot": run_copilot}
LARGE = {"codex": ([shell(SEQ), shell(SEQ)], 60000),
         "gemini": ([shell(SEQ + "; exit 3")], 60000),
         "copilot": ([shell("seq 1 4200; exit 3")], 4200)}
# The exit status the large output's stub tells the model: Gemini's and
# Copilot's command failed (their output's text says so); Codex's ran once
# through the engine's wrapper, which saw it end well.
EXIT = {"codex": "0", "gemini": "3", "copilot": "3"}
# Calls the agent refuses to run, each with the words the model reads and
# whether it is a lesson (measured: Copilot CLI 1.0.102 under -p, Codex
# 0.169.0's exec, Gemini CLI 0.61.0). A refusal of how this session asked
# is none: Copilot's of a program named by a path outside the project (no
# one to approve it under -p), Codex's of a call asking for escalated
# permissions. One by a standing rule of the user's is a lesson with its
# command, since the next session is refused the same: Copilot's
# --deny-tool, Gemini's policy. Each would change a file that stays as it was.
REFUSALS = {
    "copilot": [(shell(f"{sys.executable} -c 'open(\"asked.txt\", \"w\")'"), "no interactive user response", False),
                (shell("rm kept-9e1f.txt"), "denied due to the following rules: `shell(rm)`", True)],
    "codex": [(call("exec_command", cmd="touch asked.txt", sandbox_permissions="require_escalated",
                    justification="write a file outside the sandbox"), "you cannot ask for escalated permissions", False)],
    "gemini": [(shell("touch asked.txt"), "Tool execution denied by policy", True)]}
RULES = {"copilot": {"args": ["--deny-tool", "shell(rm)"]}}  # Gemini's: its policy file (below)
# The context monitor's warning, to the model too (to_model): each stand-in
# reports a prompt past 70% of the window the agent works with, and a later
# request holds the warning, read from that agent's own usage records.
MONITOR = {"codex": ("of 258400 tokens", 200000),  # Codex's token_count records its window
           "gemini": ("of 1048576 tokens", 800000),  # Gemini records none: its YAML's
           "copilot": ("of 128000 tokens", 100000)}  # Copilot's usage records' maxPromptTokens
# A file of the project that is not there (exit 1).  Copilot writes its
# events.jsonl on a timer (measured with 1.0.102: within a second), so a
# response's usage is on disk once its first command took that long.
FAILING = "cat settings-4c1d.conf"
FIRST = {"codex": FAILING, "gemini": FAILING, "copilot": f"sleep 1.5; {FAILING}"}
# Two commands that print data, no error, and exit non-zero: two lessons,
# each with its command, never one merged under their numbers.
DATA_ONLY = ["echo 42; exit 1", "date +%s; exit 2"]
# A command that fails with a Python traceback: its lesson is the error the
# traceback ends with, never its heading.
TRACEBACK = ("python3 setup-7d2e.py", "def setup(**options):\n    raise TypeError(f'setup() got an unexpected keyword "
             "argument {next(iter(options))!r}')\n\n\nsetup(branch_slug='x')\n",
             "TypeError: setup() got an unexpected keyword argument 'branch_slug'")
# A test run that fails: its lesson is the line that names the failed test.
TEST_RUN = ("test_bad.py", "def test_bad():\n    x = {'a': 1}\n    assert x['a'] == 2\n",
            "FAILED test_bad.py::test_bad - assert 1 == 2")
# Calls that fail by the agent's own report, not a command's exit status
# (measured): Codex answers a patch that does not apply with its message
# alone and no PostToolUse (the turn's end finds it); Copilot reports a view
# of a missing path by postToolUseFailure.  (script turns, what the next
# session's lesson then says)
PATCH = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: missing-9e2b.txt\n@@\n-a\n+b\n*** End Patch\nEOF"


# A whole-file read of a large file: where the agent reads it whole itself
# (Gemini's read_file: up to 2,000 lines, measured), the engine denies it
# with how to read a part, and a read of a part passes (Copilot refuses a
# whole `view` of 26 KB itself; Codex reads through its shell).
BIG = "big-3f1a.py"


def _reads(agent, project):
    if agent != "gemini":
        return []
    (project / BIG).write_text("".join(f"line_{i:05d} = {i}  # a line of a large module\n" for i in range(1, 1201)))
    return [call("read_file", file_path=str(project / BIG)),
            call("read_file", file_path=str(project / BIG), start_line=3, end_line=5)]


def _read_in_parts(one, at):
    """The whole read (the request `at` follows it) reached the model as the
    engine's reason (how to read a part, in Gemini's words), not the file;
    the part read as asked."""
    whole, part = (json.loads(gemini_api.tool_outputs(one.requests[i])[-1]) for i in (at, at + 1))
    assert whole["error"].startswith("Tool execution blocked: [CCM] Read not run, this is not an error: "), whole
    assert "start_line and end_line" in whole["error"] and "line_00600" not in json.dumps(whole), whole
    assert "line_00003 = 3" in part["output"] and "line_00006" not in part["output"], part


def _failed_calls(agent, project):
    if agent == "codex":
        return [shell(PATCH)], ["apply_patch verification failed", "missing-9e2b.txt"]
    if agent == "copilot":
        return [call("view", path=str(project / "missing-5c1a.txt"))], ["Path does not exist", "missing-5c1a.txt"]
    return [], []


@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(RUNS))
def test_the_model_reads_the_stub_the_warning_and_next_session_the_lesson(tmp_path, agent):
    """In one session, with hooks `engine install --agent NAME` wrote:
    - a large shell output reaches the model as the engine's stub (the
      agent's own cut would have lost its middle), and `engine cache show
      KEY` gives back every line; the model runs the read-back the stub
      names, for 1,000 lines, and reads them (before, a read-back past the
      threshold was cached again: a stub for ever); Copilot's stub names
      the engine as PATH finds it (under -p it refuses a program named by a
      path outside the project: before, it refused the read-back);
    - a tool call warns past 70% (post_tool: Codex's PostToolUse, Gemini's
      AfterTool, Copilot's postToolUse), from the figures the agent recorded
      for the response that asked for it, and with `to_model` a later
      request holds the warning, the first one not;
    - a shell command fails (the agent's exit status in its output), and
      two more that print only data fail too, one with a Python traceback,
      a test run, and one the agent itself
      reports failed (Codex: a patch that does not apply; Copilot: a view
      of a missing path).
    `engine doctor` then reports the hooks trusted as the install said they
    had to be, and firing.  Claude Code's hooks are in the project too:
    Copilot runs them as well, and the engine stays out of that run.  In the project's next session the model reads the remembered error at its
    first shell call (PreToolUse context: Codex as a developer item, Copilot
    after the call's output; Gemini shows no BeforeTool context (measured),
    so the banner waits for that call's AfterTool, inside its function
    response: answers.context.carry_from)."""
    home, project, env = _world(tmp_path)
    window, tokens = MONITOR[agent]
    large, lines = LARGE[agent]
    prof = shared_profile(profile_text({"post_tool": [{"name": "context_monitor_tools", "to_model": True}]},
                                       name=f"monitor-{agent}"))
    options = _trusted(agent, home, project, env, _install(agent, home, project, env, profile=prof))
    # Claude Code's hooks in the project as well, as a user of both agents has them: Copilot runs
    # them too, in Claude Code's words (measured), and the engine stays out of that run
    assert _engine(home, project, env, "install", "--project")[0] == 0
    failing, said = _failed_calls(agent, project)
    reads = _reads(agent, project)
    command, source, error = TRACEBACK
    (project / command.split()[1]).write_text(source)
    (project / TEST_RUN[0]).write_text(TEST_RUN[1])
    # the test run: this interpreter (it has pytest, whose plugins it loads none of: they would cost
    # the run most of its CPU), named in a script of the project's as a project's test script does
    # (measured: Codex's shell finds its own python3 on PATH, and Copilot asks before it runs a
    # program named by a path outside the project, with no one to ask under -p)
    (project / "run-tests.sh").write_text(f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 exec {sys.executable} -m pytest -q "
                                          f"-p no:cacheprovider {TEST_RUN[0]}\n")
    fails = [*map(shell, DATA_ONLY), shell(command), shell("sh run-tests.sh")]
    refused = [turn for turn, _, _ in REFUSALS[agent]]
    (project / "kept-9e1f.txt").write_text("mine\n")
    if agent == "gemini":
        (home / ".gemini" / "policies").mkdir(parents=True)
        (home / ".gemini" / "policies" / "deny.toml").write_text(
            '[[rule]]\ntoolName = "run_shell_command"\ncommandPrefix = "touch"\ndecision = "deny"\npriority = 100\n')
    # the agent-reported failure last: at the turn's end Copilot's transcript does not hold it yet (its timer)
    # the model reads a stub back as it says
    back = [_read_back(agent)]
    if agent == "copilot":  # the engine on PATH, as an install with pipx or an activated venv puts it
        env = dict(env, PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    script = [shell(FIRST[agent]), *fails, *reads, *large, *back, *refused, *failing, say("ok")]
    api = (gemini_api.GeminiAPI if agent == "gemini" else ResponsesAPI)(script, tokens=lambda req: tokens)
    one = RUNS[agent]("go", home, project, None, api=api, env=env, **options, **RULES.get(agent, {}))
    assert one.returncode == 0, str(one)
    sessions = tmp_path / "world" / "state" / "sessions"
    # the session's end reached the engine, which cleared it: all but the marks of the failed calls (their
    # lessons are not counted again if the session is resumed) and the state's own time stamp
    left = {k for p in sessions.glob("*.json") for k in json.loads(p.read_text(encoding="utf-8"))} - {"_touched"}
    assert sessions.is_dir() and left and all(k.startswith("mem:") for k in left), left
    _doctor_saw_one_session(agent, home, project, env)
    if agent == "copilot":  # every hook Copilot ran ended well (its own record of them)
        ended = [r["data"] for r in events_of(one) if r["type"] == "hook.end"]
        assert ended and all(d["success"] for d in ended), ended
        # the failed view reached the engine by the event Copilot has for it (install wrote it)
        assert [d["hookType"] for d in ended].count("postToolUseFailure") == 1, ended
    text = gemini_api.request_text if agent == "gemini" else responses_api.request_text
    stubbed = len(script) - 1 - len(back) - len(failing) - len(refused)  # the request after the last large output
    _reads_the_stub(agent, one.requests[stubbed], home, project, env, lines)
    # the model ran the stub's own read-back (1,000 lines, past the threshold): it reads them, no second stub
    if agent == "copilot":  # by name: Copilot runs it (by path, it refused it under -p)
        assert "To read it: `engine cache show " in _last_output(agent, one.requests[stubbed])
    if back:
        read = _last_output(agent, one.requests[stubbed + 1])
        assert "[CCM_CACHED]" not in read and "\n999\n" in read and "\n1001\n" not in read, read[:2000]
    if reads:  # after the first command and the other failing ones
        _read_in_parts(one, 1 + len(fails) + 1)
    if agent == "codex":  # its own cut of the first large output: the model is told how to read all of it
        cut = text(one.requests[1 + len(fails) + 1])
        assert "[CCM] The agent cut this output's middle before the content cache saw it." in cut, cut[-2000:]
    first = text(one.api.log[0].body)
    assert EFFORT in first, "SessionStart reached the engine, and its answer the model"
    assert "ultrathink" not in first, "Claude Code's word for its deepest reasoning is no word of this agent's"
    later = "".join(text(r.body) for r in one.api.log[1:] if isinstance(r.body, dict))
    assert "past 70%" not in first
    assert "past 70%" in later and window in later, later[-3000:]
    assert "TOOL MEMORY" not in first + later, "nothing remembered before the failure"

    again = [call("view", path=str(project))] if agent == "copilot" else []  # the lesson comes before that tool's first use
    two = RUNS[agent]("again", home, project, [shell("echo fine"), *again, say("ok")], env=env, **options)
    assert two.returncode == 0, str(two)
    lesson = text(two.api.log[-1].body)
    assert "TOOL MEMORY" in lesson and "settings-4c1d.conf" in lesson, lesson[-3000:]
    assert " times)" not in lesson, "one failure, remembered once (Gemini and Copilot name no call in its report)"
    assert "Read not run" not in lesson, "the engine's own denial of a whole-file read is no lesson"
    assert all(command in lesson for command in DATA_ONLY), "each data-only failure is its own lesson, with its command"
    assert error in lesson and "most recent call last" not in lesson, ("a traceback's lesson is its error", lesson[-3000:])
    assert TEST_RUN[2] in lesson, ("a test run's lesson is its failed test", lesson[-3000:])
    assert not (project / "asked.txt").exists() and (project / "kept-9e1f.txt").exists()
    after = len(script) - len(failing) - len(refused)  # the request after the first refused call
    for i, (turn, answer, standing) in enumerate(REFUSALS[agent]):
        assert answer in text(one.requests[after + i]), text(one.requests[after + i])[-2000:]
        if standing:
            assert answer in lesson and turn.command in lesson, lesson[-3000:]
        else:
            assert answer not in lesson, ("a call the agent did not run as asked is no lesson", lesson[-3000:])
    assert all(words in lesson for words in said), ("a call the agent reported failed is a lesson too", lesson[-3000:])
    log = tmp_path / "world" / "state" / "hook.log"
    logged = log.read_text() if log.exists() else ""
    assert "internal error" not in logged and "deadline" not in logged, logged
    stayed_out = logged.count("runs this claude-code hook; nothing to do")
    assert (stayed_out > 0) is (agent == "copilot"), ("only Copilot runs Claude Code's hooks", logged[-3000:])


def _last_output(agent, body):
    """The last tool output a request holds, as the model reads it."""
    if agent == "gemini":
        return json.loads(gemini_api.tool_outputs(body)[-1])["output"]
    return responses_api.tool_outputs(body)[-1]


def _read_back(agent):
    """The model's next turn after a stub: the read-back the stub tells it
    to run, for 1,000 lines (any range, it says), which print more than the
    threshold of a large output."""
    def turn(body):
        told = re.search(r"To read it: `([^`]+) --lines 1:200`", _last_output(agent, body))
        assert told, _last_output(agent, body)[:2000]
        return shell(f"{told.group(1)} --lines 1:1000")
    return turn


def _reads_the_stub(agent, last, home, project, env, lines):
    """The last large output as the model read it (in the request `last`) is
    the stub, and its key gives every line back through the command the user
    has."""
    if agent == "gemini":
        seen = json.loads(gemini_api.tool_outputs(last)[-1])["output"]
    else:
        seen = responses_api.tool_outputs(last)[-1]
    assert "[CCM_CACHED]" in seen and len(seen) < 2000, seen[:3000]
    assert f"\nexit: {EXIT[agent]}\n" in seen, seen
    assert f"\n{lines // 2}\n" not in seen, "the model reads the stub, not the output"
    key = KEY.search(seen).group(1)
    rc, out, err = _engine(home, project, env, "cache", "show", key)
    assert rc == 0, err
    numbers = re.findall(r"^(?:Output: )?(\d+)$", out, re.M)  # Gemini's output starts "Output: "
    assert numbers == [str(i) for i in range(1, lines + 1)], "every line of the output reads back, the middle too"


@pytest.mark.slow
def test_codex_gets_a_rule_it_lost_in_its_compaction_back_once(tmp_path):
    """A rule only the engine delivers (a folder of the user's own, not one
    Codex reads) goes in at the session's start; Codex compacts mid-turn
    (model_auto_compact_token_limit, answers reporting more), after which the
    hooks' earlier context is gone: SessionStart(compact) brings the rule
    back (without the engine's after_compaction handler it is not there at
    all), and the request after the compaction holds it exactly once.
    So does svc/AGENTS.md, which the engine gave before the first call, a
    patch under svc/ (Codex never loads a folder's below its own).
    The project's AGENTS.md is 40 KB: Codex reads only its first 32 KiB
    (project_doc_max_bytes), so the engine does not count it as in view and
    names it at the start and again after the compaction (it is too large
    for the budget)."""
    home, project, env = _world(tmp_path)
    rules = project / "docs" / "rules"
    rules.mkdir(parents=True)
    (rules / "naming.md").write_text("# Naming\nName each migration after the table it changes (LOST_7f3d).\n")
    body = "".join(f"- Step {i:04d}: keep the migration reversible.\n" for i in range(900))  # 40 KB
    (project / "AGENTS.md").write_text(f"# Team (AGM_HEAD_1c9e)\n{body}Tag every release (AGM_TAIL_2d8f).\n")
    (project / "svc").mkdir()
    (project / "svc" / "AGENTS.md").write_text("# Services\nNever log a token (BELOW_3e4f).\n")
    prof = shared_profile(profile_text({"prompt": [
        {"name": "rules", "sources": [{"dir": "{project}/docs/rules", "glob": "*.md"}, {"agent": "below"}]}]}, name="lost"))
    served = []

    def tokens(req):  # over the limit from the second answer on
        served.append(req)
        return 1000 if len(served) < 2 else 1600
    patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: svc/a.py\n+x = 1\n*** End Patch\nEOF"
    api = ResponsesAPI([shell(patch), shell("echo two"), say("done")], tokens=tokens)
    _install("codex", home, project, env, profile=prof)
    run = run_codex("go", home, project, None, api=api, env=env, config="model_auto_compact_token_limit = 1500")
    assert run.returncode == 0, str(run)
    kinds = [r.kind for r in run.api.log]
    assert "summary" in kinds, kinds
    first = responses_api.request_text(run.api.log[0].body)
    assert first.count("LOST_7f3d") == 1, "delivered at the start"
    # Codex cut its own copy of the 40 KB AGENTS.md at 32 KiB (unannounced):
    # the engine, knowing the file is not wholly in view, names it.
    assert "AGM_HEAD_1c9e" in first and "AGM_TAIL_2d8f" not in first, "Codex's own cut"
    assert first.count("[File not injected — size limit reached: Team (AGM_HEAD_1c9e). Read AGENTS.md]") == 1, \
        first[-3000:]
    after = responses_api.request_text(run.api.log[kinds.index("summary") + 1].body)
    assert after.count("LOST_7f3d") == 1, after[-3000:]
    # the compaction took what SessionStart(startup) added: the effort policy comes back with SessionStart(compact)
    assert first.count("[Effort policy: medium]") == 1 and after.count("[Effort policy: medium]") == 1, after[-3000:]
    # the nested AGENTS.md the engine gave before the patch under svc/ comes back once too
    assert "BELOW_3e4f" not in first and after.count("BELOW_3e4f") == 1, after[-3000:]
    # Codex reloaded the cut file's start only: the engine names it again, once.
    assert "AGM_TAIL_2d8f" not in after, "Codex's own cut, again"
    assert after.count("[File not injected — size limit reached: Team (AGM_HEAD_1c9e). Read AGENTS.md]") == 1, \
        after[-3000:]


@pytest.mark.slow
def test_codex_gets_a_nested_agents_md_below_its_folder_before_its_first_patch_there(tmp_path):
    """Codex loads AGENTS.md from the root down to its working folder, never
    one below (measured); its model is told to look for those itself.  Its
    patch through the shell that adds svc/api/a.py brings svc/AGENTS.md
    (PreToolUse context, before the patch runs), and the request after it
    holds that file once, named by its folder and quoted as the project's;
    the next patch there brings
    no second copy; the root's, which Codex loaded, is there once."""
    home, project, env = _world(tmp_path)
    (project / "AGENTS.md").write_text("# Team\nRun the tests (ROOT_0a1b).\n")
    (project / "svc" / "api").mkdir(parents=True)
    (project / "svc" / "AGENTS.md").write_text("# Services\nNever log a token (SVC_2c3d).\n")
    options = _trusted("codex", home, project, env, _install("codex", home, project, env))
    patch = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: svc/api/{}.py\n+x = 1\n*** End Patch\nEOF"
    api = ResponsesAPI([shell(patch.format("a")), shell(patch.format("b")), say("ok")])
    run = run_codex("go", home, project, None, api=api, env=env, **options)
    assert run.returncode == 0, str(run)
    assert (project / "svc" / "api" / "a.py").is_file() and (project / "svc" / "api" / "b.py").is_file()
    first, after, last = map(responses_api.request_text, run.requests[:3])
    assert "SVC_2c3d" not in first and first.count("ROOT_0a1b") == 1
    assert after.count("SVC_2c3d") == 1, after[-3000:]
    assert "## svc/AGENTS.md (the project's rule, quoted)\n~~~\n# Services\n" in after, after[-3000:]
    assert last.count("SVC_2c3d") == 1 and last.count("ROOT_0a1b") == 1, last[-3000:]


# A model catalog naming the test model as one with Codex's freeform
# apply_patch tool: one entry of the catalog Codex 0.169.0 carries in its
# binary (its `gpt-5.5`, renamed, its long texts cut), so that Codex offers
# the tool it offers OpenAI's models; offline it offers none otherwise.
CATALOG = Path(__file__).parent / "support" / "codex_catalog.json"


@pytest.mark.slow
def test_codex_own_patch_tool_gets_the_nested_agents_md_and_a_patch_that_fails_is_a_lesson(tmp_path):
    """With its apply_patch tool (measured: PreToolUse `apply_patch`
    {command: the patch}; PostToolUse only for a patch that applies; the
    transcript a custom_tool_call {input}), a patch adding svc/api/a.py
    gets svc/AGENTS.md first, once, named by its folder; a patch of a file
    that is not there is remembered at the turn's end, and the project's
    next session reads it as a lesson at its first patch."""
    home, project, env = _world(tmp_path)
    (project / "svc" / "api").mkdir(parents=True)
    (project / "svc" / "AGENTS.md").write_text("# Services\nNever log a token (SVC_5a6b).\n")
    options = _trusted("codex", home, project, env, _install("codex", home, project, env))
    config = f'model_catalog_json = "{CATALOG}"'
    add = "*** Begin Patch\n*** Add File: svc/api/a.py\n+x = 1\n*** End Patch\n"
    bad = "*** Begin Patch\n*** Update File: svc/gone-7c8d.py\n@@\n-a\n+b\n*** End Patch\n"
    api = ResponsesAPI([custom("apply_patch", add), custom("apply_patch", bad), say("ok")])
    one = run_codex("go", home, project, None, api=api, env=env, config=config, **options)
    assert one.returncode == 0, str(one)
    assert "apply_patch" in responses_api.tool_names(one.requests[0]), "Codex offers its patch tool"
    assert (project / "svc" / "api" / "a.py").is_file()
    first, after = map(responses_api.request_text, one.requests[:2])
    assert "SVC_5a6b" not in first and after.count("SVC_5a6b") == 1 and "## svc/AGENTS.md" in after, after[-3000:]
    assert responses_api.request_text(one.requests[2]).count("SVC_5a6b") == 1
    ok = custom("apply_patch", "*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n")
    two = run_codex("again", home, project, [ok, say("ok")], env=env, config=config, **options)
    lesson = responses_api.request_text(two.requests[-1])
    assert "TOOL MEMORY" in lesson and "apply_patch verification failed" in lesson and "gone-7c8d.py" in lesson, \
        lesson[-3000:]


@pytest.mark.slow
def test_copilot_gets_a_scoped_instruction_before_its_first_write_and_nothing_it_has(tmp_path):
    """Copilot loads `.github/instructions` files lazily, on a `view` of a
    matching file, never on a `create` (measured): the engine gives the
    scoped file before the session's first tool call creates a file it
    covers, even with Copilot's transcript not on disk yet, and never a
    second copy of copilot-instructions.md, which Copilot loaded itself.
    A rule folder of the user's own goes in once at the start, though the
    profile refreshes rules at every prompt and Copilot starts
    userPromptSubmitted while sessionStart still runs (both delivered it).
    The scoped file goes in once: a second write under web/ does not bring
    it again, though Copilot's transcript does not show what preToolUse
    added (`transcript.unwitnessed` of its YAML)."""
    home, project, env = _world(tmp_path)
    (project / ".github" / "instructions").mkdir(parents=True)
    (project / ".github" / "copilot-instructions.md").write_text("Keep answers short (UNSCOPED_77aa).\n")
    (project / ".github" / "instructions" / "web.instructions.md").write_text(
        '---\napplyTo: "web/**"\n---\nType every export (WEB_SCOPED_88bb).\n')
    (project / "myrules").mkdir()
    (project / "myrules" / "own.md").write_text("# Own\nName every branch after its issue (OWN_RULE_99cc).\n")
    every_prompt = profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1, "sources": [
        {"agent": "rules"}, {"dir": "{project}/myrules", "glob": "*.md"}]}]})
    _install("copilot", home, project, env, profile=shared_profile(every_prompt))
    created = call("create", path=str(project / "web" / "app.ts"), file_text="export const a = 1\n")
    again = call("create", path=str(project / "web" / "b.ts"), file_text="export const b = 2\n")
    run = run_copilot("go", home, project, None, api=ResponsesAPI([created, again, say("ok")]), env=env)
    assert run.returncode == 0, str(run)
    first, last = (responses_api.request_text(r.body) for r in (run.api.log[0], run.api.log[-1]))
    assert first.count("UNSCOPED_77aa") == 1 and "WEB_SCOPED_88bb" not in first
    assert first.count("OWN_RULE_99cc") == 1, first[-3000:]
    assert last.count("WEB_SCOPED_88bb") == 1 and last.count("UNSCOPED_77aa") == 1, last[-3000:]


@pytest.mark.skipif(not os.environ.get("ENGINE_TEST_AGENT_FACTS"),
                    reason="a 30 s run of the real Copilot CLI, opt-in (ENGINE_TEST_AGENT_FACTS=1): "
                           "tests/test_in_view_identity.py checks the same on its recorded session")
@pytest.mark.slow
def test_copilot_keeps_a_scoped_instruction_given_during_a_background_compaction_and_the_engine_knows(tmp_path):
    """Copilot compacts in the background and keeps what the turn adds
    meanwhile behind the summary (tests/support/AGENTS-MEASURED.md, "After
    a compaction"); its preToolUse context is in no record of its
    transcript.  The scoped file given before a `create` made while the
    compaction runs is in the first request with the summary, and the next
    `create` under it, after the compaction, brings no second copy.  Each
    answer takes 1.2 s, as a model's does: Copilot writes its events on a
    timer, and the engine reads the compaction's start there."""
    home, project, env = _world(tmp_path)
    (project / ".github" / "instructions").mkdir(parents=True)
    (project / ".github" / "instructions" / "web.instructions.md").write_text(
        '---\napplyTo: "web/**"\n---\nType every export (WEB_SCOPED_88bb).\n')
    (project / "web").mkdir()
    _install("copilot", home, project, env)
    served = []

    def tokens(req):  # 85% of the limit from the second answer on: it compacts in the background
        served.append(req)
        time.sleep(1.2)
        return 1000 if len(served) < 2 else 17000

    steps = [shell("echo step-1"), shell("echo step-2"),
             call("create", path=str(project / "web" / "a.ts"), file_text="export const a = 1\n"),
             shell("echo step-4"), shell("echo step-5"), shell("echo step-6"),
             call("create", path=str(project / "web" / "b.ts"), file_text="export const b = 2\n"), say("done")]
    api = ResponsesAPI(steps, tokens=tokens, summary_after=3)
    run = run_copilot("go", home, project, None, api=api, env={**env, "COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "20000"},
                      timeout=120)
    assert run.returncode == 0, str(run)
    log = run.api.log
    kinds = [r.kind for r in log]
    texts = [responses_api.request_text(r.body) for r in log]
    summary = kinds.index("summary")
    after = next(i for i in range(summary + 1, len(log)) if "<summary>" in texts[i])
    given = next(i for i, t in enumerate(texts) if "WEB_SCOPED_88bb" in t)
    assert summary - 1 <= given < after, (kinds, given, after)  # given while it compacted
    assert "WEB_SCOPED_88bb" not in texts[summary], "not in the history the summary was asked of"
    assert [t.count("WEB_SCOPED_88bb") for t in texts[after:]] == [1] * (len(log) - after), kinds


@pytest.mark.slow
def test_copilot_gets_back_a_rule_its_compaction_took_though_it_sends_no_start_after_it(tmp_path):
    """Copilot compacts beside the turn and sends no session start after
    it; the sessionStart context its summary replaced is gone from the
    model's requests, and what the turn added while the summary was made is
    kept after it.  With the user's profile adding Cursor's rules (a folder
    Copilot does not read), the rule is in every request before the
    compaction begins; at its preCompact the engine makes the next
    postToolUse give it again, so the requests until the summary hold it
    twice, and the first request with the summary, and every later one,
    once.  (Before preCompact was used, the first request with the summary
    lacked it; before the engine read the shrink as a compaction, every
    later one did too.)"""
    home, project, env = _world(tmp_path)
    _cursor_rule(project, "CURSOR_COMPACT_3a")
    _install("copilot", home, project, env, profile=shared_profile(profile_text(CURSOR_RULES, name="compact-copilot")))
    served = []

    def tokens(req):  # 85% of the limit from the second answer on, then a compacted context
        served.append(req)
        time.sleep(1.2)  # a model's time: Copilot writes its events on a timer
        return 1000 if len(served) < 2 else (17000 if len(served) < 6 else 3000 + 100 * len(served))
    api = ResponsesAPI([shell(f"echo step-{i}") for i in range(1, 9)] + [say("done")], tokens=tokens, summary_after=2)
    run = run_copilot("go", home, project, None, api=api, env={**env, "COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "20000"},
                      timeout=120)
    assert run.returncode == 0, str(run)
    texts = [responses_api.request_text(r.body) for r in run.api.log]
    after = next(i for i, t in enumerate(texts) if "<summary>" in t)
    counts = [t.count("CURSOR_COMPACT_3a") for t in texts]
    seen = [(r.kind, c) for r, c in zip(run.api.log, counts)]
    again = counts.index(2) if 2 in counts[:after] else after
    assert 0 < again and counts[:again] == [1] * again and counts[again:after] == [2] * (after - again), seen
    assert counts[after:] == [1] * (len(texts) - after), seen
    # the effort policy the session's start gave comes back the same way
    assert [t.count("[Effort policy: medium]") for t in texts] == counts, seen


# A subagent asking for an expensive model (measured: Copilot CLI 1.0.102's
# task runs it on the model given, Codex 0.169.0's spawn_agent refuses one
# its catalog does not list after PreToolUse): the model Codex is given,
# which the built-in profile does not name expensive (it names Claude's
# opus), is named so in the session's profile.
# The warning each model reads: Codex's call asks for more reasoning than
# the profile's medium effort too.
# Copilot's session adds Cursor's rules to the user's rule sources: a
# folder Copilot does not read itself.
CURSOR_RULES = {"prompt": [{"name": "rules", "sources": [
    {"agent": "rules"}, CURSOR_SOURCE]}]}
SUBAGENT = {"copilot": (call("task", name="probe", prompt="Check the settings.", agent_type="general-purpose",
                             description="check settings", model="claude-opus-4.5", mode="sync"), CURSOR_RULES,
                        "[Effort policy: medium] This subagent asks for model claude-opus-4.5, an expensive one; "
                        "under medium effort prefer a cheaper model unless the task needs deep planning."),
            "codex": (call("spawn_agent", message="Check the settings.", model="gpt-5-pro", reasoning_effort="high"),
                      {"pre_tool": [{"name": "subagent_effort", "expensive_models": ["opus", "gpt-5-pro"]}]},
                      "[Effort policy: medium] This subagent asks for model gpt-5-pro, an expensive one and high "
                      "reasoning effort; under medium effort prefer a cheaper model and medium reasoning or less "
                      "unless the task needs deep planning.")}


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["copilot", "gemini"])
def test_a_resumed_session_gets_back_the_rules_the_agent_left_out(tmp_path, agent):
    """Gemini CLI 0.61.0 and Copilot CLI 1.0.102 resume a session without
    what hooks added at its start (tests/test_agents_offline.py
    `test_fact_*_resumed_*`; their YAML's transcript.resumed), so a rule
    the engine gave then is gone from the model's requests.  With the
    user's profile adding Cursor's rules (a folder neither agent reads),
    every request of the first run holds the rule once, and so does every
    request of the resumed run: the engine gives it again at the resume's
    start, and not a second time at its next prompt's tool call."""
    home, project, env, options = _with_cursor_rules(tmp_path, agent, "CURSOR_RESUMED_5e", f"resume-{agent}")
    first_script, next_script = [shell("echo a"), say("one")], [shell("echo b"), say("two")]
    if agent == "copilot":
        first = run_copilot("go", home, project, None, api=ResponsesAPI(first_script), env=env, **options)
        (session,) = [d for d in (home / ".copilot" / "session-state").iterdir() if (d / "events.jsonl").is_file()]
        again = run_copilot("next", home, project, None, api=ResponsesAPI(next_script, numbered_from=10), env=env,
                            args=(f"--resume={session.name}",), **options)
        text = responses_api.request_text
    else:
        first = run_gemini("go", home, project, first_script, env=env, **options)
        again = run_gemini("next", home, project, next_script, env=env, args=("--resume", "latest"), **options)
        text = gemini_api.request_text
    assert first.returncode == 0 and again.returncode == 0, str(first) + str(again)
    assert [text(r).count("CURSOR_RESUMED_5e") for r in first.requests] == [1, 1]
    assert [text(r).count("CURSOR_RESUMED_5e") for r in again.requests] == [1, 1], text(again.requests[0])[-3000:]
    assert [text(r).count(EFFORT) for r in first.requests + again.requests] == [1, 1, 1, 1], "its start's guidance too"


@pytest.mark.slow
def test_a_resumed_codex_session_is_given_nothing_again(tmp_path):
    """`codex exec resume` (Codex 0.171.0) keeps what hooks added, once, and
    sends SessionStart (source resume): the engine gives nothing of it
    again, neither the rule only it delivers nor the effort guidance (before:
    every resumed request held the guidance twice)."""
    home, project, env, options = _with_cursor_rules(tmp_path, "codex", "CURSOR_RES_c0", "resume-codex")
    first = run_codex("go", home, project, None, api=ResponsesAPI([shell("echo a"), say("one")]), env=env, **options)
    again = run_codex("next", home, project, None, api=ResponsesAPI([shell("echo b"), say("two")]), env=env,
                      resume=thread_id(first), **options)
    assert first.returncode == 0 and again.returncode == 0, str(first) + str(again)
    text = responses_api.request_text
    for mark in ("CURSOR_RES_c0", EFFORT):
        assert [text(r).count(mark) for r in first.requests + again.requests] == [1, 1, 1, 1], (mark, text(again.requests[0])[-3000:])


@pytest.mark.slow
@pytest.mark.parametrize("agent, kept", [("copilot", 1), ("gemini", 2)])
def test_a_rule_the_resumed_run_still_holds_is_not_given_again(tmp_path, agent, kept):
    """What the resumed run of Copilot CLI 1.0.102 and Gemini CLI 0.61.0
    still holds of what hooks added (their YAML's transcript.resumed:
    Copilot's postToolUse context once, Gemini's AfterTool context twice,
    with its tool result) is still in view there.  The first run's context
    grows past the growth cadence (40,000 tokens) during the prompt, so a
    tool result brings the user's Cursor rule a second time; the resumed run
    has left out the copy of the session's start and holds that one: every
    resumed request holds the rule `kept` times, as the agent kept it, and
    the engine does not add it again (before, it gave it again at the
    resume's start: one more in each)."""
    home, project, env, options = _with_cursor_rules(tmp_path, agent, "CURSOR_KEPT_7d", f"kept-{agent}")
    served = []

    def tokens(req):  # a small context for the first answer, then past the cadence, and no shrink after
        served.append(req)
        if agent == "copilot":
            time.sleep(1.2)  # a model's time: Copilot writes its events on a timer
        return 1000 if len(served) < 2 else 50000 + 100 * len(served)
    first_script = [shell("echo a"), shell("echo b"), shell("echo c"), say("one")]
    next_script = [shell("echo d"), say("two")]
    if agent == "copilot":
        first = run_copilot("go", home, project, None, api=ResponsesAPI(first_script, tokens=tokens), env=env,
                            timeout=120, **options)
        (session,) = [d for d in (home / ".copilot" / "session-state").iterdir() if (d / "events.jsonl").is_file()]
        again = run_copilot("next", home, project, None, env=env, args=(f"--resume={session.name}",), timeout=120,
                            api=ResponsesAPI(next_script, numbered_from=10, tokens=tokens), **options)
        text = responses_api.request_text
    else:
        first = run_gemini("go", home, project, None, env=env, api=gemini_api.GeminiAPI(first_script, tokens=tokens), **options)
        again = run_gemini("next", home, project, None, env=env, args=("--resume", "latest"),
                           api=gemini_api.GeminiAPI(next_script, tokens=tokens), **options)
        text = gemini_api.request_text
    assert first.returncode == 0 and again.returncode == 0, str(first) + str(again)
    counts = [text(r).count("CURSOR_KEPT_7d") for r in first.requests]
    assert counts[0] == 1 and counts[-1] == 2 and sorted(counts) == counts, counts
    assert [text(r).count("CURSOR_KEPT_7d") for r in again.requests] == [kept, kept], text(again.requests[0])[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(SUBAGENT))
def test_a_subagent_on_an_expensive_model_is_flagged_to_the_model_and_its_records_stay_its_own(tmp_path, agent):
    """With the hooks `engine install --agent NAME` wrote, the model asks
    for a subagent on an expensive model: the request after that call holds
    the engine's effort warning, naming the model (and, for Codex, the
    reasoning effort it asks above the profile's).  Copilot's subagent runs
    (on claude-opus-4.5), fails a command and reports a context of 110,000
    tokens of 128,000: the failure is remembered once, and the session's
    context is its main agent's (the session report's peak is the main
    model's 3,000 tokens, the subagent's figures are its own), with no state
    kept under the subagent's id.  Its user's profile adds Cursor's rules,
    which Copilot does not read: the rule is in the main agent's first
    request (sessionStart) and in the subagent's (subagentStart)."""
    home, project, env = _world(tmp_path)
    _cursor_rule(project, "CURSOR_SUB_61f0")
    turn, profile, warning = SUBAGENT[agent]
    prof = shared_profile(profile_text(profile, name=f"subagent-{agent}")) if profile else None
    options = _trusted(agent, home, project, env, _install(agent, home, project, env, profile=prof))
    inside = [shell("cat settings-4c1d.conf"), say("The settings file is missing.")] if agent == "copilot" else []
    script = [turn, *inside, say("ok")]
    subagent_model = turn.args["model"]

    def tokens(req):  # the subagent's requests report a nearly full context, the main agent's little
        return 110000 if req.body.get("model") == subagent_model else 3000
    api = ResponsesAPI(script, tokens=tokens)
    run = RUNS[agent]("go", home, project, None, api=api, env=env, **options)
    assert run.returncode == 0, str(run)
    after = responses_api.request_text(run.requests[-1])
    assert warning in after, after[-3000:]
    if agent != "copilot":
        return
    assert [r.get("model") for r in run.requests].count(subagent_model) == 2, "the subagent ran on the model it asked for"
    first_sub = next(r for r in run.requests if r.get("model") == subagent_model)
    sub_text, main_text = responses_api.request_text(first_sub), responses_api.request_text(run.requests[0])
    assert "CURSOR_SUB_61f0" in main_text and "Check the settings." not in main_text, main_text[-3000:]
    assert "CURSOR_SUB_61f0" in sub_text and "Check the settings." in sub_text, sub_text[-3000:]
    rc, out, err = _engine(home, project, env, "memory", "list", "--json")
    assert rc == 0, err
    assert [(e["input"], e["count"]) for e in json.loads(out)] == [("cat settings-4c1d.conf", 1)], out
    (events,) = (home / ".copilot" / "session-state").glob("*/events.jsonl")
    rc, out, err = _engine(home, project, env, "session", "report", str(events), "--agent", "copilot", "--json")
    assert rc == 0, err
    report = json.loads(out)
    assert report["peak"]["tokens"] == 3000 and {p["tokens"] for p in report["fill"]} == {3000}, report["fill"]
    kept = [p.stem for p in (tmp_path / "world" / "state" / "sessions").glob("*.json")]
    assert kept and all(events.parent.name in name for name in kept), ("no state under the subagent's id", kept)


def _codex_delegates(ask, command):
    """A turn for any request of a Codex session that starts a subagent
    with `ask`, waits for it, and ends; the subagent runs `command` and
    ends.  Decided by the request (Codex runs the subagent beside the main
    agent: their requests come in either order)."""
    def turn(body):
        outputs = [i.get("output") for i in body.get("input") or () if i.get("type") == "function_call_output"]
        if ask in responses_api.last_user_text(body):  # the subagent's
            return shell(command) if not outputs else say("The subagent ran it.")
        if not outputs:
            return call("spawn_agent", message=ask)
        if len(outputs) == 1:
            found = re.search(r'"agent_id"\s*:\s*"([^"]+)"', str(outputs[0]))
            return call("wait_agent", targets=[found.group(1)], timeout_ms=30000)
        return say("All done.")
    return turn


@pytest.mark.slow
def test_a_codex_subagent_gets_the_rules_it_lacks_at_its_start(tmp_path):
    """Codex 0.171.0 sends SubagentStart when a subagent starts (before,
    the engine waited for the subagent's first tool call), and its subagent
    loads its AGENTS.md files itself.  With the user's profile adding
    Cursor's rules, the subagent's first request holds them (SubagentStart),
    and its request after its first shell call still once; the main agent
    had them at the session's start.  The subagent's command fails: it is
    remembered from the subagent's own rollout, which the start names (its
    PostToolUse shows no exit status, the session's rollout holds no such
    call)."""
    home, project, env, options = _with_cursor_rules(tmp_path, "codex", "CURSOR_CODEX_4b", "cursor-codex")
    (project / "AGENTS.md").write_text("Run the linter first (CODEX_OWN_2c).\n")
    ask = "Check the settings file."
    api = ResponsesAPI([_codex_delegates(ask, "echo sub-ran-5f; exit 3")] * 8)
    run = run_codex("go", home, project, None, api=api, env=env, **options)
    assert run.returncode == 0, str(run)
    texts = [responses_api.request_text(r) for r in run.requests]
    sub = [t for t, r in zip(texts, run.requests) if ask in responses_api.last_user_text(r)]
    main = [t for t, r in zip(texts, run.requests) if ask not in responses_api.last_user_text(r)]
    assert len(sub) == 2 and "sub-ran-5f" in sub[1], [t[-500:] for t in sub]
    assert sub[0].count("CURSOR_CODEX_4b") == 1 and sub[0].count("CODEX_OWN_2c") == 1, sub[0][-3000:]
    assert sub[1].count("CURSOR_CODEX_4b") == 1, sub[1][-3000:]
    assert "CURSOR_CODEX_4b" in main[0] and "All done." not in main[0]
    rc, out, err = _engine(home, project, env, "memory", "list", "--json")
    assert rc == 0, err
    assert [(e["input"], e["error"], e["count"]) for e in json.loads(out)] == [("echo sub-ran-5f; exit 3", "sub-ran-5f", 1)], out


@pytest.mark.slow
def test_gemini_interactive_every_request_after_its_compressions_holds_the_rule_once(tmp_path):
    """Gemini CLI 0.61.0 compresses before a main-loop request whose last
    response passed the threshold, at a prompt's start (after its
    BeforeAgent) or before the request that sends a tool's result, keeps
    the newest turns after its summary, and tells no hook: driven in a tmux
    pane (tests/support/interactive_compress.py: four prompts, a Cursor
    rule the session's start gave; a compression of all of the history
    before the second prompt, one inside it that keeps the turn whose first
    result holds the rule again, one inside the third that keeps a turn
    without it), every main-loop request holds the rule once.  Before: the
    first request after a compression held it 0 times (now its BeforeModel:
    answers.request_context of gemini.yaml); the engine read a kept turn as
    gone and gave the rule again (2 in each request after the second); and
    it saw no shrink where the context rose past what it last recorded
    between two checks, so after the third it gave the rule no more (0).
    Replay, on the same chat file, finds what each compression kept."""
    import shutil

    from support import interactive_compress as ic
    from support.gemini_api import request_text
    from support.offline import missing

    if not shutil.which("tmux"):
        missing("no tmux: .ci/run installs it")
    out = tmp_path / "w"
    home, proj, engine = ic.world(out)
    api = ic.stand_in()
    ic.drive(home, proj, engine, api, out, 0.02)
    log = [(r.kind, request_text(r.body)) for r in api.log if r.kind in ("main", "summary")]
    kinds = [k for k, _ in log]
    assert kinds == (["main"] * 2 + ["summary"] * 2) * 3 + ["main"] * 2, kinds
    mains = [text for kind, text in log if kind == "main"]
    assert [text.count(ic.MARK) for text in mains] == [1] * 8
    # and the effort policy, which the session's start gave, as the rule
    assert [text.count("[Effort policy: medium]") for text in mains] == [1] * 8
    assert all(api.summary in text for text in mains[2:]), "the requests after the first compression hold a summary"
    # replay reads the same chat file: the first compression kept nothing, the
    # others the turn of the prompt they came in (its line, where replay prices it kept)
    from engine.agents.table import get
    from engine.replay.pricing import Timeline
    from support.gemini import session_files

    [chat] = session_files(home)
    timeline = Timeline(chat, "gemini", get("gemini").data["transcript"].get("resumed"))
    prompts, at = {}, 0
    for line in chat.read_bytes().splitlines(keepends=True):
        rec = json.loads(line)
        if rec.get("type") == "user" and rec.get("content") in ([{"text": "next"}], [{"text": "more"}]):
            prompts[rec["content"][0]["text"]] = at
        at += len(line)
    assert timeline.kept_since == [None, prompts["next"], prompts["more"]], (timeline.kept_since, prompts)
