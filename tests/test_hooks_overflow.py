"""Nothing dropped in silence (issue 17, item 4): a rule set over the budget
is delivered whole across the following events, in priority order
(overflow: pending, the default), or each omitted file is named in a digest
line with its title and how to read it (overflow: digest).  Real hook
processes, as the agent starts them."""

import re

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
