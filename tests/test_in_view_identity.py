"""What is in view is known by identity, never by a name (issue 23, item 2):
a rule file is its real path and content digest, and only the id the
engine made for a delivery (engine/hooks/delivery.py) says the engine
delivered it.  A project rule sharing the user's rule's base name, or
holding its name as a heading, does not make the user's rule count as in
view; the engine's real output, as the agent records it (the source line
first), is recognised by its id; a delivery the agent never recorded did
not reach the model.  Transcripts in the shapes Claude Code 2.1.330 writes
(see tests/test_in_view_agent.py for the real agent)."""

import json
import re
from pathlib import Path

import pytest

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

REPO = Path(__file__).resolve().parent.parent
VERSION = "2.1.330"
USER_RULE = "# Release\nMarker USERRELEASE: tag only from the main branch.\n"
ID = re.compile(r"\[rules-engine delivery ([0-9a-f]{16})\]")


def _profile(**top):
    """Rules at every prompt (the growth cadence still holds back what is in
    view); the same profile as tests/test_rules_origin.py's, so it compiles once."""
    return shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1,
                                                              "budget": {"chars": 30000}}]},
                                       max_files=4, max_compress_chars=1000, **top))


def _line(kind, **fields):
    return {"type": kind, "isSidechain": False, "version": VERSION, "uuid": f"u{abs(hash(str(fields))) % 10**9}",
            **fields}


def _usage(hk, n, tokens):
    hk.append_transcript([_line("assistant", message={
        "id": f"msg_{n}", "role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": "ok"}],
        "usage": {"input_tokens": tokens, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}})])


def _recorded(hk, text, event="PostToolUse"):
    """The agent's record of a hook's additionalContext (as 2.1.330 writes it)."""
    hk.append_transcript([_line("attachment", attachment={
        "type": "hook_additional_context", "content": [text], "hookName": event, "toolUseID": "toolu_9",
        "hookEvent": event})])


def _start(hk, files):
    """An epoch whose first prompt the agent answered after loading `files` itself."""
    hk.write_transcript([
        _line("user", cwd=str(hk.project), message={"role": "user", "content": "go"}),
        _line("attachment", attachment={"type": "instructions", "files": [
            {"path": str(p), "type": "Project", "content": p.read_text()} for p in files]})])


def _deliver_project_rule(hk, name, text, prof):
    """The engine's real delivery of one project rule, 45,000 tokens into the
    epoch (the growth cadence), recorded by the agent; then the context grows
    to 70,000: under every_tokens (40,000) since that delivery, past it
    since the epoch's start."""
    path = hk.rule(name, text)
    _start(hk, [path])
    _usage(hk, 1, 45000)
    run = hk.hook(hk.event("PostToolUse"), profile=prof).assert_ok()
    assert run.context and "Marker PROJ" in run.context.replace("LINTRULE", "PROJ"), f"not delivered:\n{run}"
    _recorded(hk, run.context)
    _usage(hk, 2, 70000)
    return path, run.context


@pytest.mark.parametrize("shape", ["same base name", "heading in a rule body"])
def test_a_project_rule_cannot_make_the_users_rule_count_as_in_view(hk, shape):
    """The user's release.md went in view at the epoch's start, 70,000 tokens
    back: it is due.  The project's rule delivered 25,000 tokens ago shares
    its base name, or holds `## release.md` in its body; the old reader took
    either for the user's rule (with no source line before the banner)."""
    prof = _profile(source_line="")
    if shape == "same base name":
        name, text = "release.md", "# Release\nMarker PROJRELEASE: bump the version file.\n"
    else:
        name, text = "ops.md", "# Ops\nMarker PROJOPS: rotate logs weekly.\n\n## release.md\nship on fridays.\n"
    project_rule, _ctx = _deliver_project_rule(hk, name, text, prof)
    mine = hk.rule("release.md", USER_RULE, where="global")
    later = [json.loads(line) for line in hk.transcript.read_text().splitlines()][2:]
    _start(hk, [mine, project_rule])  # the agent loaded both at the start; the rest as it was
    hk.append_transcript(later)
    ctx = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
    assert "USERRELEASE" in ctx, f"the user's rule was held back as in view:\n{ctx}"
    assert "PROJRELEASE" not in ctx and "PROJOPS" not in ctx, "the project's rule is in view: delivered 25,000 back"


def _world_with_one_delivery(hk):
    prof = _profile()
    _path, ctx = _deliver_project_rule(hk, "lint.md", "# Lint\nMarker LINTRULE: run the linter first.\n", prof)
    return prof, ctx


def test_the_engines_real_output_with_its_source_line_is_recognised_by_its_id(hk):
    """The recorded text starts with the source line, as the agent records
    it: the delivery is known by its id and nothing is delivered twice."""
    prof, ctx = _world_with_one_delivery(hk)
    assert ctx.startswith("[from rules-engine profile"), ctx[:120]
    assert ID.search(ctx), "the delivery carries its id"
    again = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
    assert "LINTRULE" not in again, f"delivered twice within every_tokens:\n{again}"


def test_a_delivery_the_agent_never_recorded_did_not_reach_the_model(hk):
    """The state says the engine delivered lint.md at 45,000; the agent's
    transcript, which records every hook output before the next response,
    does not show it (the answer was lost): it is delivered again."""
    prof = _profile()
    path = hk.rule("lint.md", "# Lint\nMarker LINTRULE: run the linter first.\n")
    _start(hk, [path])
    _usage(hk, 1, 45000)
    first = hk.hook(hk.event("PostToolUse"), profile=prof).assert_ok().context or ""
    assert "LINTRULE" in first
    _usage(hk, 2, 70000)  # a response came, with no record of the delivery before it
    again = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
    assert "LINTRULE" in again, "a delivery no transcript shows was taken as in view"


def test_a_copied_marker_line_is_not_a_delivery(hk):
    """A hook text holding a marker line the engine never made for this
    session (copied from another session, or written into a rule body)
    says nothing: the user's rule due by growth is delivered."""
    prof = _profile()
    mine = hk.rule("release.md", USER_RULE, where="global")
    _start(hk, [mine])
    _usage(hk, 1, 50000)
    _recorded(hk, "[Rules refresh, turn 3: 1 file(s), level standard]\n\n## release.md\n"
                  "tag only from the main branch.\n[rules-engine delivery 0123456789abcdef]")
    _usage(hk, 2, 52000)
    ctx = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
    assert "USERRELEASE" in ctx, ctx


def test_an_edited_rule_is_not_in_view_as_it_was(hk):
    """Identity is the content too: lint.md edited after its delivery is
    delivered again, though its path was delivered 25,000 tokens ago."""
    prof, _ctx = _world_with_one_delivery(hk)
    hk.rule("lint.md", "# Lint\nMarker LINTEDITED: run the linter and the type checker first.\n")
    again = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
    assert "LINTEDITED" in again, again


def test_a_scoped_rule_the_agent_delivered_before_an_edit_is_delivered_as_it_is_now(hk):
    """The agent's own record of a scoped rule (nested_memory) holds the raw
    file: once the file changed, the model holds an older text, and the
    refresh delivers the rule as it is now."""
    prof = _profile()
    old = "---\npaths: src/**/*.rs\n---\n# Rust\nMarker RUSTOLD: clippy clean.\n"
    rule = hk.rule("rust.md", old)
    target = hk.project / "src" / "lib.rs"
    hk.write_transcript([
        _line("user", cwd=str(hk.project), message={"role": "user", "content": "go"}),
        _line("assistant", message={"id": "m1", "role": "assistant", "model": "claude-x", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(target)}}],
            "usage": {"input_tokens": 3000, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}),
        _line("attachment", attachment={"type": "nested_memory", "path": str(rule), "content": {
            "path": str(rule), "type": "Project", "content": "# Rust\nMarker RUSTOLD: clippy clean.\n",
            "globs": ["src/**/*.rs"], "rawContent": old, "isRule": True}}),
    ])
    _usage(hk, 2, 5000)
    held = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
    assert "RUSTOLD" not in held, "the agent's own copy is in view"
    hk.rule("rust.md", old.replace("RUSTOLD: clippy clean", "RUSTNEW: clippy clean, no unsafe"))
    ctx = hk.hook(hk.prompt(2), profile=prof).assert_ok().context or ""
    assert "RUSTNEW" in ctx, ctx


def test_a_resumed_session_still_knows_what_the_engine_delivered(hk):
    """SessionEnd forgets the session's counters, not its deliveries: the
    agent resumes the session with its transcript (deliveries included), and
    the next prompt does not deliver lint.md a second time."""
    prof, _ctx = _world_with_one_delivery(hk)
    hk.hook(hk.event("SessionEnd", reason="prompt_input_exit"), profile=prof).assert_ok()
    assert all('"turn"' not in p.read_text() for p in hk.session_files()), "the counters are forgotten"
    again = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
    assert "LINTRULE" not in again, f"delivered a second time after a resume:\n{again}"


def test_delivery_records_read_back_and_only_well_formed_ids_count():
    """The state record of a delivery reads back its files by identity; a
    marker line counts only with 16 hex digits and the format's closing."""
    from engine.hooks import delivery
    from engine.hooks.plan import Item

    items = [Item("a.md", "/p/.claude/rules/a.md", 5, 10, 10, "x", 3, "project", "/p/.claude/rules/a.md", "0" * 16),
             Item("b.md", "/h/b.md", 5, 10, 10, "y", 3, "user", "/h/real b.md", "f" * 16),
             Item("c.md", "/p/c\nd.md", 5, 10, 10, "z", 3, "project", "/p/c\nd.md", "1" * 16)]
    epoch_id, position, files, witnessed, stays = delivery.parse(delivery.record("next:start", 4200, items))
    assert (epoch_id, position, witnessed, stays) == ("next:start", 4200, True, False)
    assert delivery.parse(delivery.record("next:start", 4200, items, witnessed=False))[1:] == (4200, files, False, False)
    assert delivery.parse(delivery.record("r9:x", 42, items, False, stays=True)) == ("r9:x", 42, files, False, True)
    assert delivery.parse(delivery.record("r9", 42, items, stays=True))[3:] == (True, True)
    assert files == {("/p/.claude/rules/a.md", "0" * 16), ("/h/real b.md", "f" * 16)}, "a path with a line break is left out"
    fmt = "[rules-engine delivery {id}]"
    text = ("[rules-engine delivery 0123456789abcdef] [rules-engine delivery 0123456789ABCDEF] "
            "[rules-engine delivery 0123456789abcde] [rules-engine delivery 0123456789abcdef0] "
            "[rules-engine delivery [rules-engine delivery fedcba9876543210]")
    assert delivery.found_in(text, fmt) == ["0123456789abcdef", "fedcba9876543210"]
    assert delivery.found_in(text, "") == [] and delivery.parse("garbage") is None


def test_records_of_epochs_no_longer_read_are_forgotten():
    from engine.hooks import delivery
    from engine.hooks.inview import Epoch

    previous, current = Epoch("c1a2b3c4", after="start"), Epoch("d5e6f7a8", after="c1a2b3c4")
    current.delivered["cccccccccccccccc"] = 900
    snap = {"ivd:aaaaaaaaaaaaaaaa": "start\t100\n0000000000000000\t/r/a.md",  # two epochs back
            "ivd:bbbbbbbbbbbbbbbb": "next:start\t0\n0000000000000000\t/r/a.md",  # the previous epoch, by its other name
            "ivd:cccccccccccccccc": "start\t50\n0000000000000000\t/r/c.md",  # recorded earlier, witnessed now
            "ivd:dddddddddddddddd": "", "turn": 4}
    assert delivery.forgotten(snap, [previous, current]) == {"ivd:aaaaaaaaaaaaaaaa": ""}


def test_the_first_prompt_does_not_repeat_what_the_session_start_delivered(hk):
    """Claude Code writes a new session's transcript after its first
    UserPromptSubmit hook: what the engine gave at the session's start goes
    in the same first request, so the first prompt gives it no second copy
    (the state's record of the start's delivery is all there is then)."""
    from hook_fixtures import profile_text, shared_profile

    docs = hk.project / "docs" / "rules"
    docs.mkdir(parents=True)
    (docs / "naming.md").write_text("# Naming\nName each test after what it checks (FIRST_5e1a).\n")
    prof = shared_profile(profile_text({"prompt": [
        {"name": "rules", "every_turns": 1, "sources": [{"dir": "{project}/docs/rules", "glob": "*.md"}]}]}))
    start = hk.hook(hk.event("SessionStart", source="startup"), profile=prof)
    assert "FIRST_5e1a" in start.context, str(start)
    first = hk.hook(hk.prompt(1), profile=prof)
    assert "FIRST_5e1a" not in (first.context or ""), str(first)
    second = hk.hook(hk.prompt(2), profile=prof)
    assert "FIRST_5e1a" in (second.context or ""), "from the second prompt on, only the transcript says what is in view"


def test_what_copilot_got_during_a_background_compaction_stays_in_view_after_it(tmp_path):
    """Copilot compacts in the background and keeps what the turn added
    after the compaction started behind its summary
    (tests/support/AGENTS-MEASURED.md, "After a compaction"): a delivery
    recorded then is in view in the new epoch, from its start; one made
    before the start is summarized away.  The recorded Copilot 1.0.102
    session, cut after the first compaction, with the engine's marker in
    the postToolUse output of a call before the start, one during the
    compaction and one after it."""
    import yaml

    from engine.agents import table
    from engine.agents.spec import Agent
    from engine.hooks import inview
    from testdata import agent_transcript

    settings = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["hooks"]
    fmt = settings["in_view"]["delivery_marker"]
    lines = agent_transcript("copilot", "compacting").read_text(encoding="utf-8").splitlines(keepends=True)
    kinds = [json.loads(line)["type"] for line in lines]
    start, done = kinds.index("session.compaction_start"), kinds.index("session.compaction_complete")
    ids = {"before": "a" * 16, "during": "b" * 16, "after": "c" * 16}
    posts = [i for i, kind in enumerate(kinds)
             if kind == "hook.end" and json.loads(lines[i])["data"].get("hookType") == "postToolUse"]
    at = {"before": max(i for i in posts if i < start), "during": min(i for i in posts if start < i < done),
          "after": min(i for i in posts if i > done)}
    for name, i in at.items():
        rec = json.loads(lines[i])
        rec["data"]["output"]["additionalContext"] += "\n" + fmt.replace("{id}", ids[name])
        lines[i] = json.dumps(rec) + "\n"
    path = tmp_path / "events.jsonl"
    path.write_text("".join(lines[:at["after"] + 1]), encoding="utf-8")
    iv = inview.read(Agent(table.agents()["copilot"]), str(path), str(tmp_path), settings)
    assert iv.previous is not None and set(iv.previous.delivered) == {ids["before"], ids["during"]}
    assert set(iv.current.delivered) == {ids["during"], ids["after"]}
    assert iv.current.delivered[ids["during"]] == 0
    # A tool call while it runs, after preCompact (cadence.compaction_ahead): the current epoch
    # is the one it will begin, holding what the turn added since it began, its start files
    # reloaded; a delivery recorded there belongs to that epoch once the summary is written.
    spec = Agent(table.agents()["copilot"])
    path.write_text("".join(lines[:at["during"] + 1]), encoding="utf-8")
    ahead = inview.read(spec, str(path), str(tmp_path), settings, begins="background")
    assert ahead.previous.keeping and ahead.current.carried == (ahead.previous.keeping,)
    assert ahead.current.id == "next:" + ahead.previous.id and ahead.current.loads == "compact"
    assert ahead.current.delivered == {ids["during"]: 0}, "what the summary keeps"
    assert ids["before"] in ahead.previous.delivered
    path.write_text("".join(lines[:start]), encoding="utf-8")  # its start not written yet: nothing kept
    early = inview.read(spec, str(path), str(tmp_path), settings, begins="background")
    assert early.current.id == "next:" + early.previous.id and early.current.delivered == {}
    path.write_text("".join(lines[:at["after"] + 1]), encoding="utf-8")  # written already: that epoch
    done_already = inview.read(spec, str(path), str(tmp_path), settings, begins="background")
    assert done_already.current.id == iv.current.id and ahead.current.id in done_already.current.ids


def test_what_copilot_got_unrecorded_during_a_background_compaction_stays_in_view_after_it(tmp_path):
    """Copilot's preToolUse context is in no transcript record
    (`transcript.unwitnessed` of copilot.yaml): the session's state alone
    says it went in.  One given while the compaction runs is kept behind
    the summary like the rest of the turn's additions, so the epoch after
    the compaction has it from its start; one given before the compaction
    started is summarized away.  The recorded Copilot 1.0.102 session, cut
    inside its first compaction for the delivery, then after it."""
    import yaml

    from engine.agents import table
    from engine.agents.spec import Agent
    from engine.hooks import delivery, inview
    from engine.hooks.plan import Item
    from testdata import agent_transcript

    settings = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["hooks"]
    lines = agent_transcript("copilot", "compacting").read_text(encoding="utf-8").splitlines(keepends=True)
    kinds = [json.loads(line)["type"] for line in lines]
    start, done = kinds.index("session.compaction_start"), kinds.index("session.compaction_complete")
    path = tmp_path / "events.jsonl"
    copilot = Agent(table.agents()["copilot"])

    def read(upto):
        path.write_text("".join(lines[:upto]), encoding="utf-8")
        return inview.read(copilot, str(path), str(tmp_path), settings)

    def item(name, digest):
        real = f"/p/.github/instructions/{name}"
        return Item(name, real, 5, 10, 10, "x", 3, "project", real, digest)

    before, during = read(start - 1), read(start + 2)
    assert before.current.record_id(witnessed=False) == before.current.id
    assert during.current.record_id(witnessed=False).startswith(inview.KEPT)
    assert during.current.record_id(witnessed=True) == during.current.id == before.current.id
    snap = {"ivd:" + "a" * 16: delivery.record(before.current.record_id(False), 900, [item("early.md", "1" * 16)], False),
            "ivd:" + "b" * 16: delivery.record(during.current.record_id(False), 950, [item("mid.md", "2" * 16)], False)}
    early, mid = ("/p/.github/instructions/early.md", "1" * 16), ("/p/.github/instructions/mid.md", "2" * 16)
    assert delivery.positions(snap, during.current, [], inview.witnesses(during)) == {early: 900, mid: 950}

    after = read(done + 3)
    assert after.current.id != after.previous.id == before.current.id
    witnessing = inview.witnesses(after)
    assert delivery.positions(snap, after.current, [after.previous], witnessing) == {mid: 0}
    assert delivery.positions(snap, after.previous, [after.current], witnessing) == {early: 900, mid: 950}
    assert delivery.forgotten(snap, [after.previous, after.current]) == {}


@pytest.mark.parametrize("agent", ["copilot", "gemini"])
def test_a_resume_that_leaves_out_what_hooks_added_begins_an_epoch(tmp_path, agent):
    """Copilot 1.0.102 and Gemini 0.61.0 resume a session without what
    hooks added at its start (their YAML's transcript.resumed): a resume is
    a boundary, like a compaction, in which the agent has its own start
    files again.  The recorded resumed sessions, read as a hook reads them
    (backwards, bounded): the engine's marker in a hook's addition before
    the resume is in the epoch before, none in the resumed one.  At the
    resume's own session start, before the agent wrote the resume's record,
    the epoch is a fresh one after the last; a delivery recorded there
    belongs to the resumed epoch once the record is read.  Claude Code and
    Codex keep all of it: a resume there is no boundary."""
    import yaml

    from engine.agents import table
    from engine.agents.spec import Agent
    from engine.hooks import delivery, inview
    from engine.hooks.plan import Item
    from testdata import agent_transcript

    settings = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["hooks"]
    fmt = settings["in_view"]["delivery_marker"]
    lines = agent_transcript(agent, "resumed").read_text(encoding="utf-8").splitlines(keepends=True)
    resume_mark = '"session.resume"' if agent == "copilot" else '"projectHash"'
    at = [i for i, line in enumerate(lines) if resume_mark in line][-1]
    hooked = next(i for i, line in enumerate(lines) if ("additionalContext" in line if agent == "copilot"
                                                        else "<hook_context>" in line))
    if agent == "copilot":
        rec = json.loads(lines[hooked])
        rec["data"]["output"]["additionalContext"] += "\n" + fmt.replace("{id}", "a" * 16)
        lines[hooked] = json.dumps(rec) + "\n"
    else:
        lines[hooked] = lines[hooked].replace("</hook_context>", "\\n" + fmt.replace("{id}", "a" * 16) + "</hook_context>", 1)
    path = tmp_path / "session.jsonl"
    spec = Agent(table.agents()[agent])

    def read(upto, begins=None):
        path.write_text("".join(lines[:upto]), encoding="utf-8")
        return inview.read(spec, str(path), str(tmp_path), settings, begins)

    whole = read(len(lines))
    assert whole.previous is not None and whole.current.id == f"r{sum(len(x.encode()) for x in lines[:at])}"
    assert "a" * 16 in whole.previous.delivered and whole.current.delivered == {}
    assert whole.current.loads == "start" and whole.previous.loads == "start"
    # the resume's session start, its record not written yet: a fresh epoch after the last
    early = read(at, begins="start")
    assert early.current.id == "next:" + early.previous.id and early.current.tokens is None
    real = "/p/.cursor/rules/names.mdc"
    snap = {"ivd:" + "b" * 16: delivery.record(early.current.record_id(True), 0, [Item(
        "names.mdc", real, 5, 10, 10, "x", 3, "project", real, "1" * 16)], True)}
    assert delivery.positions(snap, whole.current, [whole.previous], False) == {(real, "1" * 16): 0}
    # what the agent's resumed run still holds (a delivery at an event it keeps: `stays`) is in view
    # from the resumed epoch's start, as long as the transcript showed it before the resume
    witnessing = inview.witnesses(whole)
    before = "/p/.cursor/rules/before.mdc"
    for stays, shown, expected in ((True, "a", {(before, "2" * 16): 0}), (False, "a", {}), (True, "c", {})):
        snap = {"ivd:" + shown * 16: delivery.record(whole.previous.id, 40, [Item(
            "before.mdc", before, 5, 10, 10, "x", 3, "project", before, "2" * 16)], True, stays)}
        assert delivery.positions(snap, whole.current, [whole.previous], witnessing) == expected, (stays, shown)
        assert delivery.forgotten(snap, [whole.previous, whole.current]) == {}
    assert whole.current.survives == whole.previous.ids
    # an agent that keeps it all: no boundary at the same record
    keeps = Agent({**table.agents()[agent], "transcript": {**table.agents()[agent]["transcript"], "resumed": None}})
    path.write_text("".join(lines), encoding="utf-8")
    kept = inview.read(keeps, str(path), str(tmp_path), settings)
    assert kept.previous is None and "a" * 16 in kept.current.delivered


@pytest.mark.parametrize("agent, kept", [("copilot", {"prompt", "post_tool"}), ("gemini", {"post_tool"}),
                                         ("claude-code", set()), ("codex", set())])
def test_a_delivery_says_whether_the_agents_resumed_runs_still_hold_it(agent, kept):
    """Per the agent's YAML (transcript.resumed, measured): Copilot 1.0.102's
    resumed runs hold what userPromptSubmitted and postToolUse added,
    Gemini 0.61.0's what AfterTool added (twice), neither what the session's
    start added; an event the YAML does not name is held once, where the
    agent shows its additions at all (not Copilot's agentStop; Gemini's
    BeforeTool context waits for a later event, which may be a prompt).
    A subagent's start is the subagent's own.  Claude Code and Codex keep
    it all: a resume is no boundary there, and no delivery needs to say it."""
    from types import SimpleNamespace

    from engine.agents import table
    from engine.agents.spec import Agent
    from engine.hooks import inview

    spec = Agent(table.agents()[agent])
    events = ("session_start", "prompt", "pre_tool", "post_tool", "stop", "subagent_start")

    def stays(name):
        return inview._stays(SimpleNamespace(agent=spec, name=name, opens_a_subagent=name == "subagent_start"))
    assert {e for e in events if stays(e)} == kept


def test_a_gemini_compression_begins_an_epoch_where_a_hook_reads_the_chat_file(tmp_path):
    """Gemini CLI 0.61.0 writes a compression as a `$set` of a history
    shorter than the one before it, with messages it never had: a line
    alone does not say it, so its chat file's tail is read forwards.  The
    recorded session (a first run, then `--resume latest` under a tiny
    compressionThreshold, which compresses before the new prompt), read as
    a hook reads it: the epoch before is the resumed run's, the current one
    the compression's, in which Gemini has reloaded its root GEMINI.md
    files (loads `compact`)."""
    import yaml

    from engine.agents import table
    from engine.agents.spec import Agent
    from engine.agents.transcripts import backwards, compaction_written_after, tail
    from engine.hooks import inview
    from testdata import agent_transcript

    settings = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["hooks"]
    path = str(agent_transcript("gemini"))
    iv = inview.read(Agent(table.agents()["gemini"]), path, str(tmp_path), settings)
    assert iv.previous.id.startswith("r") and iv.previous.tokens is None, "the resumed run made no call before it"
    assert iv.current.id not in ("start", iv.previous.id) and iv.current.loads == "compact"
    assert iv.current.tokens == 7200
    kinds = ("compaction", "resume")
    assert [r.kind for r in tail("gemini", path, 1 << 20, kinds)] == ["compaction", "resume"]
    assert [r.kind for r in backwards("gemini", path, 1 << 20, kinds)] == ["resume"], "a line alone tells no compression"
    # what a hook tests first (the line heads written since a response): a patch of the history after it
    lines = Path(path).read_bytes().splitlines(keepends=True)
    at = [i for i, line in enumerate(lines) if line.startswith(b'{"$set": {"messages"')][-1]  # the compression
    start = sum(len(line) for line in lines[:at])
    assert compaction_written_after("gemini", path, start, 1 << 20)
    assert not compaction_written_after("gemini", path, start + len(lines[at]), 1 << 20)
    assert not compaction_written_after("gemini", path, 0, len(lines[-1]) + len(lines[-2])), "read back no further"
