"""The real agent offline (tests/support/agent.py, Claude Code 2.1.330) with
the engine's hooks: a Write under a path-scoped rule, `/compact`, a new
prompt.  What the model reads after the compaction holds the scoped rule
once (the engine's restore: the agent does not bring it back) and the
unscoped rule once (the agent's own copy; the engine adds none); its
.claude/CLAUDE.md and CLAUDE.local.md once (its own), and no AGENTS.md
(a .claude/CLAUDE.md with text hides it from the agent and the engine).

Measured with 2.1.330 (see pipelines/default.yaml, hooks.in_view): the
agent delivers the scoped rule itself right after the Write (a
`nested_memory` attachment); after /compact it writes an `instructions`
attachment with the unscoped rules and the root CLAUDE.md at the next
prompt, and runs SessionStart(compact) possibly before the compaction's
boundary line is on disk."""

import json
import os

import pytest

from hook_fixtures import HookEnv, warm_template
from support.agent import find_claude, install_hooks, request_text, run_agent, text, tool

pytestmark = pytest.mark.slow

UNSCOPED = "# Mine\nAlways name the file you changed (IV_UNSCOPED_7c1e).\n"
SCOPED = "---\npaths: src/**/*.py\n---\n# Python\nType hints on every function (IV_SCOPED_51ab).\n"


def _run(w, prompt, script, **kw):
    run = run_agent(prompt, w.home, w.project, script, env=w.agent_env, **kw)
    assert run.returncode == 0 and run.output and not run.output.get("is_error"), str(run)
    return run


def test_after_compact_the_scoped_rule_once_and_the_unscoped_rule_once(tmp_path):
    find_claude()
    warm_template()
    w = HookEnv(tmp_path / "w")
    w.rule("mine.md", UNSCOPED, where="user")
    w.rule("py.md", SCOPED)
    (w.project / "src").mkdir()
    # the agent's other instruction files (measured with 2.1.330: it loads them at the start and after /compact)
    (w.project / ".claude" / "CLAUDE.md").write_text("Answer in English (IV_DOTCLAUDE_2e4a).\n")
    (w.project / "CLAUDE.local.md").write_text("My sandbox URL is local (IV_LOCAL_3f5b).\n")
    (w.project / "AGENTS.md").write_text("Run make check first (IV_AGENTS_4a6c).\n")  # hidden by .claude/CLAUDE.md
    w.agent_env = {"ENGINE_STATE_DIR": w.state, "ENGINE_CACHE_DIR": w.cache}
    install_hooks(w.home, w.project, w.agent_env)
    first = _run(w, "write it", [tool("Write", file_path=str(w.project / "src" / "b.py"), content="x: int = 1\n"),
                                 text("Written src/b.py.")])
    after_write = request_text(first.requests[-1])
    assert after_write.count("IV_SCOPED_51ab") == 1, "the agent delivered it after the Write; the engine did not add one"
    compacting = _run(w, "/compact", [text("<analysis>a</analysis>\n<summary>We wrote src/b.py.</summary>")],
                      resume=first.session_id)
    # The compaction's own request holds the history with what the hooks
    # added (the effort policy of SessionStart), and the transcript records
    # no usage of it: engine replay prices its read (transcript.
    # summary_requests of claude-code.yaml).
    (summary,) = compacting.requests
    assert "[Effort policy: medium]" in request_text(summary) and "IV_SCOPED_51ab" in request_text(summary)
    (transcript,) = (w.home / ".claude" / "projects").rglob(f"{first.session_id}.jsonl")
    usage = [json.loads(l) for l in transcript.read_text().splitlines() if '"usage"' in l]
    assert len({u["message"]["id"] for u in usage if u.get("type") == "assistant"}) == len(first.requests)
    nxt = _run(w, "next", [text("ok")], resume=first.session_id)
    seen = request_text(nxt.requests[0])
    assert "We wrote src/b.py." in seen, "the request is the one after the compaction"
    assert seen.count("IV_SCOPED_51ab") == 1, seen[-3000:]
    assert seen.count("IV_UNSCOPED_7c1e") == 1, seen[-3000:]
    assert seen.count("[Effort policy: medium]") == 1, seen[-3000:]  # SessionStart(compact)'s, not again at the resume
    for mark in ("IV_DOTCLAUDE_2e4a", "IV_LOCAL_3f5b"):
        assert request_text(first.requests[0]).count(mark) == 1 and seen.count(mark) == 1, mark
    # a .claude/CLAUDE.md with text hides AGENTS.md from the agent, and the engine follows it
    assert "IV_AGENTS_4a6c" not in request_text(first.requests[0]) and "IV_AGENTS_4a6c" not in seen


def test_an_agents_md_only_project_gets_it_once_at_the_start(tmp_path):
    """With no CLAUDE.md anywhere the agent reads AGENTS.md itself (2.1.330),
    though at SessionStart its transcript is not on disk yet: the engine
    takes the version from the hooks' environment and sends no second copy."""
    find_claude()
    warm_template()
    w = HookEnv(tmp_path / "w")
    (w.project / "AGENTS.md").write_text("Run make check first (ONLY_AGENTS_5b7d).\n")
    w.agent_env = {"ENGINE_STATE_DIR": w.state, "ENGINE_CACHE_DIR": w.cache}
    install_hooks(w.home, w.project, w.agent_env)
    run = _run(w, "hello", [text("Hello.")])
    assert request_text(run.requests[0]).count("ONLY_AGENTS_5b7d") == 1, request_text(run.requests[0])[-3000:]


def test_the_engines_delivery_is_known_by_its_id_in_what_the_agent_records(tmp_path):
    """A rule only the engine delivers (a folder the agent does not load)
    goes in at the first prompt; the agent records the hook's text, source
    line first, with the delivery's id.  At the next prompt the engine finds
    that id in the transcript and delivers no second copy: a delivery the
    transcript does not show counts for nothing (tests/test_in_view_identity.py),
    so this holds only because the real agent's record is recognised."""
    from hook_fixtures import profile_text, shared_profile

    find_claude()
    warm_template()
    w = HookEnv(tmp_path / "w")
    docs = w.project / "docs" / "rules"
    docs.mkdir(parents=True)
    (docs / "naming.md").write_text("# Naming\nName every test after its behaviour (IV_DOCS_9d2f).\n")
    prof = shared_profile(profile_text({"UserPromptSubmit": [
        {"name": "rules", "every_turns": 1, "sources": [{"dir": "{project}/docs/rules", "glob": "*.md"}]}]}))
    w.agent_env = {"ENGINE_STATE_DIR": w.state, "ENGINE_CACHE_DIR": w.cache}
    install_hooks(w.home, w.project, w.agent_env, args=("--profile", str(prof)))
    first = _run(w, "go", [text("ok")])
    assert request_text(first.requests[0]).count("IV_DOCS_9d2f") == 1, "the engine delivered the rule"
    nxt = _run(w, "again", [text("ok")], resume=first.session_id)
    seen = request_text(nxt.requests[0])
    assert seen.count("IV_DOCS_9d2f") == 1, seen[-3000:]
    assert seen.count("[rules-engine delivery ") == 1


def test_which_rule_files_and_globs_the_agent_loads_as_claude_code_yaml_says(tmp_path):
    """The facts of claude-code.yaml's rule folders, measured: a rule in a
    subfolder of .claude/rules is the agent's own (unscoped: at the start);
    a project rule's `paths:` are from the folder holding .claude/rules,
    whichever folder the session runs in; a glob without a slash names a
    file in any folder, as gitignore reads it; `*` waits for a read, `**`
    does not.  Then the engine, asked about the same files, agrees."""
    find_claude()
    w = HookEnv(tmp_path / "w")
    (w.project / ".git").mkdir()
    (w.project_rules / "lang").mkdir(parents=True)
    rules = {"lang/deep.md": "Deep unscoped (MEAS_DEEP)", "root.md": "---\npaths: svc/**/*.py\n---\nRoot (MEAS_ROOT)",
             "cwd.md": "---\npaths: lib/*.py\n---\nFrom the working folder (MEAS_CWD)",
             "name.md": "---\npaths: \"*.py\"\n---\nAny folder (MEAS_NAME)",
             "star.md": "---\npaths: \"*\"\n---\nAfter a read (MEAS_STAR)", "all.md": "---\npaths: \"**\"\n---\nAt the start (MEAS_ALL)",
             "every.md": "---\npaths: \"**/*\"\n---\nAfter a read too (MEAS_EVERY)"}
    for name, body in rules.items():
        (w.project_rules / name).write_text(body + ".\n")
    svc = w.project / "svc"
    (svc / "lib").mkdir(parents=True)
    (svc / "lib" / "a.py").write_text("x = 1\n")
    run = run_agent("go", w.home, svc, [tool("Read", file_path=str(svc / "lib" / "a.py")), text("done")])
    assert run.returncode == 0 and len(run.requests) == 2, str(run)
    marks = [m for m in ("MEAS_DEEP", "MEAS_ROOT", "MEAS_CWD", "MEAS_NAME", "MEAS_STAR", "MEAS_ALL", "MEAS_EVERY")]
    start, after = (request_text(r) for r in run.requests[:2])
    assert [m for m in marks if m in start] == ["MEAS_DEEP", "MEAS_ALL"], start[-2000:]
    assert [m for m in marks if m in after] == ["MEAS_DEEP", "MEAS_ROOT", "MEAS_NAME", "MEAS_STAR", "MEAS_ALL", "MEAS_EVERY"]
    from engine.agents import table
    from engine.hooks.pathscope import decide, scope_for, seen_from
    from engine.hooks.sources import collect

    spec = {"sources": ({"agent": "rules"},), "files": (), "skip": (), "priority": {"key": "priority", "default": 5},
            "strip_frontmatter": True}
    found = {os.path.basename(rf.path): rf for rf in collect(spec, str(svc), lambda m: None, agent=table.get("claude-code"))}
    assert set(found) == {os.path.basename(n) for n in rules}, sorted(found)
    unscoped = sorted(n for n, rf in found.items() if scope_for(rf, "paths").globs is None)
    assert unscoped == ["all.md", "deep.md"], unscoped
    loads = sorted(n for n, rf in found.items() if n not in unscoped and decide(
        scope_for(rf, "paths").globs, seen_from(rf, ["lib/a.py"], str(svc)), 1024)[0] == "in")
    assert loads == ["every.md", "name.md", "root.md", "star.md"], loads
