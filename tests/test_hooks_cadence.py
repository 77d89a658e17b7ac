"""Cadences of `engine hook`, end to end: every N prompts (built-in 20 / 40),
0 disables, re-injection after a compaction, SessionEnd forgetting the
session, and the cadence in context tokens read from the transcript."""

from pathlib import Path

import pytest

from hook_fixtures import profile_text, shared_profile, transcript_records
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

REPO = Path(__file__).resolve().parent.parent

RULE_G = "Global rule marker GLOBALRULE: keep the firewall on.\n"
RULE_P = "Project rule marker PROJECTRULE: run the tests before you commit.\n"
CLAUDE_G = "# Global notes\nMarker GLOBALCLAUDE: answer briefly.\n"
CLAUDE_P = "# Project notes\nMarker PROJECTCLAUDE: this project uses tabs.\n"


def _world(hk):
    hk.rule("global-style.md", "# Style\n" + RULE_G, where="global")
    hk.rule("testing.md", "# Testing\n" + RULE_P)
    hk.claude_md(CLAUDE_G, where="global")
    hk.claude_md(CLAUDE_P)


def _injection(run, event="UserPromptSubmit"):
    assert run.returncode == 0, str(run)
    data = run.json
    assert "hookSpecificOutput" in data, str(run)
    out = data["hookSpecificOutput"]
    assert out["hookEventName"] == event, str(run)
    assert isinstance(out["additionalContext"], str) and out["additionalContext"].strip(), str(run)
    assert len(out["additionalContext"]) < 10000, str(run)
    return out["additionalContext"]


def test_builtin_cadence_rules_every_20_claude_md_every_40(hk):
    _world(hk)
    for n in range(1, 20):
        run = hk.hook(hk.prompt(n))
        run.assert_silent()
    assert hk.file_turn() == 19

    ctx = _injection(hk.hook(hk.prompt(20)))
    assert "GLOBALRULE" in ctx and "PROJECTRULE" in ctx
    assert "GLOBALCLAUDE" not in ctx and "PROJECTCLAUDE" not in ctx, "CLAUDE.md is due every 40 prompts, not 20"

    # 21..39 inject nothing; run them together (counting under concurrency is
    # tested on its own) to keep the test short.
    for run in hk.hooks_parallel([hk.prompt(n) for n in range(21, 40)]):
        run.assert_silent()
    assert hk.file_turn() == 39

    ctx = _injection(hk.hook(hk.prompt(40)))
    assert "GLOBALRULE" in ctx and "PROJECTRULE" in ctx
    assert "GLOBALCLAUDE" in ctx and "PROJECTCLAUDE" in ctx
    assert ctx.index("GLOBALCLAUDE") < ctx.index("PROJECTCLAUDE"), "global CLAUDE.md comes before the project's"

    hk.hook(hk.prompt(41)).assert_silent()
    assert hk.log_lines() == []


def test_turn_cadence_from_a_profile(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 3}]}))
    got = []
    for n in range(1, 8):
        run = hk.hook(hk.prompt(n), profile=prof)
        assert run.returncode == 0, str(run)
        got.append("ALPHA" in (run.context or ""))
        if run.stdout:
            _injection(run)
    assert got == [False, False, True, False, False, True, False]


def test_every_turns_zero_disables_a_handler(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    hk.claude_md(CLAUDE_P)
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 0},
                                                             {"name": "instructions", "every_turns": 2}]}))
    seen = []
    for n in range(1, 5):
        run = hk.hook(hk.prompt(n), profile=prof)
        ctx = run.context or ""
        assert run.returncode == 0, str(run)
        assert "ALPHA" not in ctx, f"rules handler has every_turns 0 and must never run\n{run}"
        seen.append("PROJECTCLAUDE" in ctx)
    assert seen == [False, True, False, True]
    # A disabled cadence does not disable the re-injection after a compaction.
    ctx = _injection(hk.hook(hk.event("SessionStart", source="compact"), profile=prof), "SessionStart")
    assert "ALPHA" in ctx


def test_compaction_reinjects_rules_at_once(hk):
    _world(hk)
    hk.hook(hk.prompt(1)).assert_silent()
    ctx = _injection(hk.hook(hk.event("SessionStart", source="compact")), "SessionStart")
    assert "GLOBALRULE" in ctx and "PROJECTRULE" in ctx
    # the compaction does not count as a prompt
    assert hk.file_turn() == 1


@pytest.mark.parametrize("source", ["startup", "resume", "clear"])
def test_session_start_other_sources_inject_nothing(hk, source):
    """No rules outside a compaction; the effort guidance (issue 7) is the
    only thing said at these sources, and nothing at all with effort high."""
    _world(hk)
    run = hk.hook(hk.event("SessionStart", source=source))
    run.assert_ok()
    source, policy = run.context.split("\n", 1)
    assert "profile default" in source and "session_start/effort_guidance" in source, str(run)  # where it comes from
    assert policy.startswith("[Effort policy: medium]") and "PROJECTRULE" not in run.context, str(run)
    hk.hook(hk.event("SessionStart", source=source), profile=shared_profile(profile_text(effort="high"))).assert_silent()
    assert hk.log_lines() == []


def test_session_end_forgets_the_session(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 2}]}))
    other = "other-session-0001"
    hk.hook(hk.prompt(1, session=other), profile=prof).assert_silent()
    hk.hook(hk.prompt(1), profile=prof).assert_silent()
    assert hk.file_turn() == 1

    hk.hook(hk.event("SessionEnd", reason="clear"), profile=prof).assert_silent()
    assert hk.session_files() == [], "SessionEnd leaves the session's state behind"
    assert hk.file_turn(other) == 1, "SessionEnd of one session touched another"

    # counts from 1 again: turn 1 silent, turn 2 injects (it would be turn 3 otherwise)
    hk.hook(hk.prompt(1), profile=prof).assert_silent()
    assert "ALPHA" in (hk.hook(hk.prompt(2), profile=prof).context or "")
    # the other session goes on counting: its next prompt is its turn 2
    assert "ALPHA" in (hk.hook(hk.prompt(2, session=other), profile=prof).context or "")


# -- every_tokens -------------------------------------------------------------

TOKENS_PROFILE = profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 0, "every_tokens": 30000},
                                                    {"name": "instructions", "every_turns": 0}]})


def _token_step(hk, prof, total, sidechain=None, raw_records=None):
    if raw_records is not None:
        hk.write_transcript(raw_records)
    elif total is not None:
        hk.write_transcript(transcript_records(total, sidechain, session=hk.session))
    run = hk.hook(hk.prompt(), profile=prof)
    assert run.returncode == 0, str(run)
    if run.stdout:
        _injection(run)
    return "ALPHA" in (run.context or "")


def test_every_tokens_cadence_from_transcript_usage(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = shared_profile(TOKENS_PROFILE)
    assert _token_step(hk, prof, None) is False  # no transcript yet: context unknown
    assert _token_step(hk, prof, 5000) is False
    assert _token_step(hk, prof, 20000) is False
    assert _token_step(hk, prof, 36000) is True   # grown by 30000+ (from 0 or from 5000)
    assert _token_step(hk, prof, 36000) is False  # no growth since the injection
    assert _token_step(hk, prof, 65999) is False  # 29999 since the last injection
    assert _token_step(hk, prof, 66000) is True   # exactly 30000
    assert _token_step(hk, prof, 70000) is False


def test_every_tokens_ignores_sidechain_records(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = shared_profile(TOKENS_PROFILE)
    assert _token_step(hk, prof, 40000) is True
    # A subagent's (side-chain) record after the main one, with a huge context:
    # the main context grew only 10000, so nothing is due.
    assert _token_step(hk, prof, 50000, sidechain=500000) is False
    # A side-chain record with a small context after the main one does not
    # hide the main growth either.
    assert _token_step(hk, prof, 71000, sidechain=100) is True


def test_every_tokens_reads_the_last_main_record_of_a_long_transcript(hk):
    """Many records (more than one read block of the file); only the last
    main-chain assistant usage counts, whatever came before."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = shared_profile(TOKENS_PROFILE)
    records = []
    for i in range(1500):
        records += transcript_records(1000 + i * 10, session=hk.session)  # ends near 16000
    records += transcript_records(500000, session=hk.session)[:1]  # a trailing user record, no usage
    records.append({"type": "assistant", "isSidechain": True, "message": {"usage": {"input_tokens": 900000}}})
    assert _token_step(hk, prof, None, raw_records=records) is False
    records += transcript_records(47000, session=hk.session)
    records.append({"type": "user", "isSidechain": False, "message": {"role": "user", "content": "ok"}})
    assert _token_step(hk, prof, None, raw_records=records) is True


def test_every_tokens_counts_again_after_the_context_shrank(hk):
    """After a compaction the context is small again; the next token-cadence
    injection comes once it has grown 30000 from there."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = shared_profile(TOKENS_PROFILE)
    assert _token_step(hk, prof, 90000) is True
    assert _token_step(hk, prof, 20000) is False
    assert _token_step(hk, prof, 49999) is False
    assert _token_step(hk, prof, 50000) is True


def test_second_injection_that_does_not_fit_comes_on_the_next_prompt(hk):
    """Rules and CLAUDE.md due on the same prompt but together over the
    agent's limit: one injection stays under it, and CLAUDE.md is not lost."""
    hk.rule("big.md", "# Big\n" + "".join(f"BIGRULE line {i:04d}: zebra quartz lantern orbit.\n" for i in range(150)))
    hk.claude_md("# Notes\n" + "".join(f"CLAUDELINE {i:04d}: zebra quartz lantern orbit.\n" for i in range(70)))
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 2},
                                                             {"name": "instructions", "every_turns": 2}]}))
    seen = []
    for n in range(1, 4):
        run = hk.hook(hk.prompt(n), profile=prof)
        ctx = _injection(run) if run.stdout else ""
        seen.append(("BIGRULE" in ctx, "CLAUDELINE" in ctx))
    assert seen[0] == (False, False)
    assert seen[1][0] is True
    assert seen[1][1] or seen[2][1], "CLAUDE.md was due on turn 2 and never came"


def test_profile_in_the_project_folder_is_used(hk):
    """No --profile: the event's cwd decides (.engine/profile.yaml there, once approved)."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    (hk.project / ".engine").mkdir()
    (hk.project / ".engine" / "profile.yaml").write_text(
        profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1}]}))
    assert hk.engine("trust").returncode == 0
    run = hk.hook(hk.prompt(1))
    assert "ALPHA" in (run.context or ""), str(run)


def test_profile_from_environment_variable(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1}]}))
    run = hk.hook(hk.prompt(1), env={"ENGINE_PROFILE": str(prof)})
    assert "ALPHA" in (run.context or ""), str(run)


def test_edited_profile_takes_effect_at_the_next_event(hk):
    """The compiled-profile cache notices a changed profile file."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = hk.root / "edited.yaml"
    prof.write_text(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 3}]}))
    hk.hook(hk.prompt(1), profile=prof).assert_silent()
    prof.write_text(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 2}]}))
    assert "ALPHA" in (hk.hook(hk.prompt(2), profile=prof).context or "")


def test_profile_equals_form_of_the_option(hk):
    import json
    import subprocess
    import sys

    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1}]}))
    proc = subprocess.run([sys.executable, "-m", "engine.cli", "hook", f"--profile={prof}"],
                          input=json.dumps(hk.prompt(1)).encode(), capture_output=True, env=hk.env(),
                          cwd=str(hk.project), timeout=120)
    assert proc.returncode == 0
    assert "ALPHA" in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_every_tokens_with_a_last_record_larger_than_a_read_block(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = shared_profile(TOKENS_PROFILE)
    records = transcript_records(5000, session=hk.session)
    big = transcript_records(45000, session=hk.session)
    big[1]["message"]["content"] = [{"type": "text", "text": "x" * 300000}]
    records += big
    assert _token_step(hk, prof, None, raw_records=records) is True


def test_growth_cadence_never_delivers_at_a_subagents_tool_call(hk):
    """The growth is the main context's: a subagent's tool call neither takes
    the rules that went far back nor moves the main chain's next due point,
    so the main model gets them at its own next tool call."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    hk.write_transcript(transcript_records(50000, session=hk.session))
    read = {"tool_name": "Read", "tool_input": {"file_path": str(hk.project / "x.py")}}
    sub = hk.hook(hk.event("PostToolUse", agent_id="a1", agent_type="general", **read))
    assert sub.returncode == 0, str(sub)
    assert "ALPHA" not in (sub.context or ""), sub.context
    main = hk.hook(hk.event("PostToolUse", **read))
    assert "ALPHA" in _injection(main, "PostToolUse")


def test_growth_cadence_delivers_after_a_call_that_failed(hk):
    """Claude Code reports a command that exits non-zero by
    PostToolUseFailure, never PostToolUse (measured with 2.1.330): the
    built-in profile's growth cadence runs there too
    (rules_on_growth_after_failures), so a session of failing test runs gets
    the rules that went far back."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    hk.write_transcript(transcript_records(50000, session=hk.session))
    failed = hk.hook(hk.event("PostToolUseFailure", tool_name="Bash", tool_input={"command": "make test"},
                              tool_use_id="toolu_7", error="Exit code 2\nmake: *** [test] Error 1"))
    assert "ALPHA" in _injection(failed, "PostToolUseFailure")


class _Ctx:
    """What cadence.growth_due reads of an event: its name, agent, state
    snapshot, context figure and transcript."""

    def __init__(self, agent, name, now, snap, transcript):
        import yaml

        from engine.agents import table
        from engine.agents.spec import Agent

        self.agent, self.name, self._now, self._snap = Agent(table.agents()[agent]), name, now, snap
        self.settings = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["hooks"]
        self.written = {}
        self.state = self
        self.compacted_unannounced = False
        self._path = str(transcript)

    def update(self, marks):
        self.written.update(marks)

    def snapshot(self):
        return self._snap

    def context_tokens(self):
        return self._now

    def usage(self):
        return None if self._now is None else (self._now, "m", 100)

    def transcript(self):
        return self._path


@pytest.mark.parametrize("agent,announces", [("gemini", False), ("copilot", False), ("claude-code", True), ("codex", True)])
def test_a_shrink_is_a_compaction_to_put_back_after_where_the_agent_sends_no_start_for_it(tmp_path, agent, announces):
    """Gemini CLI and Copilot CLI send no session start after a compaction
    (no `compact` among their YAML's session_sources): the context's shrink
    is how the engine learns of one, so a first reading leaves a base, and
    a shrink makes the refresh run as after a compaction.  Claude Code and
    Codex put it back at that start: a shrink only counts again from there."""
    from engine.hooks import cadence

    path = tmp_path / "t.jsonl"
    path.write_bytes(b"x" * 5000)
    first = _Ctx(agent, "post_tool", 30000, {}, path)
    assert cadence.growth_due(first, "rules", 40000) is False
    # due where it was: `every` tokens after the start, which gave the rules
    base = {f"{k}rules": v for k, v in ((cadence.DUE, 40000), (cadence.SEEN, 30000), (cadence.SIZE, 100))}
    assert first.written == ({} if announces else base)
    # a few bytes later the context is smaller: a compaction
    shrunk = _Ctx(agent, "post_tool", 2500, base, path)
    path.write_bytes(b"x" * 5200)
    assert cadence.growth_due(shrunk, "rules", 40000) is (not announces)
    assert shrunk.compacted_unannounced is (not announces)
    if announces:  # the fast path: a few bytes cannot hold 40,000 tokens, the figure is not read
        assert shrunk.written == {}
    else:
        assert shrunk.written == {f"{cadence.DUE}rules": 42500, f"{cadence.SEEN}rules": 2500, f"{cadence.SIZE}rules": 100}


class _GeminiHooks:
    """The engine's hook run for Gemini CLI in `hk`'s project, with a Cursor
    rule (alwaysApply, naming `mark`) only the engine gives, and the chat
    file the hooks read (hook_fixtures.GeminiChat)."""

    def __init__(self, hk, mark):
        from hook_fixtures import CURSOR_SOURCE, GeminiChat

        rules = hk.project / ".cursor" / "rules"
        rules.mkdir(parents=True)
        (rules / "names.mdc").write_text(f"---\nalwaysApply: true\n---\n# Names\nName every branch {mark}.\n")
        self.hk, self.prof = hk, hk.root / "p.yaml"
        self.prof.write_text(profile_text({"prompt": [{"name": "rules", "sources": [{"agent": "rules"}, CURSOR_SOURCE]}]}))
        self.chat = GeminiChat(hk.home / ".gemini" / "tmp" / "project" / "chats" / f"session-2026-11-28T12-17-{hk.session[:8]}.jsonl",
                               hk.session, hk.project)

    def hook(self, name, **fields):
        import json

        payload = {"session_id": self.hk.session, "transcript_path": str(self.chat.path), "cwd": str(self.hk.project),
                   "hook_event_name": name, "timestamp": "2026-11-28T12:17:20.000Z", **fields}
        run = self.hk.engine("hook", "--agent", "gemini", "--profile", self.prof, stdin=json.dumps(payload).encode())
        return run.assert_ok()

    def begin(self):
        """The session's start (what it gave: the rule), the first prompt's
        BeforeAgent, then the chat file's header and that prompt."""
        given = self.hook("SessionStart", source="startup").json["hookSpecificOutput"]["additionalContext"]
        self.hook("BeforeAgent", prompt="go")
        self.chat.start(given)
        self.chat.prompt("go")
        return given

    def after_tool(self, command):
        return self.hook("AfterTool", tool_name="run_shell_command", tool_input={"command": command},
                         tool_response={"llmContent": f"Output: {command}", "returnDisplay": command})

    @staticmethod
    def request(*texts):
        roles = ["user", "model"] * len(texts)
        return {"model": "gemini-2.5-flash", "config": {"temperature": 1},
                "messages": [{"role": r, "content": t} for r, t in zip(roles, texts)]}

    def added(self):
        """(event, handlers) of each of the session's records that added something."""
        import json

        records = [json.loads(line) for f in sorted((self.hk.state / "records").glob("*.ndjson"))
                   for line in f.read_text(encoding="utf-8").splitlines()]
        return [(r["event"], [a["handler"] for a in r["added"]]) for r in records if r["added"]]


def test_gemini_gets_back_at_its_first_request_after_a_compression_what_the_compression_took(hk):
    """Gemini CLI 0.61.0 compresses at a prompt's start, after that prompt's
    BeforeAgent (and inside a prompt: the test after this), and tells no hook (measured interactively with
    tests/support/interactive_compress.py, AGENTS-MEASURED.md "After a
    compaction"): the first request after it was sent without the rule only
    the engine gave, and the next AfterTool put it back.  Its BeforeModel
    comes after the compression is written: there the engine gives the
    request what the compression took, as one message after the request's
    own (answers.request_context of gemini.yaml); before the compression,
    and once the new epoch has a response, BeforeModel answers nothing; the
    next AfterTool sees the shrink and puts the rule back into the session."""
    g = _GeminiHooks(hk, "GEMRULE_7f")
    chat, hook, request = g.chat, g.hook, g.request
    assert "GEMRULE_7f" in g.begin()
    chat.response(30000)
    chat.result()
    assert hook("BeforeModel", llm_request=request("go")).stdout.strip() == "", "no compression: nothing to give"
    chat.response(30000, call=False, text="one")
    assert hook("BeforeAgent", prompt="next").stdout.strip() == "", "the rule is in view: nothing due"
    # the compression, written after that BeforeAgent: a shorter history with a summary it never had, then the prompt
    chat.compression()
    chat.prompt("next")
    first = request("SUMMARY", "ok", "next")
    answer = hook("BeforeModel", llm_request=first).json["hookSpecificOutput"]
    assert answer["hookEventName"] == "BeforeModel" and set(answer) == {"hookEventName", "llm_request"}
    sent = answer["llm_request"]["messages"]
    assert sent[:-1] == first["messages"], "the request's own messages, given back as they came"
    assert sent[-1]["role"] == "user" and "GEMRULE_7f" in sent[-1]["content"]
    retry = hook("BeforeModel", llm_request=first).json["hookSpecificOutput"]["llm_request"]["messages"]
    assert retry[:-1] == first["messages"] and "GEMRULE_7f" in retry[-1]["content"], "a retry of it gets it too"
    # the first response of the new epoch: its usage is smaller; the rule goes back for good at the tool call
    chat.response(2500)
    assert "GEMRULE_7f" in g.after_tool("echo a").json["hookSpecificOutput"]["additionalContext"]
    chat.result()
    assert hook("BeforeModel", llm_request=request("SUMMARY", "ok", "next")).stdout.strip() == ""
    # the session's records: what the engine added, where (that request's message too)
    assert g.added() == [
        ("session_start", ["rules", "effort_guidance"]), ("before_model", ["rules", "effort_after_an_unannounced_compaction"]),
        ("before_model", ["rules", "effort_after_an_unannounced_compaction"]), ("post_tool", ["rules", "effort_after_compaction"])]


def test_gemini_gets_the_rule_back_after_a_compression_inside_a_prompt_that_grew_the_context_unchecked(hk):
    """Interactive Gemini CLI 0.61.0 also compresses inside a prompt, before
    the request that sends a tool's result (measured with
    tests/support/interactive_compress.py: the history patch is written
    between the call's message and its result).  Measured before: the
    context went 1,000 -> 30,000 tokens between two checks, the 30,000 fell
    short of the 40,000 cadence, so nothing was recorded; after the
    compression 2,600 was above the 1,000 last recorded, no shrink was
    seen, and no later request held the rule (BeforeModel gave it to the
    first one only).  Now a check of an agent that announces no compaction
    records a figure that rose, and the next event puts the rule back."""
    g = _GeminiHooks(hk, "GEMRULE_8c")
    chat, hook, request = g.chat, g.hook, g.request
    g.begin()
    chat.response(1000)
    assert g.after_tool("echo a").stdout.strip() == ""
    chat.result()
    chat.response(1000, call=False, text="one")
    assert hook("BeforeAgent", prompt="next").stdout.strip() == ""
    chat.prompt("next")
    chat.response(30000)
    assert g.after_tool("echo b").stdout.strip() == "", "not due yet"
    chat.compression()  # before the request that sends the call's result
    chat.result()
    first = hook("BeforeModel", llm_request=request("SUMMARY", "ok", "next")).json["hookSpecificOutput"]
    assert "GEMRULE_8c" in first["llm_request"]["messages"][-1]["content"], "that request only"
    chat.response(2600, call=False, text="two")
    back = hook("BeforeAgent", prompt="more")
    assert "GEMRULE_8c" in back.json["hookSpecificOutput"]["additionalContext"], "back into the session for good"
    chat.prompt("more")
    chat.response(2700)
    assert g.after_tool("echo c").stdout.strip() == ""
    assert g.added() == [("session_start", ["rules", "effort_guidance"]), ("before_model", ["rules", "effort_after_an_unannounced_compaction"]),
                         ("prompt", ["rules", "effort_after_compaction_at_prompt"])]


def test_gemini_is_not_given_again_what_its_compression_kept(hk):
    """Gemini CLI 0.61.0 keeps the newest turns of the history after its
    summary, written again under new ids (measured with
    tests/support/interactive_compress.py): a rule an AfterTool gave in
    them is still in every later request.  Measured before: the engine read
    every compression as taking all it gave, so the first request after it
    held the rule twice (BeforeModel) and the next prompt gave it back for
    good, twice in every request after.  Now the kept messages' hook context
    is in view in the epoch the compression begins: nothing is given."""
    g = _GeminiHooks(hk, "GEMRULE_9e")
    chat, hook, request = g.chat, g.hook, g.request
    g.begin()
    chat.response(30000, call=False, text="one")
    assert hook("BeforeAgent", prompt="next").stdout.strip() == ""
    chat.compression()  # everything: the rule is gone
    chat.prompt("next")
    assert "GEMRULE_9e" in hook("BeforeModel", llm_request=request("SUMMARY", "ok", "next")).stdout
    chat.response(2500)
    back = g.after_tool("echo a").json["hookSpecificOutput"]["additionalContext"]
    assert "GEMRULE_9e" in back, "back into the session"
    chat.result(added=back)
    chat.response(30000)
    assert g.after_tool("echo b").stdout.strip() == ""
    # the second compression keeps the prompt's turn, the result that holds the rule with it
    chat.compression(kept=[[{"text": "next"}], [chat.result_part(back)]])
    chat.result()
    assert hook("BeforeModel", llm_request=request("SUMMARY", "ok", "next")).stdout.strip() == "", "kept: in view"
    chat.response(2600, call=False, text="two")
    assert hook("BeforeAgent", prompt="more").stdout.strip() == ""
    assert g.added() == [("session_start", ["rules", "effort_guidance"]), ("before_model", ["rules", "effort_after_an_unannounced_compaction"]),
                         ("post_tool", ["rules", "effort_after_compaction"])]


def test_gemini_resumed_into_a_new_file_gets_back_the_rule_its_resume_left_out(hk):
    """Gemini CLI 0.61.0 resumes a session without what hooks added at its
    start, and at times its resume's SessionStart names a new chat file that
    holds only a header and its context (measured: 2 of 8 resumes beside
    another, tests/test_agents_e2e.py
    `test_a_resumed_session_gets_back_the_rules_the_agent_left_out[gemini]`).
    That file's one epoch is no start of the session: the state's record of
    the rule the first run's start gave counts for that run only, and the
    rule is given again."""
    import hashlib
    import json

    g = _GeminiHooks(hk, "GEMRULE_4r")
    g.begin()
    g.chat.response(1000, call=False, text="one")
    fresh = g.chat.path.with_name(f"session-2026-11-28T12-18-{hk.session[:8]}.jsonl")
    header = {"sessionId": hk.session, "projectHash": hashlib.sha256(str(hk.project).encode()).hexdigest(),
              "startTime": "2026-11-28T12:18:00.000Z", "kind": "main"}
    context = {"$set": {"messages": [{"id": "c0", "type": "user", "content": [{"text": "<session_context>..."}]}]}}
    fresh.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in (header, context)))
    resumed = g.hook("SessionStart", source="resume", transcript_path=str(fresh))
    assert "GEMRULE_4r" in resumed.json["hookSpecificOutput"]["additionalContext"]


def _new_chat_file_of_a_resume(hk, chat, minute):
    """The chat file Gemini CLI 0.61.0 begins at a resume in another minute
    than the session's file was named in: a header and its start context
    alone (the resumed history goes on in the session's file)."""
    import hashlib
    import json

    fresh = chat.path.with_name(f"session-2026-11-28T12-{minute}-{hk.session[:8]}.jsonl")
    header = {"sessionId": hk.session, "projectHash": hashlib.sha256(str(hk.project).encode()).hexdigest(),
              "startTime": f"2026-11-28T12:{minute}:00.000Z", "kind": "main"}
    context = {"$set": {"messages": [{"id": "c0", "type": "user", "content": [{"text": "<session_context>..."}]}]}}
    fresh.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in (header, context)))
    return fresh


def test_gemini_resumed_into_a_new_file_is_not_given_again_the_rule_a_tool_result_it_kept_holds(hk):
    """What AfterTool added to a tool result is still in a resumed run's
    requests (twice: Gemini CLI 0.61.0 sends the function response twice).
    Measured with the real agent (tests/test_agents_e2e.py
    `test_a_rule_the_resumed_run_still_holds_is_not_given_again[gemini-2]`,
    1 of 16 runs four at a time): when the resume fell in a later minute than
    the first run's start, its SessionStart named a new chat file holding
    only a header, the engine saw none of the first run there, and gave the
    rule again (three copies in every resumed request).  The run it resumes
    is read from the session's own file in that folder instead."""
    g = _GeminiHooks(hk, "GEMRULE_5k")
    g.begin()
    g.chat.response(1000)
    assert g.after_tool("echo a").stdout.strip() == ""
    g.chat.result()
    g.chat.response(50000)
    back = g.after_tool("echo b").json["hookSpecificOutput"]["additionalContext"]
    assert "GEMRULE_5k" in back, "past the growth cadence: given with the tool result"
    g.chat.result(added=back)
    g.chat.response(50100, call=False, text="one")
    fresh = _new_chat_file_of_a_resume(hk, g.chat, "18")
    resumed = g.hook("SessionStart", source="resume", transcript_path=str(fresh))
    assert "GEMRULE_5k" not in resumed.stdout, "the resumed run still holds it"
    assert g.added() == [("session_start", ["rules", "effort_guidance"]), ("post_tool", ["rules"]),
                         ("session_start", ["effort_guidance"])]


def test_the_file_a_resume_continues_is_the_sessions_own_file_written_last(api_env, tmp_path):
    """Of the chat files beside the resume's new one: another session's,
    even one whose name holds the same first characters of its id, is never
    taken; of the session's own, the one written last (an earlier resume in
    another minute left a file like the new one behind)."""
    import json
    import os

    from engine.agents.table import get
    from engine.session.locate import written_last_beside

    chats = tmp_path / "home" / ".gemini" / "tmp" / "project" / "chats"
    chats.mkdir(parents=True)

    def chat(minute, session, when):
        path = chats / f"session-2026-11-28T12-{minute}-{session[:8]}.jsonl"
        path.write_text(json.dumps({"sessionId": session, "projectHash": "p", "startTime": "t", "kind": "main"}) + "\n")
        os.utime(path, (when, when))
        return path

    mine, other = "7c787d3c-4c6e-4700-9c50-53a0b2e0e783", "7c787d3c-0000-4000-8000-000000000000"
    own = chat("17", mine, 1000)
    chat("18", mine, 900)  # an earlier resume's file: only its start, written before the session's went on
    chat("19", other, 5000)  # another session, the same first characters
    new = chat("20", mine, 6000)
    gemini = get("gemini")
    assert written_last_beside(gemini, str(new)) == str(own)
    os.unlink(own)
    assert written_last_beside(gemini, str(new)) == str(chats / f"session-2026-11-28T12-18-{mine[:8]}.jsonl")
    assert written_last_beside(gemini, str(chats / "session-2026-11-28T12-21-deadbeef.jsonl")) is None, "no such file"
