"""What a refresh injects: the user's own rules first, then the project's,
each by priority then file name, skipped files, the budget and the omitted line, the
agent's 10,000-character limit, compression and frontmatter, and `scope`."""

import re

import pytest

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

# What did not fit is never dropped in silence (overflow: pending, the
# default): the rules that fit alone follow at the next event, a rule that
# cannot fit even alone is named in a digest line (tests/test_hooks_overflow.py).
OMITTED = re.compile(r"^\[(\d+) more rule\(s\) follow at the next event — size limit reached: (.+)\]$", re.M)
DIGEST = re.compile(r"^\[Rule not injected — size limit reached: (.+)\. Read (.+)\]$", re.M)


def _compact(hk, profile=None):
    run = hk.hook(hk.event("SessionStart", source="compact"), profile=profile)
    assert run.returncode == 0, str(run)
    out = run.json["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart", str(run)
    ctx = out["additionalContext"]
    assert len(ctx) < 10000, f"injection of {len(ctx)} characters reaches the agent's limit"
    return ctx


def _order(ctx, markers):
    missing = [m for m in markers if m not in ctx]
    assert not missing, f"missing {missing} in:\n{ctx}"
    return sorted(markers, key=ctx.index)


def _big(marker, lines):
    # Distinct lines that compression cannot shrink (no filler words, no
    # markdown marks): about 45 characters each, before and after.
    return f"# {marker}\n" + "".join(f"{marker} item {i:04d}: zebra quartz lantern orbit.\n" for i in range(lines))


def test_order_users_own_first_then_priority_then_name(hk):
    """Priority orders files within one origin: a project's priority 1 does
    not put its rule before the user's own (tests/test_rules_origin.py)."""
    hk.rule("b-global.md", "Marker MB: beta.\n", where="global")  # default priority 5
    hk.rule("a-project.md", "Marker MA: alpha.\n")  # 5
    hk.rule("z-first.md", "---\npriority: 1\n---\nMarker MZ: zulu.\n")
    hk.rule("m-global-late.md", "---\npriority: 9\n---\nMarker MM: mike.\n", where="global")
    hk.rule("c-explicit5.md", "---\ndescription: x\npriority: 5\n---\nMarker MC: charlie.\n", where="global")
    hk.rule("d-four.md", "---\npriority: 4\n---\nMarker MD: delta.\n")
    ctx = _compact(hk)
    assert _order(ctx, ["MA", "MB", "MC", "MD", "MM", "MZ"]) == ["MB", "MC", "MM", "MZ", "MD", "MA"]


def test_readme_and_empty_files_are_skipped(hk):
    hk.rule("README.md", "Marker READMEP: a readme is not a rule.\n")
    hk.rule("README.md", "Marker READMEG: a readme is not a rule.\n", where="global")
    hk.rule("empty.md", "")
    hk.rule("blank.md", "\n  \n\n", where="global")
    hk.rule("meta-only.md", "---\npriority: 1\n---\n\n")  # frontmatter alone: nothing once it is stripped
    hk.rule("real.md", "Marker REAL: a rule.\n")
    ctx = _compact(hk)
    assert "REAL" in ctx
    assert "READMEP" not in ctx and "READMEG" not in ctx
    assert "empty.md" not in ctx and "blank.md" not in ctx and "meta-only.md" not in ctx
    assert "1 file(s)" in ctx, ctx
    preview = hk.engine("refresh", "preview", "--cwd", hk.project)
    assert preview.returncode == 0, str(preview)
    assert "real.md" in preview.stdout
    for name in ("README.md", "empty.md", "blank.md", "meta-only.md"):
        assert name not in preview.stdout, f"{name} listed by the preview\n{preview}"


def test_rule_over_budget_is_named_and_a_smaller_later_rule_still_fits(hk):
    hk.rule("a-first.md", "---\npriority: 1\n---\nMarker MFIRST: small and first.\n")
    hk.rule("big-one.md", _big("BIGONE", 200))  # about 9,000 characters: over the 8,000 budget alone
    hk.rule("big-two.md", _big("BIGTWO", 200), where="global")
    hk.rule("zz-last.md", "---\npriority: 9\n---\nMarker MLAST: small and last.\n")
    ctx = _compact(hk)
    assert "MFIRST" in ctx and "MLAST" in ctx, "a smaller rule later in the order must still get in"
    assert "BIGONE item" not in ctx and "BIGTWO item" not in ctx
    assert not OMITTED.findall(ctx), "a rule that cannot fit even alone does not wait"
    lines = DIGEST.findall(ctx)
    assert lines == [("BIGTWO", "~/.claude/rules/big-two.md"), ("BIGONE", ".claude/rules/big-one.md")], \
        f"digest lines wrong or missing:\n{ctx[-500:]}"


def test_budget_fills_in_order_then_skips(hk):
    # Three rules of ~3,000 characters each: the first two fit in 8,000, the
    # third does not; a small one after it does.
    for name, marker in (("r1.md", "RONE"), ("r2.md", "RTWO"), ("r3.md", "RTHREE")):
        hk.rule(name, _big(marker, 66))
    hk.rule("r4.md", "Marker RFOUR: tiny.\n")
    ctx = _compact(hk)
    assert "RONE item" in ctx and "RTWO item" in ctx and "RFOUR" in ctx
    assert "RTHREE item" not in ctx
    assert OMITTED.findall(ctx) == [("1", "r3.md")]


@pytest.mark.parametrize("budget", [{"chars": 200000}, {"tokens": 100000}], ids=["chars", "tokens"])
def test_injection_stays_under_the_agent_limit_with_a_huge_budget(hk, budget):
    """A user budget far above the agent's limit: one injection still stays
    under 10,000 characters, dropping whole rules (named as omitted)."""
    for i in range(6):
        hk.rule(f"huge{i}.md", _big(f"HUGE{i}X", 70))  # ~4,000 characters each
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "budget": budget}]}))
    ctx = _compact(hk, profile=prof)
    inside = [i for i in range(6) if f"HUGE{i}X item 0069" in ctx]
    assert inside and inside == list(range(len(inside))), "rules get in in order, whole"
    assert len(inside) < 6
    m = OMITTED.findall(ctx)
    assert m and int(m[0][0]) == 6 - len(inside), ctx[-400:]


def test_injection_stays_under_the_agents_limit_as_the_agent_counts_it(hk):
    """Claude Code counts a hook's string in UTF-16 code units, an emoji as
    two (measured with 2.1.332: 5,010 emoji were kept, 6,000 went to a file
    and the model read a preview).  Two rules of 3,800 characters, 6,800
    units each, fit the budget of 8,000 characters but not one event: the
    second comes at the next one, and no answer reaches the agent's limit."""
    line = "\U0001F680" * 30
    for m in ("EMA", "EMB"):
        hk.rule(f"{m.lower()}.md", f"# {m}\n" + "".join(f"{m} {j:03d} {line}\n" for j in range(100)))

    def units(ctx):
        return len(ctx.encode("utf-16-le")) // 2

    first = _compact(hk)
    second = hk.hook(hk.event("PostToolUse")).context or ""
    assert units(first) <= 9500 and units(second) <= 9500, (units(first), units(second))
    assert "EMA 099" in first and "EMB 099" in second, "each rule whole, in order"


def test_injection_under_limit_with_single_enormous_rule(hk):
    hk.rule("enormous.md", _big("ENORM", 3000))  # ~170 KB
    hk.rule("small.md", "Marker SMALL: still here.\n")
    ctx = _compact(hk)
    assert "SMALL" in ctx
    assert DIGEST.findall(ctx) == [("ENORM", ".claude/rules/enormous.md")]


def test_thirteen_rules_of_a_real_size(hk):
    for i in range(13):
        hk.rule(f"rule{i:02d}.md", f"# Rule {i}\n" + "".join(
            f"- Marker R{i:02d}L{j}: you should always run the linter in order to keep the code clean.\n" for j in range(15)))
    ctx = _compact(hk)
    inside = [i for i in range(13) if f"R{i:02d}L14" in ctx]
    assert inside[:1] == [0] and len(inside) < 13
    m = OMITTED.findall(ctx)
    assert m and int(m[0][0]) == 13 - len(inside)


def test_rules_are_compressed_and_frontmatter_is_not_injected(hk):
    hk.rule("style.md", "---\npriority: 2\ndescription: FRONTMARKER about style\nglobs: src/**/*.py\n---\n"
                        "# Style\n\nYou must run the formatter in order to keep diffs small. **Never** commit "
                        "generated files. Keep the firewall on.\n")
    ctx = _compact(hk)
    assert "formatter" in ctx and "diffs small" in ctx and "Never" in ctx
    assert "in order to" not in ctx, "standard level drops 'in order to'"
    assert "**" not in ctx, "standard level drops bold marks"
    assert "FRONTMARKER" not in ctx and "globs:" not in ctx and "priority: 2" not in ctx
    assert "firewall on" in ctx, "compression must keep meaning ('keep the firewall on')"


BANNER_TEMPLATE = ("[Rules refresh in order to keep the rules fresh, turn {{ turn }}]"
                   "{% for r in items %}\n\n{{ r.text }}{% endfor %}"
                   "{% if omitted_line %}\n\n{{ omitted_line }}{% endif %}")


@pytest.mark.parametrize("scope", ["all", "refresh"])
def test_scope_all_compresses_the_banner_too(hk, scope):
    hk.rule("a.md", "Marker ALPHA: run the checks in order to find bugs. **Always** lint.\n")
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1,
                                                              "template": BANNER_TEMPLATE}]}, scope=scope))
    run = hk.hook(hk.prompt(1), profile=prof)
    assert run.returncode == 0, str(run)
    ctx = run.context
    assert ctx is not None, str(run)
    source, _, ctx = ctx.partition("\n")
    assert "handler prompt/rules" in source, ctx  # where it comes from, never compressed
    banner, _, body = ctx.partition("\n")
    assert "Rules refresh" in banner and "rules fresh" in banner
    # the rule text is compressed in both scopes
    assert "ALPHA" in body and "find bugs" in body and "**" not in body
    assert "in order to find" not in body
    if scope == "all":
        assert "in order to" not in banner, f"scope all: the banner passes through compression too\n{ctx}"
    else:
        assert "in order to keep the rules fresh" in banner, f"scope refresh: the banner is not compressed\n{ctx}"


@pytest.mark.parametrize("eol,bom", [("\n", ""), ("\r\n", ""), ("\n", "\ufeff"), ("\r\n", "\ufeff")],
                         ids=["lf", "crlf", "bom-lf", "bom-crlf"])
def test_priority_read_whatever_the_line_endings(hk, eol, bom):
    """Rule files written on Windows (CRLF, BOM) keep their priority; the
    priority key need not be the last one of the frontmatter."""
    fm = bom + eol.join(["---", "priority: 1", "description: FMARK about zulu", "---", "Marker ZULU: first.", ""])
    hk.rule("z.md", fm)
    hk.rule("a.md", "Marker ALPHA: default priority.\n")
    ctx = _compact(hk)
    assert _order(ctx, ["ALPHA", "ZULU"]) == ["ZULU", "ALPHA"], repr(ctx)
    assert "FMARK" not in ctx, "frontmatter is not injected"


def test_same_folder_reached_twice_is_injected_once(hk):
    import os

    hk.rule("g.md", "Marker ONCE: global rule.\n", where="global")
    (hk.project / ".claude").mkdir(parents=True)
    os.symlink(hk.global_rules, hk.project / ".claude" / "rules")
    ctx = _compact(hk)
    assert ctx.count("ONCE") == 1


def test_edited_rule_file_is_injected_as_it_is_now(hk):
    hk.rule("a.md", "Marker OLDTEXT.\n")
    assert "OLDTEXT" in _compact(hk)
    hk.rule("a.md", "Marker NEWTEXT.\n")
    ctx = _compact(hk)
    assert "NEWTEXT" in ctx and "OLDTEXT" not in ctx


def test_a_rules_folder_with_its_subfolders_is_read_within_a_bound_of_entries(tmp_path, monkeypatch):
    """Claude Code reads .claude/rules with its subfolders; a cloned
    repository holding a huge tree there must not take the refresh (the
    user's rules with it) past its deadline: at most
    hooks.max_rule_folder_entries entries are looked at, the cut logged."""
    from engine.core import settings
    from engine.hooks import sources

    bounds = dict(settings.hook_bounds(), max_rule_folder_entries=40)
    monkeypatch.setattr(settings, "hook_bounds", lambda: bounds)
    (tmp_path / "a.md").write_text("top\n")
    (tmp_path / "lang").mkdir()
    (tmp_path / "lang" / "py.md").write_text("deep\n")
    for i in range(30):
        (tmp_path / f"z{i:02d}").mkdir()  # 32 entries at the top, 1 in lang/
    for i in range(10):
        (tmp_path / "z29" / f"late{i}.md").write_text("past the bound\n")
    logged = []
    got = sources._in_folder(str(tmp_path), "**/*.md", logged.append)
    late = [str(tmp_path / "z29" / f"late{i}.md") for i in range(7)]  # 40 - 33 entries left
    assert got == [str(tmp_path / "a.md"), str(tmp_path / "lang" / "py.md"), *late], got
    assert len(logged) == 1 and "max_rule_folder_entries" in logged[0], logged


def test_a_rules_folder_of_one_level_is_read_within_the_same_bound_of_entries(tmp_path, monkeypatch):
    """Audit: a folder of rule files read without its subfolders (Copilot's
    .github/instructions/*.instructions.md and .claude/rules/*.md, Cursor's
    .cursor/rules/*.mdc) was listed whole: 3,000,000 empty files took 3 s,
    in each folder of the chain from the repository's root down.  At most
    hooks.max_rule_folder_entries entries are looked at (all of a folder
    within it, by name), the cut logged; a folder within it is read whole."""
    from engine.core import settings
    from engine.hooks import sources

    bounds = dict(settings.hook_bounds(), max_rule_folder_entries=40)
    monkeypatch.setattr(settings, "hook_bounds", lambda: bounds)
    for i in range(30):
        (tmp_path / f"r{i:02d}.instructions.md").write_text("rule\n")
    logged = []
    got = sources._in_folder(str(tmp_path), "*.instructions.md", logged.append)
    assert got == sorted(str(p) for p in tmp_path.glob("*.instructions.md")) and not logged, (got, logged)
    for i in range(30):
        (tmp_path / f"junk{i:02d}").write_text("")
    logged = []
    got = sources._in_folder(str(tmp_path), "*.instructions.md", logged.append)
    assert len(got) <= 40 and got == sorted(got), got
    assert len(logged) == 1 and "max_rule_folder_entries" in logged[0], logged


def test_a_glob_across_folders_is_matched_as_pathlib_does_within_the_same_bound_of_entries(tmp_path, monkeypatch):
    """A source glob of the user's own across folders (`docs/**/*.md`) was
    walked by pathlib.glob without a bound: a cloned repository's tree of a
    million entries took the refresh, the user's rules with it, to its
    deadline.  It matches what pathlib matches (files only; `**` any number
    of folders, none too) and looks at no more than
    hooks.max_rule_folder_entries entries, the cut logged."""
    from engine.core import settings
    from engine.hooks import sources

    for rel in ("a.md", "docs/a.md", "docs/x/b.md", "docs/x/y/c.md", "docs/x/y/c.txt", "other/docs/d.md",
                ".h/e.md", "docs/.f.md", "sub/a.md", "sub/sub/a.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("rule\n")
    for pattern in ("docs/**/*.md", "docs/*.md", "**/docs/*.md", "*/a.md", "sub/**/a.md",
                    "**/x/**/*.md", "docs/x/*/*.md", "d*/**/?.md"):
        want = sorted(str(p) for p in tmp_path.glob(pattern) if p.is_file())
        assert sources._in_folder(str(tmp_path), pattern, print) == want, pattern
    bounds = dict(settings.hook_bounds(), max_rule_folder_entries=40)
    monkeypatch.setattr(settings, "hook_bounds", lambda: bounds)
    for i in range(60):
        (tmp_path / "node_modules" / f"pkg{i:02d}").mkdir(parents=True)
    logged = []
    got = sources._in_folder(str(tmp_path), "docs/**/*.md", logged.append)
    assert len(logged) == 1 and "max_rule_folder_entries" in logged[0], logged
    assert set(got) <= {str(tmp_path / r) for r in ("docs/a.md", "docs/x/b.md", "docs/x/y/c.md", "docs/.f.md")}, got
