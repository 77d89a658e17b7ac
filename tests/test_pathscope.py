"""Path-scoped rules (`paths:` frontmatter): parsing, the agent's glob rules,
the touched files read from real transcripts, and the refresh end to end:
in when a matching file was touched, out when not, still in after a
compaction, shown with its reason by `engine refresh preview`, and injected
as unscoped (and logged) when its frontmatter cannot be read."""

import json
import re

import pytest

from engine.hooks.pathscope import compile_globs, decide, matches_every_file, relative, scope_of, select, touched_in_transcript
from engine.hooks.sources import RuleFile
from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture
from testdata import transcript

T10 = "10-agentcmd-v2026-image-result.jsonl"  # main-chain Read/Edit of apps/app/src/client/...tsx
T09 = "09-ccviewer-v10108-inline-sidechain.jsonl"  # inline side chain reads todo-app/package.json
CWD10 = "/Users/jnarowski/Dev/sourceborn/src/agent-workflows-monorepo-v2"
SCOPE = {"key": "paths", "input_fields": ["file_path", "notebook_path", "path"], "glob_inputs": {"Glob": "pattern"},
         "max_transcript_bytes": 33554432, "max_brace_expansions": 1024}
# every_tokens 0: every prompt injects, whatever is in view (the in-view filter is tests/test_in_view.py's)
EVERY_PROMPT = profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1, "every_tokens": 0}]})


def fm(body):
    return f"---\n{body}\n---\n# Rule\ntext\n"


@pytest.mark.parametrize("front,globs", [
    ('paths: "src/**/*.ts"', ["src/**/*.ts"]),
    ("paths: src/**/*.{ts,tsx}", ["src/**/*.{ts,tsx}"]),
    ("paths: a/**, b/*.md", ["a/**", "b/*.md"]),
    ('paths: ["src/api/**", \'tests/*.py\']', ["src/api/**", "tests/*.py"]),
    ('paths:\n  - "src/**/*.ts"\n  - docs/**   # the docs\n', ["src/**/*.ts", "docs/**"]),
    ("priority: 2", None),
])
def test_frontmatter_forms(front, globs):
    scope = scope_of(fm(front), "paths")
    assert scope.globs == globs and scope.problem == ""


@pytest.mark.parametrize("front", ["paths: [src/**", 'paths: "src/**', "paths:\n  nested: x", "paths: []", "paths:"])
def test_malformed_paths_is_a_problem_not_a_scope(front):
    scope = scope_of(fm(front), "paths")
    assert scope.globs is None and "paths:" in scope.problem


@pytest.mark.parametrize("glob,yes,no", [
    ("src/**/*.ts", ["src/a.ts", "src/x/y/z.ts"], ["src/a.tsx", "lib/src/a.ts", "a.ts"]),
    ("**/*.ts", ["a.ts", "deep/er/a.ts"], ["a.tsx"]),
    ("*.md", ["README.md"], ["docs/a.md"]),
    ("src/*.{ts,tsx}", ["src/a.ts", "src/a.tsx"], ["src/a.js", "src/x/a.ts"]),
    ("docs/**", ["docs/a", "docs/a/b/c.md"], ["doc/a"]),
    ("t?st/[ab].py", ["test/a.py", "tast/b.py"], ["test/c.py", "tst/a.py"]),
    ("./lib/{a,{b,c}}/*.py", ["lib/a/x.py", "lib/c/x.py"], ["lib/d/x.py"]),
])
def test_glob_semantics(glob, yes, no):
    rx = compile_globs([glob], 1024)
    for p in yes:
        assert rx.match(p), (glob, p)
    for p in no:
        assert not rx.match(p), (glob, p)


def test_brace_bomb_is_bounded_and_injects_unscoped():
    status, reason = decide(["a" + "{1,2}" * 30], ["x"], 1024)
    assert status == "in" and "more than 1024" in reason


def test_relative_to_the_project():
    assert relative("/p/src/a.ts", "/p") == "src/a.ts"
    assert relative("src/../lib/b.ts", "/p") == "lib/b.ts"
    assert relative("/elsewhere/a.ts", "/p") == "/elsewhere/a.ts"
    assert relative("/p2/a.ts", "/p") == "/p2/a.ts"  # a sibling with the same prefix is outside


def test_a_file_outside_the_project_matches_no_glob():
    """A touched path outside the project stays absolute (relative()) and
    matches no glob, `**/` ones included: reading /usr/lib/python3/x.py
    puts no `**/*.py` rule of the project in view."""
    assert decide(["**/*.py"], ["/usr/lib/python3/x.py"], 1024)[0] == "out"
    assert decide(["**"], ["/elsewhere/a.ts"], 1024)[0] == "out"
    assert decide(["**/*.py"], ["/elsewhere/a.ts", "src/x.py"], 1024)[0] == "in"


def test_touched_files_of_a_real_transcript_main_chain_only():
    got = touched_in_transcript(str(transcript(T10)), CWD10, SCOPE)
    assert "apps/app/src/client/components/CommandMenu.tsx" in got
    assert got.count("apps/app/src/client/components/CommandMenu.tsx") == 1  # read then edited twice: once
    # 09: the inline side chain (a subagent) read todo-app/package.json; the main chain edited CLAUDE.md
    got09 = touched_in_transcript(str(transcript(T09)), "/path/to/Demo", SCOPE)
    assert "CLAUDE.md" in got09
    assert "todo-app/package.json" not in got09
    assert ".claude/commands/**/*.md" in got09  # a Glob under ./.claude/commands, as written


def test_touched_files_tolerate_missing_truncated_and_binary(tmp_path):
    assert touched_in_transcript(str(tmp_path / "none.jsonl"), "/p", SCOPE) == []
    t = tmp_path / "t.jsonl"
    line = {"type": "assistant", "message": {"content": [
        {"type": "tool_use", "name": "Edit", "input": {"file_path": "/p/src/a.ts"}}]}}
    t.write_bytes(b"\xff\xfe garbage\n" + json.dumps(line).encode() + b"\n" + json.dumps(line).encode()[:40])
    assert touched_in_transcript(str(t), "/p", SCOPE) == ["src/a.ts"]
    # only the tail is read: a touch before the last max_transcript_bytes is not seen
    small = dict(SCOPE, max_transcript_bytes=50)
    assert touched_in_transcript(str(t), "/p", small) == []


def test_select_keeps_unscoped_and_matching_rules():
    files = [RuleFile("/r/plain.md", "plain.md", 5, "# Plain\n"),
             RuleFile("/r/api.md", "api.md", 5, fm('paths: ["src/api/**"]')),
             RuleFile("/r/docs.md", "docs.md", 5, fm("paths: docs/**")),
             RuleFile("/r/bad.md", "bad.md", 5, fm("paths: [oops"))]
    logged = []
    kept, decisions = select(files, SCOPE, ["src/api/v1.py"], logged.append)
    assert [f.name for f in kept] == ["plain.md", "api.md", "bad.md"]
    by = {d.path: d for d in decisions}
    assert by["/r/api.md"].status == "in" and "src/api/v1.py matches src/api/**" in by["/r/api.md"].reason
    assert by["/r/docs.md"].status == "out" and "docs/**" in by["/r/docs.md"].reason
    assert by["/r/bad.md"].status == "in" and "unscoped" in by["/r/bad.md"].reason
    assert any("bad.md" in m for m in logged)


def test_a_projects_globs_are_matched_within_a_bound_and_the_users_are_never_counted(monkeypatch):
    """Audit: a project's rule file may hold any number of globs, each tried
    on every touched path; 10,000 of them took every refresh past its
    deadline, the user's rules with it.  A refresh spends at most
    globs.max_project_work on a project's globs: past it, a project's scoped
    rule counts as unscoped (logged once) and matches no touched path for
    what is in view; the user's own rule with the same globs is decided."""
    from engine.core import settings
    from engine.hooks import pathscope

    bounds = dict(settings.glob_limits(), max_project_work=20000)
    monkeypatch.setattr(settings, "glob_limits", lambda: bounds)
    many = "paths: [" + ", ".join(f'"**/*q{i}*.py"' for i in range(300)) + ', "src/**"]'
    files = [RuleFile("/u/mine.md", "mine.md", 5, fm(many), origin="user"),
             RuleFile("/r/flood.md", "flood.md", 5, fm(many)),
             RuleFile("/r/docs.md", "docs.md", 5, fm("paths: docs/**"))]
    touched = [f"src/pkg/module_{i}.py" for i in range(20)]
    logged = []
    kept, decisions = select(files, SCOPE, touched, logged.append)
    by = {d.path: d for d in decisions}
    assert by["/u/mine.md"].status == "in" and "matches" in by["/u/mine.md"].reason, by
    assert by["/r/flood.md"].status == "in" and "globs.max_project_work" in by["/r/flood.md"].reason, by
    assert by["/r/docs.md"].status == "in" and "globs.max_project_work" in by["/r/docs.md"].reason, by
    assert [f.name for f in kept] == ["mine.md", "flood.md", "docs.md"]
    assert len(logged) == 1 and "2 path-scoped rule file(s) of the project" in logged[0], logged
    # what is in view: an undecided project rule matched no touched path; the user's did
    assert not pathscope.matched(["**/*q1*.py", "src/**"], ["src/a.py"], 1024, files[1])
    assert pathscope.matched(["**/*q1*.py", "src/**"], ["src/a.py"], 1024, files[0])
    # a new refresh gets the whole allowance again
    kept, decisions = select(files[2:], SCOPE, ["docs/a.md"], logged.append)
    assert decisions[0].status == "in" and "docs/a.md matches" in decisions[0].reason, decisions


def test_a_glob_is_told_apart_by_its_literal_start_and_end_as_by_the_simulation():
    from engine.hooks.pathscope import Glob

    for glob, path in [("src/**/*.py", "src/a/b.py"), ("src/**/*.py", "lib/a.py"), ("**/x.md", "x.md"),
                       ("a*b", "ab"), ("ab", "ab"), ("ab", "abab"), ("[ab]x", "ax"), ("*.py", "a.pyc"), ("**", "")]:
        g = Glob(glob)
        assert g.match(path) <= g.could_match(path), (glob, path)


# -- end to end: the hook and the preview ------------------------------------

def _world(hk):
    """Transcript 10 moved into the test's project folder; three rules."""
    text = transcript(T10).read_text(encoding="utf-8").replace(CWD10, str(hk.project))
    hk.transcript.parent.mkdir(parents=True, exist_ok=True)
    hk.transcript.write_text(text, encoding="utf-8")
    hk.rule("plain.md", "Marker SCPLAIN: always here.\n")
    hk.rule("ui.md", '---\npaths:\n  - "apps/app/src/**/*.{ts,tsx}"\n---\nMarker SCUI: the UI rule.\n')
    hk.rule("pkg.md", "---\npaths: packages/**\n---\nMarker SCPKG: the packages rule.\n")


def test_hook_injects_a_scoped_rule_only_when_a_matching_file_was_touched(hk):
    _world(hk)
    prof = shared_profile(EVERY_PROMPT)
    ctx = hk.hook(hk.prompt(1), profile=prof).context
    assert "SCPLAIN" in ctx and "SCUI" in ctx, ctx
    assert "SCPKG" not in ctx, "packages/** was never touched"
    # the session now edits a file under packages/: the next refresh carries that rule too
    hk.append_transcript([{"type": "assistant", "isSidechain": False, "message": {"id": "m9", "content": [
        {"type": "tool_use", "id": "t9", "name": "Edit",
         "input": {"file_path": str(hk.project / "packages" / "x" / "index.ts")}}]}}])
    ctx = hk.hook(hk.prompt(2), profile=prof).context
    assert "SCPKG" in ctx and "SCUI" in ctx


def test_hook_without_a_transcript_leaves_scoped_rules_out(hk):
    hk.rule("plain.md", "Marker SCPLAIN: always here.\n")
    hk.rule("ui.md", "---\npaths: src/**\n---\nMarker SCUI: the UI rule.\n")
    ctx = hk.hook(hk.prompt(1), profile=shared_profile(EVERY_PROMPT)).context  # no transcript file at all
    assert "SCPLAIN" in ctx and "SCUI" not in ctx


def test_after_compaction_a_rule_touched_before_it_is_reinjected(hk):
    _world(hk)
    hk.append_transcript([
        {"type": "system", "subtype": "compact_boundary", "parentUuid": None, "isSidechain": False,
         "content": "Conversation compacted", "compactMetadata": {"trigger": "auto", "preTokens": 167000}},
        {"type": "user", "isSidechain": False, "isCompactSummary": True,
         "message": {"role": "user", "content": "This session is being continued from a previous conversation..."}},
    ])
    ctx = hk.hook(hk.event("SessionStart", source="compact")).context
    # the unscoped rule the agent reloads itself (hooks.in_view.after_compact_unscoped)
    assert "SCUI" in ctx and "SCPLAIN" not in ctx, ctx
    assert "SCPKG" not in ctx


def test_malformed_paths_frontmatter_is_injected_and_logged(hk):
    hk.rule("bad.md", "---\npaths: [src/**\n---\nMarker SCBAD: keep me.\n")
    ctx = hk.hook(hk.prompt(1), profile=shared_profile(EVERY_PROMPT)).context
    assert "SCBAD" in ctx
    assert any("bad.md" in l and "paths:" in l for l in hk.log_lines()), hk.log_lines()


def test_preview_says_why_each_scoped_rule_is_in_or_out(hk):
    _world(hk)
    # every_tokens 0: the preview shows the path-scope decisions, not what
    # is already in view (the session read ui.md's files: tests/test_in_view.py)
    run = hk.engine("refresh", "preview", "--cwd", hk.project, "--turn", "20", "--transcript", hk.transcript,
                    "--profile", shared_profile(EVERY_PROMPT))
    assert run.returncode == 0, str(run)
    lines = run.stdout.splitlines()
    ui = next(l for l in lines if "SCOPED" in l and l.split()[2].rstrip(":").endswith("ui.md"))
    pkg = next(l for l in lines if "SCOPED" in l and l.split()[2].rstrip(":").endswith("pkg.md"))
    assert ui.split()[1] == "in" and "apps/app/src/client/components/" in ui and "matches" in ui
    assert pkg.split()[1] == "out" and "packages/**" in pkg
    # the rows of injected files follow the decisions
    rows = [l for l in lines if re.match(r"\s+\d+\. ", l)]
    assert any(l.rstrip().endswith("ui.md") for l in rows) and not any(l.rstrip().endswith("pkg.md") for l in rows)
    run = hk.engine("refresh", "preview", "--cwd", hk.project, "--touched", "packages/a/b.ts")
    pkg = next(l for l in run.stdout.splitlines() if "SCOPED" in l and "pkg.md" in l)
    assert pkg.split()[1] == "in" and "packages/a/b.ts matches packages/**" in pkg
    run = hk.engine("refresh", "preview", "--cwd", hk.project, "--transcript", hk.transcript, "--touched",
                    hk.project / "packages" / "z.ts")  # both: the transcript's and the given
    scoped = {l.split()[2].rstrip(":").rsplit("/", 1)[-1]: l.split()[1] for l in run.stdout.splitlines() if "SCOPED" in l}
    assert scoped == {"ui.md": "in", "pkg.md": "in"}, run.stdout
    run = hk.engine("refresh", "preview", "--cwd", hk.project)  # nothing touched
    assert all(l.split()[1] == "out" for l in run.stdout.splitlines() if "SCOPED" in l)
    run = hk.engine("refresh", "preview", "--transcript", "missing.jsonl")
    assert run.returncode == 1 and run.stderr.startswith("missing.jsonl: ") and "Traceback" not in run.stderr


@pytest.mark.parametrize("glob,every", [("**", True), ("**/*", True), ("/**/", True), ("**/**/*", True),
                                        ("*", False), ("src/**", False), ("**/*.py", False), ("**/a", False)])
def test_a_glob_of_every_file_is_no_scope(glob, every):
    """`applyTo: "**"` (and its spellings) scopes nothing: the file loads at
    the start, as the agent loads it; `*` alone is the top folder only."""
    assert matches_every_file(glob) is every
