"""What is in view (engine/hooks/inview.py), on real recorded sessions fed
to the hook command event by event (engine/replay/events.py), and on small
transcripts in the agent's shapes.

- After each compaction the path-scoped rules that were in view before it
  come back, and only they: the unscoped rules the agent reloads itself are
  not injected a second time, nor is anything twice in one epoch.
- An agent that does not load a scoped rule on a Write gets it at
  PreToolUse, once per epoch; one that does (2.1.328+) does not.
- The growth cadence fires in an agentic single-prompt session, where the
  prompt cadence never does."""

import json

import pytest

from engine.replay.events import events
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture
from testdata import transcript

PLAIN = "Marker IVPLAIN: run the whole suite before you push.\n"
SCREENS = "---\npaths: \"**/screens/*.py\"\n---\nMarker IVSCREENS: screens stay thin.\n"
LATER = "---\npaths: \"**/dispatch/*.py\"\n---\nMarker IVLATER: dispatch rule.\n"


def _session(hk, name):
    """The real transcript with its project folder moved to the test's, and
    the rules: one unscoped, one scoped to files the session touched before
    its compaction, one scoped to files it touched only after."""
    source = transcript(name)
    first = json.loads(source.open("rb").readline())
    cwd = next(json.loads(l).get("cwd") for l in source.open("rb") if json.loads(l).get("cwd"))
    data = source.read_text(encoding="utf-8").replace(cwd, str(hk.project)).encode("utf-8")
    assert first is not None
    hk.rule("plain.md", PLAIN)
    hk.rule("screens.md", SCREENS)
    hk.rule("later.md", LATER)
    hk.transcript.parent.mkdir(parents=True, exist_ok=True)
    return data


def _events(hk, data, tmp_path, name):
    copy = tmp_path / name
    copy.write_bytes(data)
    return events(copy, cwd=str(hk.project), session_id=hk.session, transcript_path=str(hk.transcript))


@pytest.mark.parametrize("name", ["21-erk-ci-compact-17errors-41files-ebe65926.jsonl",
                                  "23-erk-local-v2156-compact-ae4a1257.jsonl"])
def test_after_each_compaction_the_scoped_rules_in_view_before_come_back_and_nothing_twice(hk, tmp_path, name):
    data = _session(hk, name)
    restored = 0
    for ev, offset in _events(hk, data, tmp_path, name):
        if not (ev["hook_event_name"] == "SessionStart" and ev.get("source") == "compact"):
            continue
        hk.transcript.write_bytes(data[:offset])
        ctx = hk.hook(ev).assert_ok().context or ""
        # the scoped rule the session read and edited before the compaction
        assert "IVSCREENS" in ctx, ctx
        # the agent reloads the unscoped rules itself: no second copy
        assert "IVPLAIN" not in ctx, ctx
        # a rule whose files the session touches only later was not in view
        assert "IVLATER" not in ctx, ctx
        # the same event again (a second hook run in the epoch): it is in view now
        again = hk.hook(ev).assert_ok()
        assert "IVSCREENS" not in (again.context or ""), again.context
        restored += 1
    assert restored >= 1, "the session has a compaction: the test checks something"


def test_growth_cadence_fires_in_an_agentic_single_prompt_session(hk, tmp_path):
    """Session 23: one prompt, 62 API calls, a compaction.  The prompt cadence
    (every 20 prompts) never fires; the growth cadence re-delivers the rules
    that went every_tokens (40,000) back, between tool calls."""
    name = "23-erk-local-v2156-compact-ae4a1257.jsonl"
    data = _session(hk, name)
    at_prompt, grown, positions = [], [], []
    for ev, offset in _events(hk, data, tmp_path, name):
        kind = ev["hook_event_name"]
        if kind not in ("UserPromptSubmit", "PostToolUse", "SessionStart"):
            continue
        hk.transcript.write_bytes(data[:offset])
        run = hk.hook(ev).assert_ok()
        ctx = run.context if run.stdout.strip() and "hookSpecificOutput" in run.json else None
        if kind == "UserPromptSubmit":
            at_prompt.append(ctx or "")
        elif kind == "PostToolUse" and ctx and "IVPLAIN" in ctx:
            grown.append(ctx)
            positions.append(offset)
    assert at_prompt and not any("IVPLAIN" in c for c in at_prompt), "the prompt cadence does not fire on prompt 1"
    # bench/growth_cadence.py: 0-167K tokens before the compaction, 44-56K after: 4 deliveries at 40,000
    assert 3 <= len(grown) <= 5, len(grown)
    # each carries the unscoped rule once, and not the rule scoped to files never touched
    assert all(c.count("IVPLAIN") == 1 and "IVLATER" not in c for c in grown)


def _write_world(hk, version):
    hk.rule("plain.md", PLAIN)
    hk.rule("py.md", "---\npaths: src/**/*.py\n---\nMarker IVPY: type hints everywhere.\n")
    records = [{"type": "user", "isSidechain": False, "version": version, "cwd": str(hk.project),
                "message": {"role": "user", "content": "write it"}}]
    hk.write_transcript(records)


def _compacted(hk, n, cwd=None):
    """A compaction in the transcript: its boundary and its summary (`cwd`
    on the summary, where the session works then)."""
    summary = {"type": "user", "isSidechain": False, "isCompactSummary": True, "version": "2.1.56",
               "message": {"role": "user", "content": "summary"}}
    hk.append_transcript([
        {"type": "system", "subtype": "compact_boundary", "uuid": f"b000000{n}-x", "parentUuid": None,
         "isSidechain": False, "version": "2.1.56", "compactMetadata": {"trigger": "auto", "preTokens": 150000}},
        summary if cwd is None else {**summary, "cwd": cwd}])


def _write(hk, version, path, n, tool="Write"):
    rec = {"type": "assistant", "isSidechain": False, "version": version,
           "message": {"id": f"m{n}", "role": "assistant", "model": "claude-x", "content": [
               {"type": "tool_use", "id": f"t{n}", "name": tool, "input": {"file_path": str(path)}}],
               "usage": {"input_tokens": 1000 + n, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}
    hk.append_transcript([rec])
    return hk.hook(hk.event("PreToolUse", tool_name=tool, tool_input={"file_path": str(path)}, tool_use_id=f"t{n}"))


def test_an_old_agent_gets_the_scoped_rule_before_a_write_once_per_epoch(hk):
    _write_world(hk, "2.1.56")
    first = _write(hk, "2.1.56", hk.project / "src" / "new.py", 1).assert_ok()
    assert "IVPY" in (first.context or ""), first
    assert "IVPLAIN" not in first.context, "only the scoped rule the write needs"
    again = _write(hk, "2.1.56", hk.project / "src" / "new.py", 2, tool="Edit").assert_ok()
    assert "IVPY" not in (again.context or "")
    other = _write(hk, "2.1.56", hk.project / "docs" / "a.md", 3).assert_ok()
    assert "IVPY" not in (other.context or "")


def test_a_subagents_write_gets_the_scoped_rule_without_it_counting_in_view_for_the_main_context(hk):
    """The subagent writing the file needs the rule; the main model did not
    get it, so its own later write of a matching file still does."""
    _write_world(hk, "2.1.56")
    path = hk.project / "src" / "new.py"
    sub = hk.hook(hk.event("PreToolUse", tool_name="Write", tool_input={"file_path": str(path)}, tool_use_id="s1",
                           agent_id="a1", agent_type="general")).assert_ok()
    assert "IVPY" in (sub.context or ""), sub
    main = _write(hk, "2.1.56", hk.project / "src" / "other.py", 2).assert_ok()
    assert "IVPY" in (main.context or ""), main
    again = _write(hk, "2.1.56", hk.project / "src" / "third.py", 3).assert_ok()
    assert "IVPY" not in (again.context or ""), "in view in the main context now: once per epoch"


def test_an_agent_that_loads_it_on_write_gets_nothing_at_pretooluse(hk):
    _write_world(hk, "2.1.330")
    run = _write(hk, "2.1.330", hk.project / "src" / "new.py", 1).assert_ok()
    assert "IVPY" not in (run.context or "")


def test_before_the_transcript_is_on_disk_the_version_comes_from_the_agent_environment(hk):
    """A session's first tool call can run before the agent wrote its lines
    (seen with 2.1.330: the rule then came twice, the engine's and the
    agent's own after the write); the agent names itself in its hooks'
    environment (AI_AGENT=claude-code_2-1-330_harness)."""
    hk.rule("py.md", "---\npaths: src/**/*.py\n---\nMarker IVPY: type hints everywhere.\n")
    event = hk.event("PreToolUse", tool_name="Write", tool_input={"file_path": str(hk.project / "src" / "new.py")},
                     tool_use_id="t1")
    new = hk.hook(event, env={"AI_AGENT": "claude-code_2-1-330_harness"}).assert_ok()
    assert "IVPY" not in (new.context or "")
    old = hk.hook(event, env={"AI_AGENT": "claude-code_2-1-56_harness"}).assert_ok()
    assert "IVPY" in (old.context or ""), "an older agent named there still gets the rule before the write"


def test_before_the_transcript_is_on_disk_a_second_write_does_not_bring_the_scoped_rule_again(hk):
    """The session's state is the only witness until the agent writes its
    transcript: a scoped rule given before one write is in view at the next
    (Copilot CLI writes its events on a timer: its second tool call came
    before its first record in about three runs of four of
    tests/test_agents_e2e.py, and the rule then went in twice)."""
    hk.rule("py.md", "---\npaths: src/**/*.py\n---\nMarker IVPY: type hints everywhere.\n")
    old = {"AI_AGENT": "claude-code_2-1-56_harness"}

    def write(name, n):
        return hk.hook(hk.event("PreToolUse", tool_name="Write", tool_use_id=f"t{n}",
                                tool_input={"file_path": str(hk.project / "src" / name)}), env=old).assert_ok()

    assert not hk.transcript.exists()
    assert "IVPY" in (write("new.py", 1).context or "")
    assert "IVPY" not in (write("other.py", 2).context or ""), "the state says it went in"


def test_the_agent_version_is_read_from_its_environment_as_the_settings_say():
    from engine.agents import table
    from engine.agents.version import from_env

    spec = table.get("claude-code").data["version"]["env"]
    assert from_env(spec, {"AI_AGENT": "claude-code_2-1-330_harness"}) == "2.1.330"
    assert from_env(spec, {"AI_AGENT": "claude-code_2-1-330"}) == "2.1.330"
    assert from_env(spec, {"AI_AGENT": "cursor_1-2"}) is None
    assert from_env(spec, {"AI_AGENT": "claude-code_x-1_harness"}) is None
    assert from_env(spec, {}) is None
    assert from_env(None, {"AI_AGENT": "claude-code_2-1-330_harness"}) is None  # an agent that sets none


def test_after_compaction_the_unscoped_rules_come_back_with_the_switch(hk):
    """hooks.in_view.after_compact_unscoped: true brings them back (once)."""
    from hook_fixtures import shared_profile

    prof = shared_profile(json.dumps({"kind": "profile", "name": "t", "extends": "default",
                                      "hooks": {"in_view": {"after_compact_unscoped": True}}}) + "\n")
    _write_world(hk, "2.1.56")
    _compacted(hk, 1)
    ev = hk.event("SessionStart", source="compact")
    assert "IVPLAIN" in (hk.hook(ev, profile=prof).context or "")
    assert "IVPLAIN" not in (hk.hook(ev, profile=prof).context or ""), "once per epoch"
    assert "IVPLAIN" not in (hk.hook(ev).context or ""), "the default leaves them to the agent"


def test_rules_in_a_subfolder_of_the_rule_folder_are_the_agents_own_and_come_back_after_compaction(hk):
    """Claude Code reads its rule folders' subfolders too (.claude/rules/sub/x.md:
    measured with 2.1.332, an unscoped one at the start, a scoped one after a
    Read of a matching file).  Such a scoped rule in view before a compaction
    comes back after it, and an unscoped one is left to the agent's reload."""
    _write_world(hk, "2.1.56")
    (hk.project_rules / "lang").mkdir()
    (hk.project_rules / "lang" / "deep.md").write_text("---\npaths: src/**/*.py\n---\nMarker IVDEEP: deep rule.\n")
    (hk.project_rules / "lang" / "flat.md").write_text("Marker IVFLAT: unscoped deep rule.\n")
    team = hk.rule("seed.md", "Marker IVSEED.\n", where="global").parent / "team"
    team.mkdir()
    (team / "mine.md").write_text("---\npaths: src/**/*.py\n---\nMarker IVMINE: the user's deep rule.\n")
    _write(hk, "2.1.56", hk.project / "src" / "a.py", 1, tool="Read").assert_ok()
    _compacted(hk, 2)
    ctx = hk.hook(hk.event("SessionStart", source="compact")).assert_ok().context or ""
    assert "IVDEEP" in ctx and "IVMINE" in ctx and "IVPY" in ctx, ctx
    assert ctx.index("IVMINE") < ctx.index("IVDEEP"), "the user's own first"
    assert "IVFLAT" not in ctx and "IVPLAIN" not in ctx and "IVSEED" not in ctx, "the agent reloads those itself"


@pytest.mark.parametrize("where", ["started in the subfolder", "cd into it"])
def test_a_rules_paths_are_relative_to_the_folder_holding_its_rule_folder_not_the_working_one(hk, where):
    """A monorepo's root rule `paths: svc/**/*.py`, with the agent working in
    svc/ (started there, or after `cd svc`): Claude Code matches the globs
    from the folder holding .claude (measured with 2.1.332: a Read of
    svc/lib/a.py loads it, and a `lib/*.py` rule does not come).  Touched
    before a compaction, it comes back after it; before a write (an older
    agent) it is given."""
    (hk.project / ".git").mkdir()
    svc = hk.project / "svc"
    (svc / "lib").mkdir(parents=True)
    hk.rule("svc-py.md", "---\npaths: svc/**/*.py\n---\nMarker IVSVC: services log as JSON.\n")
    hk.rule("lib-py.md", "---\npaths: lib/*.py\n---\nMarker IVLIB: a glob from the working folder.\n")
    first_cwd = str(svc if where == "started in the subfolder" else hk.project)
    hk.write_transcript([{"type": "user", "isSidechain": False, "version": "2.1.56", "cwd": first_cwd,
                          "message": {"role": "user", "content": "go"}}])
    _write(hk, "2.1.56", svc / "lib" / "a.py", 1, tool="Read")
    _compacted(hk, 3, cwd=str(svc))
    ctx = hk.hook(hk.event("SessionStart", source="compact", cwd=str(svc))).assert_ok().context or ""
    assert "IVSVC" in ctx and "IVLIB" not in ctx, ctx
    write = hk.event("PreToolUse", tool_name="Write", tool_input={"file_path": str(svc / "lib" / "b.py")},
                     tool_use_id="t9", cwd=str(svc), session_id="other-session")
    before = hk.hook(write, env={"AI_AGENT": "claude-code_2-1-56_harness"}).assert_ok().context or ""
    assert "IVSVC" in before and "IVLIB" not in before, before


def test_a_glob_without_a_slash_names_a_file_in_any_folder_as_the_agent_reads_it(hk):
    """`paths: "*.py"` loads the rule for src/deep/a.py (measured with
    Claude Code 2.1.332, as gitignore reads a name; `src/*.py` and
    `deep/a.py` do not): touched before a compaction, it comes back after it."""
    _write_world(hk, "2.1.56")
    hk.rule("star.md", "---\npaths: \"*.{py,pyi}\"\n---\nMarker IVSTAR: any python file.\n")
    hk.rule("one.md", "---\npaths: src/*.py\n---\nMarker IVONE: one folder down only.\n")
    hk.rule("tail.md", "---\npaths: deep/a.py\n---\nMarker IVTAIL: from the root only.\n")
    hk.rule("every.md", "---\npaths: \"*\"\n---\nMarker IVEVERY: any file, once one is read.\n")
    hk.rule("everyd.md", "---\npaths: \"**/*\"\n---\nMarker IVEVERYD: any file too, once one is read.\n")
    hk.rule("always.md", "---\npaths: \"**\"\n---\nMarker IVALWAYS: loaded at the start.\n")
    _write(hk, "2.1.56", hk.project / "src" / "deep" / "a.py", 1, tool="Read").assert_ok()
    _compacted(hk, 4)
    ctx = hk.hook(hk.event("SessionStart", source="compact")).assert_ok().context or ""
    assert "IVSTAR" in ctx and "IVPY" in ctx, ctx
    assert "IVEVERY:" in ctx and "IVEVERYD" in ctx, "`*` and `**/*` are scoped (loaded after a Read, measured)"
    assert "IVALWAYS" not in ctx, "`**` the agent loads at the start (measured), and reloads itself"
    assert "IVONE" not in ctx and "IVTAIL" not in ctx, ctx
