"""The hot path: with a warm compiled-profile cache, an event that injects
nothing imports no YAML, JSON Schema, Jinja2 or tokenizer.  The event is fed
to engine.hooks.dispatch.main in a fresh interpreter through a fake stdin,
then the interpreter lists which of those modules it holds."""

import json
from pathlib import Path

import pytest

from hook_fixtures import HEAVY, profile_text, shared_profile, transcript_records
from test_hooks_conftest_fixtures import hk, hk_cold, redis_server  # noqa: F401 - fixtures

PROBE = r"""
import io, json, sys
from engine.hooks import dispatch
heavy = set(json.loads(sys.argv[1]))
before = sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy)
ran, run_handlers = [], dispatch._run_handlers
def spy(handlers, ctx, log):
    ran.extend(h.name for h in handlers)
    return run_handlers(handlers, ctx, log)
dispatch._run_handlers = spy
out = io.StringIO()
rc = dispatch.main(json.loads(sys.argv[2]), stdin=io.StringIO(sys.stdin.read()), stdout=out)
after = sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy)
sys.__stdout__.write(json.dumps({"rc": rc, "out": out.getvalue(), "before": before, "after": after, "ran": ran}))
"""


def _probe(hk, event, profile=None, heavy=HEAVY):
    """The probe's figures, once it is shown that the event reached its
    handlers and none of them failed: a handler that crashed, or an event
    never handled, is as quiet and imports as little as a quiet one."""
    code = "import sys; sys.argv[1:] = [%r, %r]\n" % (json.dumps(list(heavy)), json.dumps(profile)) + PROBE
    logged = hk.log_lines()
    run = hk.python(code, stdin=json.dumps(event).encode())
    assert run.returncode == 0, str(run)
    res = json.loads(run.stdout)
    assert res["ran"], f"no handler ran for {event.get('hook_event_name')}: {res}"
    assert hk.log_lines() == logged, "the probe's event logged (a failure?)"
    return res


def _rules(hk):
    hk.rule("a.md", "# A\nMarker ALPHA: run the tests in order to be safe.\n")
    hk.rule("b.md", "# B\nMarker BRAVO.\n", where="global")
    hk.claude_md("Marker CLAUDEMARK.\n")


# What a quiet event must not load either: `typing` (slow to import, and no
# engine module on this path needs it), dataclasses (and inspect through it:
# the handlers' specs are plain frozen records, engine/base/record.py),
# redis-py, hashlib (it loads OpenSSL, 3-4 ms: engine/base/digest.py).
QUIET_HEAVY = HEAVY + ("typing", "dataclasses", "inspect", "redis", "hashlib")

CUSTOM = profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 5}]})
QUIET = profile_text(effort="high")


@pytest.mark.parametrize("which", ["builtin", "custom"])
def test_non_injecting_prompt_imports_nothing_heavy(hk, which):
    _rules(hk)
    prof = str(shared_profile(CUSTOM)) if which == "custom" else None
    hk.hook(hk.prompt(1), profile=prof).assert_silent()  # warms the cache for this profile
    assert hk.file_turn() == 1
    res = _probe(hk, hk.prompt(2), prof, heavy=QUIET_HEAVY)
    assert res["rc"] == 0 and res["out"] == "", res
    assert res["before"] == [], res
    assert res["after"] == [], f"the non-injecting path imported {res['after']}"
    assert hk.file_turn() == 2, "the probe really ran the event (the turn was counted)"
    assert hk.log_lines() == []


@pytest.mark.parametrize("name,fields", [
    ("PreToolUse", {}),
    ("PostToolUse", {}),
    ("SessionStart", {"source": "startup"}),
    ("SessionStart", {"source": "resume"}),
    ("Stop", {}),
    ("SessionEnd", {"reason": "exit"}),
], ids=["pretool", "posttool", "startup", "resume", "stop", "end"])
def test_other_non_injecting_events_import_nothing_heavy(hk, name, fields):
    _rules(hk)
    prof = str(shared_profile(QUIET))  # effort high: SessionStart has nothing to say
    hk.hook(hk.prompt(1), profile=prof).assert_silent()
    # a session's start plans the at_start reinject: it loads the compiled profile (dataclasses)
    res = _probe(hk, hk.event(name, **fields), prof, heavy=HEAVY if fields.get("source") == "startup" else QUIET_HEAVY)
    assert res["rc"] == 0 and res["out"] == "", res
    assert res["after"] == [], f"{name} imported {res['after']}"
    if name == "SessionEnd":
        assert hk.session_files() == [], "the probe really ran SessionEnd"
    else:
        assert hk.file_turn() == 1


# What the failure scan at Stop reads of engine/session (locate.py, to know
# the transcript's agent) must not bring the session report with it.
REPORT = ("engine.session.report", "engine.session.analyze", "engine.session.style", "engine.core.templates")


def test_a_stop_that_scans_the_transcript_imports_no_session_report(hk):
    """Stop reads the transcript's failures (tool_memory_scan), which asks
    engine/session which agent wrote it: importing the package imported
    the whole session report with it (its analysis, style, templates:
    about 7 ms of every Stop)."""
    _rules(hk)
    hk.write_transcript(transcript_records(1000))
    prof = str(shared_profile(QUIET))
    hk.hook(hk.prompt(1), profile=prof).assert_silent()
    res = _probe(hk, hk.event("Stop"), prof, heavy=QUIET_HEAVY + REPORT)
    assert "tool_memory_scan" in str(res["ran"]) or "remember_unseen_failures" in res["ran"], res
    assert res["rc"] == 0 and res["out"] == "", res
    assert res["after"] == [], f"Stop imported {res['after']}"


def test_injecting_event_works_in_the_same_harness(hk):
    """The harness is able to see injections: a due prompt returns the rules
    (heavy imports are allowed there)."""
    _rules(hk)
    prof = str(shared_profile(CUSTOM))
    for n in range(1, 5):
        hk.hook(hk.prompt(n), profile=prof).assert_silent()
    res = _probe(hk, hk.prompt(5), prof)
    assert res["rc"] == 0, res
    data = json.loads(res["out"])
    ctx = data["hookSpecificOutput"]["additionalContext"]
    assert data["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "ALPHA" in ctx and "BRAVO" in ctx and "in order to" not in ctx
    assert "jinja2" in res["after"], "rendering the banner uses Jinja2; the probe should see it"
    assert hk.file_turn() == 5


def test_compaction_reinjection_in_the_same_harness(hk):
    _rules(hk)
    hk.hook(hk.prompt(1)).assert_silent()
    res = _probe(hk, hk.event("SessionStart", source="compact"))
    data = json.loads(res["out"])
    assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "ALPHA" in data["hookSpecificOutput"]["additionalContext"]


def test_cold_cache_still_answers(hk_cold):
    """With no cache at all the first event compiles the profile and works."""
    env = hk_cold
    _rules(env)
    run = env.hook(env.event("SessionStart", source="compact"))
    assert run.returncode == 0, str(run)
    assert "ALPHA" in (run.context or ""), str(run)
    env.hook(env.prompt(1)).assert_silent()
    res = _probe(env, env.prompt(2))
    assert res["after"] == [], res


def test_non_injecting_prompt_with_redis_state_imports_nothing_heavy(hk, redis_server):
    """Redis state on the hot path speaks the protocol itself: no redis-py
    (slow to import) and none of the heavy modules."""
    _rules(hk)
    hk.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    hk.hook(hk.prompt(1)).assert_silent()
    res = _probe(hk, hk.prompt(2), heavy=HEAVY + ("redis",))
    assert res["rc"] == 0 and res["out"] == "", res
    assert res["after"] == [], f"the non-injecting path imported {res['after']}"
    assert redis_server.client().hget(f"rules-engine:session:{hk.session}", "turn") == b"2"


@pytest.mark.parametrize("backend", ["files", "redis"])
def test_recording_events_import_nothing_heavy(hk, backend, request):
    """A PostToolUse that succeeded only lets the context monitor read the
    fill (here, for the first time in the session), and a PreToolUse of a
    tool with nothing remembered (the store holds another tool's failure)
    says nothing: neither loads a heavy module, nor redis-py."""
    if backend == "redis":
        hk.extra_env["ENGINE_REDIS_URL"] = request.getfixturevalue("redis_server").url
    hk.hook(hk.event("PostToolUseFailure", tool_name="Read", tool_input={"file_path": "/x"}, tool_use_id="t0",
                     error="File does not exist.")).assert_silent()
    heavy = QUIET_HEAVY
    hk.write_transcript(transcript_records(100000, session=hk.session))
    post = hk.event("PostToolUse", tool_response={"stdout": "x" * 80, "stderr": "", "interrupted": False})
    res = _probe(hk, post, heavy=heavy)
    assert res["rc"] == 0 and res["out"] == "" and res["after"] == [], res
    res = _probe(hk, hk.event("PreToolUse", tool_name="Bash", tool_input={"command": "ls"}), heavy=heavy)
    assert res["rc"] == 0 and res["out"] == "" and res["after"] == [], res
    if backend == "files":
        state = json.loads(hk.session_files()[0].read_text())
        assert state["fill_seen_tokens:context_monitor"] == 100000, "the probe really read the fill"
    assert hk.log_lines() == []


# Engine modules a quiet prompt does not need: the CLI's parser and error
# printers, the read-trust rules (only a project profile left out needs
# them), the source labels (only a part to label), what is in view (only a
# refresh that plans an injection) and the error classes (only an event
# that failed).  Each costs a hook process a file read and an exec.
NOT_ON_QUIET_PATH = ("engine.cli.parser", "engine.cli.output", "engine.hooks.trust", "engine.hooks.source",
                     "engine.hooks.inview", "engine.base.errors")

CLI_PROBE = r"""
import io, json, sys
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.stdin.buffer.read()))
from engine.cli.main import main
rc = main(["hook"])
sys.stdout.flush()
sys.stderr.write(json.dumps({"rc": rc, "modules": sorted(m for m in sys.modules if m.startswith("engine"))}))
"""


def test_quiet_prompt_imports_only_the_hook_path(hk):
    """`engine hook` for a prompt that injects nothing (the command line's
    way in, engine/cli/main.py) imports none of NOT_ON_QUIET_PATH, nor YAML."""
    _rules(hk)
    hk.hook(hk.prompt(1)).assert_silent()
    run = hk.python(CLI_PROBE, stdin=json.dumps(hk.prompt(2)).encode())
    assert run.returncode == 0 and not run.stdout, str(run)
    res = json.loads(run.stderr)
    assert res["rc"] == 0
    assert "engine.hooks.dispatch" in res["modules"], res
    assert [m for m in NOT_ON_QUIET_PATH if m in res["modules"]] == []
    assert hk.file_turn() == 2, "the probe really ran the event"


def test_no_transcript_no_transcript_reader(hk):
    """An event without a transcript path does not import the reader to learn
    that there is no context size to read."""
    _rules(hk)
    hk.hook(hk.prompt(1)).assert_silent()
    res = _probe(hk, {**hk.prompt(2), "transcript_path": ""}, heavy=("engine",))
    assert res["rc"] == 0 and res["out"] == "", res
    assert "engine.core.transcript" not in res["after"]
    assert hk.file_turn() == 2


def test_growth_not_due_builds_no_refresh(hk):
    """A PostToolUse (hundreds a session) whose growth cadence is not due
    asks it from the target's spec: the refresh handler, its module and what
    is in view are not loaded.  The same session past the cadence does load
    them (the probe sees the difference)."""
    _rules(hk)
    hk.write_transcript(transcript_records(1000, session=hk.session))  # far below every_tokens (40000)
    hk.hook(hk.prompt(1)).assert_silent()
    post = hk.event("PostToolUse", tool_response={"stdout": "x", "stderr": "", "interrupted": False})
    res = _probe(hk, post, heavy=("engine",))
    assert res["rc"] == 0 and res["out"] == "", res
    assert "engine.hooks.handlers.growth" in res["after"], "the growth handler ran"
    assert "engine.hooks.handlers.refresh" not in res["after"]
    hk.write_transcript(transcript_records(100000, session=hk.session))  # past it
    res = _probe(hk, post, heavy=("engine",))
    assert "engine.hooks.handlers.refresh" in res["after"], res


def test_what_every_event_may_load_leaves_openssl_out():
    """The digests a hook takes on any event (a session's file names, the
    compiled-profile cache's keys, Gemini's project folder, a rule file's
    text) come from the bare C sha256 (engine/base/digest.py); each
    agent's transcript reader, loaded at a quiet prompt to read the
    context's size, imports no hashlib either (Gemini's did: 3-4 ms of its
    every quiet prompt)."""
    import subprocess
    import sys

    from engine.agents.transcripts import __path__ as readers

    names = sorted(p.stem for p in Path(readers[0]).glob("*.py") if p.stem != "__init__")
    assert {"claude", "codex", "copilot", "gemini"} <= set(names)
    modules = [f"engine.agents.transcripts.{n}" for n in names] + [
        "engine.base.digest", "engine.core.cache", "engine.core.records", "engine.hooks.state",
        "engine.hooks.lineage", "engine.hooks.sources", "engine.hooks.inview", "engine.hooks.agenttrust"]
    code = f"import sys\nimport {', '.join(modules)}\nprint('hashlib' in sys.modules)"
    # -B: no bytecode written into the checkout (-I ignores PYTHONDONTWRITEBYTECODE)
    run = subprocess.run([sys.executable, "-I", "-B", "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
    import hashlib

    from engine.base.digest import safe_key, sha256

    assert sha256(b"rules").hexdigest() == hashlib.sha256(b"rules").hexdigest()
    assert safe_key("s/../x\ud800") == "s_.._x_-" + hashlib.sha256("s/../x\ud800".encode("utf-8", "surrogatepass")).hexdigest()[:12]


# re.search spied on: which patterns a hook searched with (in a development
# venv `re` is imported before the engine is, by the editable install's finder).
AGENT_PROBE = r"""
import io, json, re, sys
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.stdin.buffer.read()))
searched, search, finditer = [], re.search, re.finditer
re.search = lambda pattern, *a, **k: searched.append(pattern) or search(pattern, *a, **k)
re.finditer = lambda pattern, *a, **k: searched.append(pattern) or finditer(pattern, *a, **k)
from engine.cli.main import main
rc = main(["hook", *json.loads(sys.argv[1])])
sys.stdout.flush()
sys.stderr.write(json.dumps({"rc": rc, "searched": sorted(set(searched))}))
"""

# A finished shell call as each agent that gives the model one output text
# sends it (bench/agent_hooks.py): its stdout is what the error patterns search.
ONE_STREAM_CALLS = {
    "codex": ([], lambda out: {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
                               "tool_use_id": "c1", "turn_id": "t", "tool_response": out}),
    "gemini": ([], lambda out: {"hook_event_name": "AfterTool", "tool_name": "run_shell_command",
                                "tool_input": {"command": "ls"},
                                "tool_response": {"llmContent": "Output: " + out, "returnDisplay": out}}),
    "copilot": (["--event", "postToolUse"], lambda out: {
        "toolName": "bash", "toolArgs": {"command": "ls"}, "timestamp": 1,
        "toolResult": {"textResultForLlm": out + "<shellId: 0 completed with exit code 0>", "resultType": "success"}}),
}


@pytest.mark.parametrize("agent", sorted(ONE_STREAM_CALLS))
def test_a_successful_call_of_a_one_stream_agent_searches_no_error_pattern(hk, agent):
    """Its output is searched for the error patterns; with none of their
    literals in it (engine/base/regexlit.py) no pattern is compiled or
    searched, nor the agent's exit status pattern, and in a user's install
    `re` is not even imported (5 ms of the hook). An output that holds one
    is searched, and its failure recorded."""
    extra, payload = ONE_STREAM_CALLS[agent]
    session = {"copilot": "sessionId"}.get(agent, "session_id")
    argv = json.dumps(["--agent", agent, *extra])
    for out, searched in (("a\nb\n", None), ("built 3 targets\nall fine\n", False),
                          ("bash: kubectl: command not found\n", True)):
        event = {session: f"s-{agent}", "cwd": str(hk.project), **payload(out)}
        if agent != "copilot":
            event["transcript_path"] = ""
        run = hk.python(f"import sys; sys.argv[1:] = [{argv!r}]\n" + AGENT_PROBE, stdin=json.dumps(event).encode())
        assert run.returncode == 0, str(run)
        res = json.loads(run.stderr.splitlines()[-1])
        assert res["rc"] == 0
        if searched is not None:  # (the first call compiled the profile)
            assert ("command not found" in res["searched"]) is searched, (out, res)
            # nor its exit status pattern: Gemini's literal ("\nExit Code: ") is not
            # there; Copilot's always is, and its pattern is read by str.find
            assert not [p for p in res["searched"] if "exit code" in p.lower()], res
    listed = hk.engine("memory", "list")
    assert "kubectl: command not found" in listed.stdout, str(listed)


# No json module before the hook runs (the other probes use it): repr out.
INJECTING_PROBE = r"""
import io, sys
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.stdin.buffer.read()))
from engine.cli.main import main
rc = main(["hook"])
sys.stdout.flush()
sys.stderr.write(repr((rc, [m for m in ("json", "typing", "dataclasses", "jinja2", "yaml") if m in sys.modules])))
"""


def test_a_warm_reinjection_after_a_compaction_imports_no_json_package(hk):
    """Rules given again after a compaction, their compressed and redacted
    texts cached: the answer is written, the session's state kept and the
    redaction's key taken without the json package (its decoder imports re
    and enum: 8 ms of the hook in a user's install)."""
    import ast

    _rules(hk)
    hk.hook(hk.prompt(1)).assert_silent()
    first = hk.hook(hk.event("SessionStart", source="compact", session="warm-1"))
    assert "ALPHA" in first.stdout, str(first)
    run = hk.python(INJECTING_PROBE, stdin=json.dumps(hk.event("SessionStart", source="compact", session="warm-2")).encode())
    assert run.returncode == 0, str(run)
    rc, loaded = ast.literal_eval(run.stderr.strip().splitlines()[-1])
    assert rc == 0 and "ALPHA" in run.stdout, str(run)
    assert loaded == [], loaded


GC_PROBE = r"""
import gc, io, sys
import importlib; main = importlib.import_module("engine.cli.main")
from engine.core import compilebox
sys.stdin = io.TextIOWrapper(io.BytesIO(sys.stdin.buffer.read()))
rc = main._hook([])
sys.stderr.write(f"rc={rc} hook={gc.isenabled()} box={compilebox.run(gc.isenabled, 'x')}\n")
"""


def test_a_hook_runs_without_the_cycle_collector_and_a_compile_box_with_it(hk):
    """Collections during a hook's imports cost a quiet event about 1.5 ms;
    a compile under the box's memory cap still collects its garbage."""
    run = hk.python(GC_PROBE, stdin=json.dumps(hk.prompt(1)).encode())
    assert run.returncode == 0, str(run)
    assert "rc=0 hook=False box=True" in run.stderr, str(run)
    script = (Path(__file__).resolve().parent.parent / "scripts" / "engine-hook").read_text(encoding="utf-8")
    assert script.index("gc.disable()") < script.index("\nimport os"), "off before the first import"


def _finalize_probe(how, extra):
    """Python code that runs a hook process's entry point (`how`) with
    arguments `extra` after registering what the interpreter's teardown runs."""
    script = str(Path(__file__).resolve().parent.parent / "scripts" / "engine-hook")
    run = (f"sys.argv = [{script!r}, *{extra!r}]; runpy.run_path(sys.argv[0], run_name='__main__')" if how == "script"
           else f"sys.argv = ['engine', 'hook', *{extra!r}]; runpy.run_module('engine.cli', run_name='__main__')")
    return "import atexit, runpy, sys\natexit.register(lambda: sys.stderr.write('finalized\\n'))\n" + run


@pytest.mark.parametrize("how", ["script", "-m engine.cli"])
def test_a_hook_process_answers_then_leaves_without_the_interpreters_teardown(hk, how):
    """The teardown frees every module and object one by one: about 2.5 ms
    of a quiet event.  The answer and the exit status are whole, and
    `engine hook --help` still ends as a command does."""
    _rules(hk)
    run = hk.python(_finalize_probe(how, []), stdin=json.dumps(hk.event("SessionStart", source="compact")).encode())
    assert run.returncode == 0 and "ALPHA" in run.stdout, str(run)
    assert "finalized" not in run.stderr, str(run)
    helped = hk.python(_finalize_probe(how, ["--help"]))
    assert helped.returncode == 0 and "finalized" in helped.stderr, str(helped)
