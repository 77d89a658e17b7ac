"""Nothing dropped in silence (issue 17, item 4): a rule set over the budget
is delivered whole across the following events, in priority order
(overflow: pending, the default), or each omitted file is named in a digest
line with its title and how to read it (overflow: digest).  Real hook
processes, as the agent starts them."""

import json
import os
import re

import pytest

from hook_fixtures import profile_text, shared_profile, transcript_records
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

LINES = 55  # ~2,500 characters a file: 3 of them fit the 8,000-character budget


def _rule(marker, priority, title=None):
    head = f"---\npriority: {priority}\n---\n# {title or marker + ' rules'}\n"
    return head + "".join(f"{marker} item {i:04d}: zebra quartz lantern orbit.\n" for i in range(LINES))


def _six(hk):
    """Six rule files, priorities 1..6, two of them global; in the delivery
    order: the user's own first (2 and 5), then the project's by priority."""
    markers = ["RUONE", "RUTWO", "RUTHREE", "RUFOUR", "RUFIVE", "RUSIX"]
    for n, m in enumerate(markers, 1):
        hk.rule(_name(m), _rule(m, n), where="global" if n in (2, 5) else "project")
    return [markers[1], markers[4], markers[0], markers[2], markers[3], markers[5]]


PRIORITY = {m: n for n, m in enumerate(["RUONE", "RUTWO", "RUTHREE", "RUFOUR", "RUFIVE", "RUSIX"], 1)}


def _name(marker):
    return f"{chr(ord('z') - PRIORITY[marker])}-{marker.lower()}.md"


def _whole(ctx, marker):
    return all(f"{marker} item {i:04d}" in ctx for i in range(LINES))


def _ctx(run):
    assert run.returncode == 0, str(run)
    assert "Traceback" not in run.stderr, str(run)
    return run.context or ""


def test_over_budget_rules_arrive_whole_across_events_in_priority_order(hk):
    markers = _six(hk)
    first = _ctx(hk.hook(hk.event("SessionStart", source="compact")))
    inside = [m for m in markers if f"{m} item" in first]
    assert inside == markers[:3], f"the first delivery holds the first three in delivery order:\n{first[:300]}"
    assert all(_whole(first, m) for m in inside), "rules are delivered whole"
    assert "3 more rule(s) follow at the next event" in first, first[-300:]
    # The next event is a tool call (an agentic session): the rest comes there.
    second = _ctx(hk.hook(hk.event("PostToolUse")))
    later = [m for m in markers if f"{m} item" in second]
    assert later == markers[3:], f"the rest follows at the next event, in order:\n{second[:300]}"
    assert all(_whole(second, m) for m in later)
    assert "follow at the next event" not in second
    # Every rule delivered exactly once; the round is over.
    both = first + second
    assert [both.count(f"{m} item 0000") for m in markers] == [1] * 6
    assert sorted(markers, key=both.index) == markers
    assert "item" not in _ctx(hk.hook(hk.event("PostToolUse"))), "nothing is left pending"


def test_pending_rules_come_with_the_next_prompt_and_a_compaction_starts_over(hk):
    markers = _six(hk)
    _ctx(hk.hook(hk.event("SessionStart", source="compact")))
    # A compaction before the rest arrived: the earlier part left the context
    # with the summary, so the round starts again from the first rule.
    again = _ctx(hk.hook(hk.event("SessionStart", source="compact")))
    assert [m for m in markers if f"{m} item" in again] == markers[:3]
    nxt = _ctx(hk.hook(hk.prompt(1)))  # not a cadence turn: only what is pending
    assert [m for m in markers if f"{m} item" in nxt] == markers[3:]


def test_a_part_deferred_at_a_compaction_starts_its_round_over(hk):
    """Two CLAUDE.md files over the instructions budget are a round in two
    parts; a compaction comes after the first part, and the rules take that
    event's room, so the instructions wait for the next event (deferred).
    The round starts over there: the user's CLAUDE.md, delivered before the
    compaction, left with the compacted context and comes again first."""
    hk.rule("r.md", "# Rules\n" + "".join(f"RULEA item {i:04d}: zebra quartz lantern orbit.\n" for i in range(120)))
    hk.claude_md("# Mine\n" + "".join(f"USERMD item {i:04d}: zebra quartz lantern orbit.\n" for i in range(100)),
                 where="user")
    hk.claude_md("# Project\n" + "".join(f"PROJMD item {i:04d}: zebra quartz lantern orbit.\n" for i in range(100)))

    def got(ctx):
        return [m for m in ("RULEA", "USERMD", "PROJMD") if f"{m} item 0000" in ctx]

    assert got(_ctx(hk.hook(hk.event("SessionStart", source="compact")))) == ["RULEA"]  # the instructions wait
    assert got(_ctx(hk.hook(hk.event("PostToolUse")))) == ["USERMD"]  # the round's first part
    assert got(_ctx(hk.hook(hk.event("SessionStart", source="compact")))) == ["RULEA"]  # waiting again
    after = [got(_ctx(hk.hook(hk.event("PostToolUse")))) for _ in range(3)]
    assert after == [["USERMD"], ["PROJMD"], []], after


def test_a_tool_call_where_the_round_goes_on_and_the_growth_cadence_is_due_gives_each_rule_once(hk):
    """rules_pending and rules_on_growth both run the rules handler at a
    PostToolUse; the file the round still owes went in twice in one answer."""
    for m in ("RUONE", "RUTWO", "RUTHREE", "RUFOUR"):
        hk.rule(_name(m), _rule(m, PRIORITY[m]))
    assert "[1 more rule(s) follow" in _ctx(hk.hook(hk.event("SessionStart", source="compact")))
    records = transcript_records(50000)  # the context grew past every_tokens (40,000): the growth cadence is due
    for rec in records:
        rec["version"] = "2.1.56"
    hk.write_transcript(records)
    ctx = _ctx(hk.hook(hk.event("PostToolUse")))
    assert ctx.count("RUFOUR item 0000") == 1, ctx[:400]


def test_subagent_tool_calls_do_not_take_pending_rules(hk):
    markers = _six(hk)
    _ctx(hk.hook(hk.event("SessionStart", source="compact")))
    sub = _ctx(hk.hook(hk.event("PostToolUse", agent_id="a1", agent_type="general")))
    assert "item" not in sub, "a subagent's context is not the one the first part went to"
    main = _ctx(hk.hook(hk.event("PostToolUse")))
    assert [m for m in markers if f"{m} item" in main] == markers[3:]


DIGEST = re.compile(r"^\[Rule not injected — size limit reached: (.+)\. Read (.+)\]$", re.M)


def test_digest_names_each_omitted_file_with_its_title_and_how_to_read_it(hk):
    markers = _six(hk)
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "overflow": "digest"}]}))
    ctx = _ctx(hk.hook(hk.event("SessionStart", source="compact"), profile=prof))
    inside = [m for m in markers if f"{m} item" in ctx]
    assert inside == markers[: len(inside)] and 1 <= len(inside) <= 3
    named = DIGEST.findall(ctx)
    omitted = markers[len(inside):]
    assert [t for t, _ in named] == [f"{m} rules" for m in omitted], ctx[-600:]
    for (_t, path), m in zip(named, omitted):
        want = f"~/.claude/rules/{_name(m)}" if PRIORITY[m] in (2, 5) else f".claude/rules/{_name(m)}"
        assert path == want
    # Within the budget: the rule texts and the digest lines together.
    body = ctx.split("\n", 1)[1]
    assert len(body) <= 8000 + 300, len(body)  # + the headings, each saying whose the file is
    assert "follow at the next event" not in ctx
    assert "item" not in _ctx(hk.hook(hk.event("PostToolUse"), profile=prof)), "digest mode leaves nothing pending"


def test_a_file_that_cannot_fit_alone_is_named_not_kept_waiting(hk):
    hk.rule("a-small.md", "# Small\nMarker SMALLONE: tiny.\n")
    hk.rule("b-huge.md", "# Huge handbook\n" + "".join(f"HUGE item {i:04d}: zebra quartz lantern orbit.\n"
                                                        for i in range(400)))
    ctx = _ctx(hk.hook(hk.event("SessionStart", source="compact")))
    assert "SMALLONE" in ctx and "HUGE item" not in ctx
    assert DIGEST.findall(ctx) == [("Huge handbook", ".claude/rules/b-huge.md")], ctx[-300:]
    assert "follow at the next event" not in ctx
    assert "HUGE item" not in _ctx(hk.hook(hk.event("PostToolUse")))


# -- engine validate and engine install warn (stderr, exit 0) --------------------------

WARNING = re.compile(r"^warning: rules: the active rule set cannot fit one delivery: (\d+) file\(s\), ([\d,]+) chars",
                     re.M)


def _check_warning(run, hk):
    assert run.returncode == 0, str(run)
    assert "Traceback" not in run.stderr
    m = WARNING.search(run.stderr)
    assert m, f"no warning on stderr:\n{run}"
    assert m.group(1) == "6" and int(m.group(2).replace(",", "")) > 8000
    line = run.stderr[m.start():].split("\n", 1)[0]
    for p in sorted(hk.project_rules.glob("*.md")):
        assert f" .claude/rules/{p.name} " in line, f"{p} not named"
    for p in sorted(hk.global_rules.glob("*.md")):
        assert f" ~/.claude/rules/{p.name} " in line, f"{p} not named"
    assert re.search(r"\.md [\d,]+ characters", line), "sizes are given"
    assert "hooks.events.prompt[name: rules].budget.chars (now 8,000)" in line, line
    assert "warning" not in run.stdout


def test_validate_warns_when_the_rules_cannot_fit_one_delivery(hk):
    """Old code: validate said nothing of a rule set over the budget."""
    quiet = hk.engine("validate")
    assert quiet.returncode == 0 and "warning" not in quiet.stderr, str(quiet)
    _six(hk)
    run = hk.engine("validate")
    _check_warning(run, hk)


def test_install_warns_when_the_rules_cannot_fit_one_delivery(hk):
    """Old code: install said nothing of a rule set over the budget."""
    _six(hk)
    run = hk.engine("install", "--project")
    _check_warning(run, hk)
    assert (hk.project / ".claude" / "settings.json").is_file(), "the warning does not stop the install"


def test_files_that_share_a_name_are_named_by_path_in_the_line_of_what_follows(hk):
    """Rule files in subfolders of .claude/rules may share a name (a
    style.md for each language): the line saying what follows named them
    'style.md, style.md, style.md', which tells the model nothing; where
    names repeat, each is named by its path, as the delivery's headings."""
    for n, lang in enumerate(["go", "py", "rs", "ts", "sh", "js"], 1):
        folder = hk.project_rules / lang
        folder.mkdir(parents=True)
        (folder / "style.md").write_text(_rule(f"RU{lang.upper()}", n))
    first = _ctx(hk.hook(hk.event("SessionStart", source="compact")))
    line = re.search(r"\[3 more rule\(s\) follow at the next event — size limit reached: (.+)\]", first)
    assert line, first[-400:]
    named = line.group(1).split(", ")
    assert len(named) == 3 and all(n.endswith("/style.md") and "/.claude/rules/" in n for n in named), named
    assert len(set(named)) == 3, named


# -- a file that cannot fit, already in view: a growth refresh does not name it again --------

HUGE = "# Huge handbook\n" + "".join(f"HUGE item {i:04d}: zebra quartz lantern orbit.\n" for i in range(400))
SMALL = "# Small\nMarker SMALLONE: tiny.\n"


def _claude_start(hk, loaded, version="2.1.330"):
    """A Claude Code epoch whose start loaded `loaded` itself (its `instructions`
    record), then a response 50,000 tokens in: the growth cadence (40,000) is due."""
    line = {"isSidechain": False, "version": version}
    hk.write_transcript([
        {**line, "type": "user", "cwd": str(hk.project), "message": {"role": "user", "content": "go"}},
        {**line, "type": "attachment", "attachment": {"type": "instructions", "files": [
            {"path": str(p), "type": "Project", "content": p.read_text()} for p in loaded]}},
        {**line, "type": "assistant", "message": {"id": "m1", "role": "assistant", "model": "claude-x", "content": [
            {"type": "text", "text": "ok"}], "usage": {"input_tokens": 50000, "cache_creation_input_tokens": 0,
                                                        "cache_read_input_tokens": 0}}}])


@pytest.mark.parametrize("loaded", [True, False])
def test_a_file_that_cannot_fit_and_the_agent_loaded_is_not_named_again_by_the_growth_refresh(hk, loaded):
    """Shared sessions 20-25 fed with the corpus's rules: each growth refresh
    named the big rule files the agent loaded itself at the start and still
    held ("Read .claude/rules/X"), 15-25 lines a session, each asking the
    model to read again thousands of tokens it had.  One the agent did not
    load (added after its start) is still named: the model lacks it."""
    small, huge = hk.rule("a-small.md", SMALL), hk.rule("b-huge.md", HUGE)
    _claude_start(hk, [small, huge] if loaded else [small])
    ctx = _ctx(hk.hook(hk.event("PostToolUse")))
    assert "SMALLONE" in ctx, f"the growth refresh ran: {ctx[:300]}"
    named = DIGEST.findall(ctx)
    assert named == ([] if loaded else [("Huge handbook", ".claude/rules/b-huge.md")]), ctx[-300:]
    assert loaded is ("Huge handbook" not in ctx and "omitted" not in ctx), ctx[-300:]


def test_a_scoped_file_that_cannot_fit_is_named_only_once_lost_with_a_compaction(hk):
    """Claude Code 2.1.56 (no loading records: its YAML says what it loads):
    a big rule scoped to src/ is in view from the Read of src/a.py, and the
    growth refresh does not name it; the compaction takes it (the agent
    brings back no scoped rule): named at the compaction's start, and again
    by the growth refresh of the new epoch, where the model still lacks it."""
    hk.rule("b-huge.md", "---\npaths: src/**/*.py\n---\n" + HUGE)
    hk.rule("a-small.md", SMALL)
    (hk.project / "src").mkdir()
    (hk.project / "src" / "a.py").write_text("x = 1\n")
    line = {"isSidechain": False, "version": "2.1.56"}

    def response(n, tokens, content):
        return {**line, "type": "assistant", "message": {"id": f"m{n}", "role": "assistant", "model": "claude-x",
                "content": content, "usage": {"input_tokens": tokens, "cache_creation_input_tokens": 0,
                                              "cache_read_input_tokens": 0}}}

    read = [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(hk.project / "src" / "a.py")}}]
    hk.write_transcript([{**line, "type": "user", "cwd": str(hk.project), "message": {"role": "user", "content": "go"}},
                         response(1, 1000, read), response(2, 50000, [{"type": "text", "text": "ok"}])])
    grown = _ctx(hk.hook(hk.event("PostToolUse")))
    assert "SMALLONE" in grown and DIGEST.findall(grown) == [], grown[-300:]
    hk.append_transcript([
        {**line, "type": "system", "subtype": "compact_boundary", "uuid": "b0000001-x", "parentUuid": None,
         "compactMetadata": {"trigger": "auto", "preTokens": 150000}},
        {**line, "type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "summary"}}])
    back = _ctx(hk.hook(hk.event("SessionStart", source="compact")))
    assert DIGEST.findall(back) == [("Huge handbook", ".claude/rules/b-huge.md")], back[-300:]
    # a token of context is a byte of transcript at least (cadence.growth_due reads no less)
    hk.append_transcript([response(3, 20000, [{"type": "text", "text": "ok " * 40000}]),
                          response(4, 95000, [{"type": "text", "text": "ok"}])])
    later = _ctx(hk.hook(hk.event("PostToolUse")))
    assert "SMALLONE" in later and DIGEST.findall(later) == [("Huge handbook", ".claude/rules/b-huge.md")], later


def _agent_world(hk, agent, tokens):
    """(hook arguments, post-tool payload) of `agent` in `hk`'s project, its
    transcript in the agent's shape: a prompt, then a response `tokens` in."""
    path = hk.root / "t.jsonl"
    if agent == "codex":
        lines = [{"type": "session_meta", "payload": {"cli_version": "0.169.0", "cwd": str(hk.project)}},
                 {"type": "response_item", "payload": {"type": "message", "role": "user",
                                                       "content": [{"type": "input_text", "text": "go"}]}},
                 {"type": "token_usage_record", "payload": {"response_id": "r1", "usage": {
                     "input_tokens": tokens, "cached_input_tokens": 0, "output_tokens": 7}}}]
        payload = {"hook_event_name": "PostToolUse", "session_id": hk.session, "transcript_path": str(path),
                   "cwd": str(hk.project), "model": "gpt-5.1-codex", "turn_id": "t1", "tool_name": "Bash",
                   "tool_input": {"command": "ls"}, "tool_use_id": "call_1", "tool_response": "a\n"}
        args = ("hook", "--agent", "codex")
    elif agent == "gemini":
        lines = [{"sessionId": hk.session, "startTime": "2026-11-28T12:17:20.000Z", "kind": "main"},
                 {"id": "u1", "type": "user", "content": [{"text": "go"}]},
                 {"id": "m1", "type": "gemini", "model": "gemini-2.5-flash", "content": "",
                  "tokens": {"input": tokens, "output": 7, "cached": 0, "thoughts": 0, "tool": 0, "total": tokens}}]
        payload = {"session_id": hk.session, "transcript_path": str(path), "cwd": str(hk.project),
                   "hook_event_name": "AfterTool", "timestamp": "2026-11-28T12:17:20.000Z",
                   "tool_name": "run_shell_command", "tool_input": {"command": "ls"},
                   "tool_response": {"llmContent": "Output: a", "returnDisplay": "a"}}
        args = ("hook", "--agent", "gemini")
    else:
        lines = [{"type": "session.start", "data": {"sessionId": hk.session, "copilotVersion": "1.0.102",
                                                    "selectedModel": "gpt-5.1", "context": {"cwd": str(hk.project)}}},
                 {"type": "user.message", "data": {"content": "go"}},
                 {"type": "session.usage_record", "data": {"usage": {"model": "gpt-5.1", "inputTokens": tokens,
                                                                     "outputTokens": 7, "apiCallId": "r1"}}}]
        payload = {"sessionId": hk.session, "timestamp": 1795674298969, "cwd": str(hk.project), "toolName": "bash",
                   "toolArgs": {"command": "ls"}, "toolResult": {"textResultForLlm": "a", "resultType": "success"},
                   "transcriptPath": str(path)}
        args = ("hook", "--agent", "copilot", "--event", "postToolUse")
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return args, payload


INSTRUCTIONS = {"codex": "AGENTS.md", "gemini": "GEMINI.md", "copilot": ".github/copilot-instructions.md"}
FILE_DIGEST = re.compile(r"^\[File not injected — size limit reached: (.+)\. Read (.+)\]$", re.M)


@pytest.mark.parametrize("agent", sorted(INSTRUCTIONS))
def test_each_agents_big_instruction_file_it_loaded_is_not_named_again_by_the_growth_refresh(hk, agent):
    """The same for Codex, Gemini CLI and Copilot CLI, from their YAML: the
    project's instruction file each loads itself is over the instructions
    budget (8,000 characters) and in view from the epoch's start."""
    path = hk.project / INSTRUCTIONS[agent]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HUGE, encoding="utf-8")
    (hk.home / ".claude" / "rules").mkdir(parents=True)
    small = "Marker SMALLONE: tiny.\n"
    user_file = {"codex": ".codex/AGENTS.md", "gemini": ".gemini/GEMINI.md", "copilot": ".copilot/copilot-instructions.md"}
    (hk.home / user_file[agent]).parent.mkdir(parents=True, exist_ok=True)
    (hk.home / user_file[agent]).write_text(small, encoding="utf-8")
    args, payload = _agent_world(hk, agent, 50000)
    run = hk.engine(*args, stdin=json.dumps(payload).encode()).assert_ok()
    assert "SMALLONE" in run.stdout, f"the growth refresh ran:\n{run}"
    assert "Huge handbook" not in run.stdout and not FILE_DIGEST.findall(run.stdout), run.stdout[-400:]


def test_codex_names_the_big_agents_md_it_cuts_at_project_doc_max_bytes(hk):
    """Codex reads only the first 32,768 bytes of the project's AGENTS.md
    files: the model lacks the end of a longer one, which is still named."""
    (hk.project / "AGENTS.md").write_text(HUGE * 3, encoding="utf-8")
    args, payload = _agent_world(hk, "codex", 50000)
    run = hk.engine(*args, stdin=json.dumps(payload).encode()).assert_ok()
    assert FILE_DIGEST.findall(json.loads(run.stdout)["hookSpecificOutput"]["additionalContext"]) == [
        ("Huge handbook", "AGENTS.md")], run.stdout[-400:]


def test_a_file_too_large_to_ever_fit_or_to_read_is_logged_once_a_session(hk):
    """A rule file that can never fit once compressed, and one over
    hooks.max_rule_file_bytes, were each one hook.log line at every
    cadence delivery: hundreds of the same lines in a long session.  Each
    is logged once per session (the session's state says it was), and the
    delivery is as before: the rule that fits comes, the big one is
    named at every delivery; a new session is told again."""
    hk.rule("a.md", "# A\nMarker RULEMARK.\n")
    hk.rule("big.md", "# Big\n" + "Always run the tests before a commit.\n" * 3000)
    huge = hk.rule("huge.md", "# Huge\n")
    os.truncate(huge, 4_000_001)  # past max_rule_file_bytes: never read (sparse, costs no disk)
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 2}]}))
    delivered = []
    for i in range(6):
        run = hk.hook(hk.prompt(i), profile=prof).assert_ok()
        if run.context:
            delivered.append(run.context)
    assert len(delivered) == 3 and all("RULEMARK" in c and "Read .claude/rules/big.md" in c for c in delivered)

    def said(name):
        return [line for line in hk.log_lines() if f"/{name}" in line]

    assert len(said("big.md")) == 1 and "cannot fit" in said("big.md")[0], hk.log_lines()
    assert len(said("huge.md")) == 1 and "max_rule_file_bytes" in said("huge.md")[0], hk.log_lines()
    for i in range(2):
        hk.hook(hk.prompt(i, session="another-session"), profile=prof).assert_ok()
    assert len(said("big.md")) == 2 and len(said("huge.md")) == 2, hk.log_lines()
