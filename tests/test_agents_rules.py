"""Rule and instruction sources per agent, through the installed hook command
(`engine hook --agent NAME`): each agent's files as its YAML declares them
(pipelines/agents/*.yaml, `instructions`), what the agent loads itself left
to it, and Cursor's rules as a source the user opts into.  Payload shapes as
each agent sends them (tests/agents/*.yaml)."""

import json
import os

import pytest

from hook_fixtures import CURSOR_SOURCE, profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

# The instruction files every prompt (the built-in cadence is 40 prompts).
EVERY_PROMPT = profile_text({"prompt": [{"name": "instructions", "every_turns": 1},
                                        {"name": "rules", "every_turns": 1}]}, name="everyprompt")


def _payload(agent, hk, event, **fields):
    """(payload, --event argument) of one `event` (prompt, session_start) of `agent`."""
    base = {"cwd": str(hk.project), "transcript_path": str(hk.transcript)}
    if agent == "copilot":
        names = {"prompt": "userPromptSubmitted", "session_start": "sessionStart", "subagent_start": "subagentStart"}
        data = {"sessionId": hk.session, "cwd": str(hk.project), "prompt": "go on", "source": "new", **fields}
        if event == "subagent_start":  # as 1.0.102 sends it: the parent's session, the subagent's own id
            data = {"sessionId": hk.session, "cwd": str(hk.project), "agentName": "explore", "agentId": "sub-1",
                    "agentType": "explore", "parentAgentId": hk.session, **fields}
        return data, names[event]
    if event == "subagent_start":  # Claude Code 2.1.330's: the parent's session_id, the subagent's agent_id
        return dict(base, session_id=hk.session, hook_event_name="SubagentStart", agent_id="a1b2c3",
                    agent_type="general-purpose", **fields), None
    names = {"claude-code": {"prompt": "UserPromptSubmit", "session_start": "SessionStart"},
             "codex": {"prompt": "UserPromptSubmit", "session_start": "SessionStart"},
             "gemini": {"prompt": "BeforeAgent", "session_start": "SessionStart"}}[agent]
    data = dict(base, session_id=hk.session, hook_event_name=names[event], **fields)
    if event == "prompt":
        data.setdefault("prompt", "go on")
    else:
        data.setdefault("source", "startup")
    return data, None


def _context(agent, hk, event, profile=None, **fields):
    payload, event_arg = _payload(agent, hk, event, **fields)
    args = ["hook", "--agent", agent] + (["--event", event_arg] if event_arg else [])
    args += ["--profile", str(profile)] if profile else []
    hk.compiled(profile or "default")
    run = hk.engine(*args, stdin=json.dumps(payload).encode())
    run.assert_ok()
    if not run.stdout.strip():
        return ""
    out = json.loads(run.stdout)
    return (out.get("hookSpecificOutput") or out).get("additionalContext") or ""


def _claude_transcript(hk, version):
    hk.write_transcript([{"type": "user", "version": version, "sessionId": hk.session, "isSidechain": False,
                          "uuid": "u1", "message": {"role": "user", "content": "hello"}}])


@pytest.mark.parametrize("version,delivered", [("2.1.300", True), ("2.1.330", False), ("2.1.332", False)])
def test_claude_code_gets_an_agents_md_only_project_from_the_engine_where_it_does_not_read_it(hk, version, delivered):
    """Claude Code reads AGENTS.md itself when the project has no CLAUDE.md
    (measured with 2.1.330 and 2.1.332; earlier versions not): before that,
    the engine gives it at the start."""
    (hk.project / "AGENTS.md").write_text("# Team\nRun the linter before each commit (AGM_41c2).\n")
    _claude_transcript(hk, version)
    text = _context("claude-code", hk, "session_start")
    assert ("AGM_41c2" in text) is delivered, text
    if delivered:
        assert "[Instructions refresh" in text


def test_claude_code_with_a_claude_md_never_gets_agents_md_as_its_instructions(hk):
    (hk.project / "AGENTS.md").write_text("# Team\nAGENTS_ONLY_93ab.\n")
    (hk.project / "CLAUDE.md").write_text("# Notes\nCLAUDE_ONLY_51fe.\n")
    text = _context("claude-code", hk, "prompt", profile=shared_profile(EVERY_PROMPT))
    assert "CLAUDE_ONLY_51fe" in text and "AGENTS_ONLY_93ab" not in text, text


def test_codex_reads_an_override_over_agents_md_and_the_nested_files_down_to_the_folder(hk):
    (hk.project / ".git").mkdir()  # the project's root: where the chain starts
    (hk.project / "AGENTS.md").write_text("ROOT_PLAIN_11aa.\n")
    (hk.project / "AGENTS.override.md").write_text("ROOT_OVERRIDE_22bb.\n")
    sub = hk.project / "svc"
    sub.mkdir()
    (sub / "AGENTS.md").write_text("NESTED_33cc.\n")
    (hk.home / ".codex").mkdir()
    (hk.home / ".codex" / "AGENTS.md").write_text("USER_CODEX_44dd.\n")
    payload_cwd = str(sub)
    text = _context("codex", hk, "prompt", profile=shared_profile(EVERY_PROMPT), cwd=payload_cwd)
    assert "ROOT_OVERRIDE_22bb" in text and "ROOT_PLAIN_11aa" not in text, text
    assert "NESTED_33cc" in text and "USER_CODEX_44dd" in text, text
    assert text.index("USER_CODEX_44dd") < text.index("ROOT_OVERRIDE_22bb") < text.index("NESTED_33cc"), \
        "the user's file, then the project's from the root down"


def test_gemini_reads_gemini_md_and_the_files_its_context_file_name_setting_adds(hk):
    (hk.project / "GEMINI.md").write_text("GEMINI_FILE_55ee.\n")
    (hk.project / "AGENTS.md").write_text("AGENTS_FILE_66ff.\n")
    prof = shared_profile(EVERY_PROMPT)
    text = _context("gemini", hk, "prompt", profile=prof)
    assert "GEMINI_FILE_55ee" in text and "AGENTS_FILE_66ff" not in text, text
    (hk.home / ".gemini").mkdir()
    (hk.home / ".gemini" / "settings.json").write_text(json.dumps({"context": {"fileName": ["AGENTS.md"]}}))
    text = _context("gemini", hk, "prompt", profile=prof)
    assert "AGENTS_FILE_66ff" in text and "GEMINI_FILE_55ee" in text, \
        "Gemini CLI 0.61.0 adds the setting's names to GEMINI.md (measured: it loads both)"


def test_gemini_reads_its_context_file_name_setting_from_a_settings_file_with_comments(hk):
    """Gemini CLI reads its settings.json with comments (strip-json-comments,
    measured in 0.61.0); the engine read none of such a file, so it took
    AGENTS.md for a file the agent does not load."""
    (hk.project / "GEMINI.md").write_text("GEMINI_FILE_55ee.\n")
    (hk.project / "AGENTS.md").write_text("AGENTS_FILE_66ff.\n")
    (hk.home / ".gemini").mkdir()
    (hk.home / ".gemini" / "settings.json").write_text(
        '{\n  // the files Gemini reads\n  "context": {"fileName": ["AGENTS.md"]} /* and GEMINI.md */\n}\n')
    text = _context("gemini", hk, "prompt", profile=shared_profile(EVERY_PROMPT))
    assert "AGENTS_FILE_66ff" in text and "GEMINI_FILE_55ee" in text, text


def test_copilot_instructions_and_its_scoped_files_wait_for_a_matching_file(hk):
    gh = hk.project / ".github"
    (gh / "instructions").mkdir(parents=True)
    (gh / "copilot-instructions.md").write_text("REPO_WIDE_77aa.\n")
    (gh / "instructions" / "py.instructions.md").write_text(
        "---\napplyTo: \"src/**/*.py\"\n---\nType hints everywhere (SCOPED_88bb).\n")
    (gh / "instructions" / "all.instructions.md").write_text("---\napplyTo: \"**\"\n---\nALWAYS_99cc.\n")
    text = _context("copilot", hk, "prompt", profile=shared_profile(EVERY_PROMPT))
    assert "REPO_WIDE_77aa" in text and "ALWAYS_99cc" in text, text
    assert "SCOPED_88bb" not in text, "applyTo src/**/*.py: only once a matching file is worked on"




def test_cursor_rules_are_a_source_the_user_opts_into(hk):
    rules = hk.project / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "always.mdc").write_text("---\nalwaysApply: true\n---\nCURSOR_ALWAYS_12ab.\n")
    (rules / "ts.mdc").write_text("---\nglobs: \"web/**/*.ts\"\nalwaysApply: false\n---\nCURSOR_TS_34cd.\n")
    plain = _context("codex", hk, "prompt", profile=shared_profile(EVERY_PROMPT))
    assert "CURSOR_" not in plain, "not a source unless the user's profile names it"
    opted = shared_profile(profile_text({"prompt": [
        {"name": "rules", "every_turns": 1, "sources": [{"agent": "rules"}, CURSOR_SOURCE]}]}, name="cursor"))
    text = _context("codex", hk, "prompt", profile=opted)
    assert "CURSOR_ALWAYS_12ab" in text and "CURSOR_TS_34cd" not in text, text


CHAIN_FILE = {"codex": "AGENTS.md", "gemini": "GEMINI.md", "copilot": "AGENTS.md"}


@pytest.mark.parametrize("agent", sorted(CHAIN_FILE))
def test_a_link_out_of_the_repository_at_its_root_is_not_read_from_a_subfolder(hk, agent):
    """A cloned repository's root AGENTS.md (GEMINI.md) linking to a private
    file of the user's: the agent works in a subfolder, and the engine
    reads the chain from the repository's root down.  The root's file is the
    project's, so the link that leaves the project is left out (and
    logged); the subfolder's own file still comes, as the project's."""
    secret = hk.home / "private.txt"
    secret.write_text("PRIVATE_KEY_7f3a\n")
    (hk.project / ".git").mkdir()
    (hk.project / CHAIN_FILE[agent]).symlink_to(secret)
    sub = hk.project / "svc"
    sub.mkdir()
    (sub / CHAIN_FILE[agent]).write_text("SUBFOLDER_RULE_2c4e.\n")
    text = _context(agent, hk, "prompt", profile=shared_profile(EVERY_PROMPT), cwd=str(sub))
    assert "PRIVATE_KEY_7f3a" not in text, text
    assert "SUBFOLDER_RULE_2c4e" in text, text
    assert any(CHAIN_FILE[agent] in line and "outside the project" in line for line in hk.log_lines()), \
        hk.log_lines()


def test_a_repositorys_root_is_the_project_of_its_subfolders_but_a_home_in_git_stays_the_users(tmp_path, monkeypatch):
    """Origin decides order (the user's own rules first) and what a project
    may displace: the root AGENTS.md of the repository a subfolder is in is
    the project's, like the subfolder's own.  A home kept in git is the
    user's: a folder below it without a .git of its own is its own project,
    and the home's files stay the user's."""
    from engine.base.project import project_folder
    from engine.hooks.origin import PROJECT, USER, Origins

    home, repo = tmp_path / "home", tmp_path / "home" / "src" / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "svc").mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert project_folder(repo / "svc") == str(repo)
    origins = Origins(str(repo / "svc"))
    assert origins.of(str(repo / "AGENTS.md"), str(repo / "AGENTS.md"))[0] == PROJECT
    assert origins.of(str(home / "notes.md"), str(home / "notes.md"))[0] == USER

    (home / ".git").mkdir()  # dotfiles
    plain = home / "src" / "plain"
    plain.mkdir()
    assert project_folder(plain) == str(plain)
    assert project_folder(home) == str(home)
    origins = Origins(str(plain))
    assert origins.of(str(home / "AGENTS.md"), str(home / "AGENTS.md"))[0] == USER
    assert origins.of(str(plain / "AGENTS.md"), str(plain / "AGENTS.md"))[0] == PROJECT


def test_a_repository_cloned_under_an_agents_home_is_a_project(tmp_path, monkeypatch):
    """Claude Code keeps plugin marketplaces as git clones under
    ~/.claude/plugins: opened there, the clone's rule files are a project's
    (they ranked as the user's own and displaced them), while the user's
    ~/.claude files stay theirs."""
    from engine.hooks.origin import PROJECT, USER, Origins

    home = tmp_path / "home"
    clone = home / ".claude" / "plugins" / "marketplaces" / "evil"
    (clone / ".git").mkdir(parents=True)
    (clone / ".claude" / "rules").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    for cwd in (clone, clone / ".claude"):
        origins = Origins(str(cwd))
        for path in (clone / "CLAUDE.md", clone / ".claude" / "rules" / "r.md"):
            assert origins.of(str(path), str(path))[0] == PROJECT, (cwd, path)
        mine = home / ".claude" / "rules" / "mine.md"
        assert origins.of(str(mine), str(mine))[0] == USER
    origins = Origins(str(home / ".claude"))  # the agent's home itself opened: its files stay the user's
    assert origins.of(str(home / ".claude" / "CLAUDE.md"), str(home / ".claude" / "CLAUDE.md"))[0] == USER


@pytest.mark.parametrize("override, expected", [("Use tabs (USER_OVERRIDE_3f1a).\n", "USER_OVERRIDE_3f1a"),
                                                ("  \n\n", "USER_PLAIN_4e2b")])
def test_codex_reads_its_own_folders_override_only_when_it_holds_text(hk, override, expected):
    """Measured with Codex 0.169.0: ~/.codex/AGENTS.override.md replaces
    ~/.codex/AGENTS.md only when it holds text; one of blanks leaves
    AGENTS.md read (a project folder's override replaces as soon as it
    exists: test_codex_reads_an_override_over_agents_md...)."""
    (hk.home / ".codex").mkdir()
    (hk.home / ".codex" / "AGENTS.md").write_text("Use spaces (USER_PLAIN_4e2b).\n")
    (hk.home / ".codex" / "AGENTS.override.md").write_text(override)
    text = _context("codex", hk, "prompt", profile=shared_profile(EVERY_PROMPT))
    assert expected in text, text
    assert ("USER_PLAIN_4e2b" in text) is (expected == "USER_PLAIN_4e2b"), "one file of the two, as Codex reads"


def test_codex_cuts_its_project_files_at_project_doc_max_bytes_so_a_file_past_it_is_not_in_view(tmp_path, monkeypatch):
    """Measured with Codex 0.169.0: the project's AGENTS.md files, from the
    root down, are read up to project_doc_max_bytes (32 KiB) in all, and the
    file that crosses it is cut there, unannounced; the user's own file is
    not counted; config.toml may raise the figure.  A file Codex cut is not
    one it loads itself: the engine does not hold it back as in view."""
    from engine.agents import table
    from engine.agents.instructions import entry_of, loads_itself

    home, repo = tmp_path / "home", tmp_path / "repo"
    (home / ".codex").mkdir(parents=True)
    (repo / ".git").mkdir(parents=True)
    (repo / "svc").mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    (home / ".codex" / "AGENTS.md").write_text("u" * 30000)
    (repo / "AGENTS.md").write_text("r" * 20000)
    (repo / "svc" / "AGENTS.md").write_text("s" * 20000)
    codex = table.get("codex")

    def whole(path, cwd):
        real = str(path.resolve())
        return loads_itself(codex, entry_of(codex, real, str(cwd)), "0.169.0", str(cwd), "compact", real)

    assert whole(home / ".codex" / "AGENTS.md", repo / "svc"), "the user's file is not counted"
    assert whole(repo / "AGENTS.md", repo / "svc")
    assert not whole(repo / "svc" / "AGENTS.md", repo / "svc"), "20,000 + 2 + 20,000 bytes: cut at 32,768"
    assert whole(repo / "AGENTS.md", repo), "alone, 20,000 bytes fit"
    (home / ".codex" / "config.toml").write_text('model = "m"\nproject_doc_max_bytes = 65536\n')
    assert whole(repo / "svc" / "AGENTS.md", repo / "svc"), "the user's config.toml raises the figure"
    (home / ".codex" / "config.toml").write_bytes(b"\xef\xbb\xbfproject_doc_max_bytes = 65536\n")
    assert whole(repo / "svc" / "AGENTS.md", repo / "svc"), "Codex reads a config.toml opening with a BOM"
    (home / ".codex" / "config.toml").write_text('project_doc_max_bytes = "lots"\n')
    assert not whole(repo / "svc" / "AGENTS.md", repo / "svc"), "a figure that is no number: the default"


def test_codex_reads_a_fallback_name_where_a_folder_has_no_agents_md(hk):
    """Measured with Codex 0.169.0: with project_doc_fallback_filenames in
    its config.toml, a project folder with neither AGENTS.override.md nor
    AGENTS.md gives the first of those names that is there; AGENTS.md wins
    where it is; the user's folder has no fallback.  So the engine's
    instruction refresh for Codex names the file Codex read."""
    (hk.project / ".git").mkdir()
    (hk.project / "CLAUDE.md").write_text("ROOT_CLAUDE_1a2b.\n")
    (hk.project / "TEAM.md").write_text("ROOT_TEAM_3c4d.\n")
    sub = hk.project / "svc"
    sub.mkdir()
    (sub / "AGENTS.md").write_text("SUB_AGENTS_5e6f.\n")
    (sub / "CLAUDE.md").write_text("SUB_CLAUDE_7a8b.\n")
    (hk.home / ".codex").mkdir()
    (hk.home / ".codex" / "CLAUDE.md").write_text("USER_CLAUDE_9c0d.\n")
    prof = shared_profile(EVERY_PROMPT)
    plain = _context("codex", hk, "prompt", profile=prof, cwd=str(sub))
    assert "SUB_AGENTS_5e6f" in plain and "ROOT_" not in plain, "no fallback set: only AGENTS.md files"
    (hk.home / ".codex" / "config.toml").write_text('project_doc_fallback_filenames = ["CLAUDE.md", "TEAM.md"]\n')
    text = _context("codex", hk, "prompt", profile=prof, cwd=str(sub))
    assert "ROOT_CLAUDE_1a2b" in text and "ROOT_TEAM_3c4d" not in text, text
    assert "SUB_AGENTS_5e6f" in text and "SUB_CLAUDE_7a8b" not in text and "USER_CLAUDE_9c0d" not in text, text


def test_claude_codes_refresh_names_every_claude_md_it_loads_itself(hk, tmp_path):
    """Measured with Claude Code 2.1.330: CLAUDE.md, .claude/CLAUDE.md and
    CLAUDE.local.md of the working folder and of every folder above it,
    past the repository's root too (a folder below only lazily).  The
    instruction refresh names them all, from the top down."""
    (hk.project / ".git").mkdir()
    sub = hk.project / "svc"
    (sub / "deeper").mkdir(parents=True)
    above = hk.project.parent / "CLAUDE.md"  # a folder above the repository: the user's machine, not the clone
    above.write_text("ABOVE_1a1a.\n")
    (hk.project / "CLAUDE.md").write_text("ROOT_2b2b.\n")
    (hk.project / ".claude" / "CLAUDE.md").parent.mkdir(exist_ok=True)
    (hk.project / ".claude" / "CLAUDE.md").write_text("ROOT_DOT_3c3c.\n")
    (sub / "CLAUDE.md").write_text("SUB_4d4d.\n")
    (sub / "CLAUDE.local.md").write_text("SUB_LOCAL_5e5e.\n")
    (sub / "deeper" / "CLAUDE.md").write_text("DEEPER_6f6f.\n")
    text = _context("claude-code", hk, "prompt", profile=shared_profile(EVERY_PROMPT), cwd=str(sub))
    for mark in ("ABOVE_1a1a", "ROOT_2b2b", "ROOT_DOT_3c3c", "SUB_4d4d", "SUB_LOCAL_5e5e"):
        assert text.count(mark) == 1, (mark, text)
    assert "DEEPER_6f6f" not in text, "a folder below loads lazily, not at a refresh"
    assert text.index("ABOVE_1a1a") < text.index("ROOT_2b2b") < text.index("SUB_4d4d"), "from the top down"


def test_copilot_in_a_subfolder_reads_every_file_from_the_repositorys_root_down(hk):
    """Measured with Copilot CLI 1.0.102 in a subfolder of a git repository:
    copilot-instructions.md, AGENTS.md, GEMINI.md, `.claude/rules` and
    `.github/instructions` of every folder from the root down to the
    working folder, none above it.  The refresh names them all."""
    (hk.project / ".git").mkdir()
    sub = hk.project / "svc"
    for folder, tag in ((hk.project, "ROOT"), (sub, "SUB")):
        (folder / ".github" / "instructions").mkdir(parents=True)
        (folder / ".github" / "copilot-instructions.md").write_text(f"{tag}_CPI_1a.\n")
        (folder / ".github" / "instructions" / "all.instructions.md").write_text(
            f"---\napplyTo: \"**\"\n---\n{tag}_APPLY_2b.\n")
        (folder / "GEMINI.md").write_text(f"{tag}_GEMINI_3c.\n")
        (folder / ".claude" / "rules").mkdir(parents=True, exist_ok=True)
        (folder / ".claude" / "rules" / "r.md").write_text(f"{tag}_RULE_4d.\n")
    (hk.project.parent / "AGENTS.md").write_text("ABOVE_AGENTS_5e.\n")
    text = _context("copilot", hk, "prompt", profile=shared_profile(EVERY_PROMPT), cwd=str(sub))
    for tag in ("ROOT", "SUB"):
        for mark in ("CPI_1a", "APPLY_2b", "GEMINI_3c", "RULE_4d"):
            assert text.count(f"{tag}_{mark}") == 1, (tag, mark, text)
    assert "ABOVE_AGENTS_5e" not in text, "nothing above the repository"


def test_claude_code_reads_agents_md_only_while_no_claude_md_is_anywhere_above(hk):
    """Measured with Claude Code 2.1.330: AGENTS.md of the working folder and
    every folder above it, but none once a CLAUDE.md is in any of them (a
    CLAUDE.md in the working folder hides the root's AGENTS.md, and the
    root's hides a subfolder's); `.claude/rules` of every folder above,
    past the repository's root too."""
    (hk.project / ".git").mkdir()
    sub = hk.project / "svc"
    sub.mkdir()
    (hk.project / "AGENTS.md").write_text("ROOT_AGENTS_6f.\n")
    (sub / "AGENTS.md").write_text("SUB_AGENTS_7a.\n")
    above = hk.project.parent / ".claude" / "rules"
    above.mkdir(parents=True)
    (above / "team.md").write_text("ABOVE_RULE_8b.\n")
    prof = shared_profile(EVERY_PROMPT)
    text = _context("claude-code", hk, "prompt", profile=prof, cwd=str(sub))
    assert text.count("ROOT_AGENTS_6f") == 1 and text.count("SUB_AGENTS_7a") == 1, text
    assert text.count("ABOVE_RULE_8b") == 1, text
    (sub / "CLAUDE.md").write_text("SUB_CLAUDE_9c.\n")
    text = _context("claude-code", hk, "prompt", profile=prof, cwd=str(sub))
    assert "SUB_CLAUDE_9c" in text and "AGENTS_" not in text, text
    (sub / "CLAUDE.md").unlink()
    (hk.project / "CLAUDE.md").write_text("ROOT_CLAUDE_0d.\n")
    text = _context("claude-code", hk, "prompt", profile=prof, cwd=str(sub))
    assert "ROOT_CLAUDE_0d" in text and "AGENTS_" not in text, text


def test_a_fifo_where_an_agents_settings_or_override_file_is_never_opened(hk):
    """The hook reads the agent's own settings (config.toml, settings.json)
    and override files: a FIFO there is no file to read (opening it would
    block until the deadline), and the rest is read as usual."""
    import os

    (hk.home / ".codex").mkdir()
    (hk.home / ".codex" / "AGENTS.md").write_text("USER_PLAIN_1f2e.\n")
    os.mkfifo(hk.home / ".codex" / "AGENTS.override.md")
    os.mkfifo(hk.home / ".codex" / "config.toml")
    (hk.project / "AGENTS.md").write_text("PROJECT_3d4c.\n")
    text = _context("codex", hk, "prompt", profile=shared_profile(EVERY_PROMPT))
    assert "USER_PLAIN_1f2e" in text and "PROJECT_3d4c" in text, text
    assert not any("deadline" in line for line in hk.log_lines()), hk.log_lines()


@pytest.mark.parametrize("beside, text, read", [
    ("CLAUDE.md", "Use make (CM_1a).\n", False),
    (".claude/CLAUDE.md", "Use make (CM_2b).\n", False),
    ("CLAUDE.local.md", "My port is 8080 (CM_3c).\n", False),
    ("CLAUDE.md", "\n", True),
])
def test_claude_code_skips_agents_md_beside_any_claude_md_with_text(hk, beside, text, read):
    """Measured with Claude Code 2.1.330: a CLAUDE.md, `.claude/CLAUDE.md`
    or `CLAUDE.local.md` holding text hides AGENTS.md; an empty CLAUDE.md
    does not.  The refresh names AGENTS.md only where the agent reads it."""
    (hk.project / ".git").mkdir()
    (hk.project / "AGENTS.md").write_text("Run make check (AGENTS_4d).\n")
    (hk.project / beside).parent.mkdir(parents=True, exist_ok=True)
    (hk.project / beside).write_text(text)
    out = _context("claude-code", hk, "prompt", profile=shared_profile(EVERY_PROMPT))
    assert ("AGENTS_4d" in out) is read, out


def test_a_superprojects_claude_md_above_a_submodule_is_the_projects_not_the_users(tmp_path, monkeypatch):
    """In a submodule (its own .git) the superproject's CLAUDE.md is above the
    project, and Claude Code reads it.  A cloned superproject is not the
    user: a file an agent reads for the project ranks as the project's
    wherever it is, and only the user's own (`origin: user`) ranks first."""
    from engine.agents import table
    from engine.agents.instructions import files
    from engine.hooks.origin import PROJECT, USER, Origins

    home, outer = tmp_path / "home", tmp_path / "outer"
    sub = outer / "vendor" / "lib"
    (home / ".claude").mkdir(parents=True)
    (outer / ".git").mkdir(parents=True)
    sub.mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    for path in (home / ".claude" / "CLAUDE.md", outer / "CLAUDE.md", sub / "CLAUDE.md"):
        path.write_text("x\n")
    listed = {str(p): e for p, e in files(table.get("claude-code"), str(sub))}
    origins = Origins(str(sub))
    origin = {p: origins.of(p, os.path.realpath(p), listed[p].get("origin"))[0] for p in listed if os.path.isfile(p)}
    assert origin == {str(home / ".claude" / "CLAUDE.md"): USER, str(outer / "CLAUDE.md"): PROJECT,
                      str(sub / "CLAUDE.md"): PROJECT}, origin


def _copilot_session(hk, tool, path):
    """A Copilot session's events.jsonl (1.0.102's records) in which the
    model ran `tool` on `path`, as the hook reads it: its record of what
    that loaded (a `<system_reminder>` after the output) not on disk yet."""
    hk.write_transcript([
        {"type": "session.start", "data": {"sessionId": hk.session, "copilotVersion": "1.0.102",
                                           "context": {"cwd": str(hk.project)}}},
        {"type": "user.message", "data": {"content": "go"}},
        {"type": "assistant.message", "data": {"toolRequests": [
            {"toolCallId": "c1", "name": tool, "arguments": {"path": str(path), "file_text": "x\n"}}]}},
        {"type": "tool.execution_complete", "data": {"toolCallId": "c1", "success": True,
                                                     "result": {"content": "1. x"}}}])


def _rules_and_a_web_file(hk, folder, rules):
    """The project's rule files {name: text} in `folder`, and web/a.ts."""
    where = hk.project / folder
    where.mkdir(parents=True)
    for name, text in rules.items():
        (where / name).write_text(text)
    (hk.project / "web").mkdir()
    (hk.project / "web" / "a.ts").write_text("x\n")


@pytest.mark.parametrize("tool,sent", [("view", False), ("create", True)])
def test_copilot_loads_a_claude_rule_with_paths_itself_after_a_view_of_a_matching_file(hk, tool, sent):
    """Measured with Copilot CLI 1.0.102: a `.claude/rules` file with
    `paths:` is listed at the start and loaded after `view` reads a matching
    file, as its own `applyTo` files are; a `create` loads nothing.  So the
    engine leaves it to Copilot after a view, even before Copilot's record
    of it is on disk, and sends it after a create; the unscoped rule is
    Copilot's from the start."""
    _rules_and_a_web_file(hk, ".claude/rules", {"general.md": "# General\nAlways GENERAL_1a.\n",
                                                "web.md": '---\npaths: ["web/**"]\n---\n# Web\nUse WEB_2b.\n'})
    _copilot_session(hk, tool, hk.project / "web" / "a.ts")
    text = _context("copilot", hk, "prompt", profile=shared_profile(EVERY_PROMPT), transcriptPath=str(hk.transcript))
    assert "GENERAL_1a" not in text, text
    assert ("WEB_2b" in text) == sent, text


PATCH = "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {path}\n+x\n*** End Patch\nEOF"


def _codex_pre_tool(hk, command):
    """The context of the engine's PreToolUse answer to Codex's shell call
    `command` (the built-in profile), "" when it adds none."""
    payload = {"session_id": hk.session, "transcript_path": str(hk.transcript), "cwd": str(hk.project),
               "hook_event_name": "PreToolUse", "model": "gpt-5.1-codex", "permission_mode": "default",
               "turn_id": "t1", "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "call_1"}
    hk.compiled("default")
    run = hk.engine("hook", "--agent", "codex", stdin=json.dumps(payload).encode())
    run.assert_ok()
    out = json.loads(run.stdout) if run.stdout.strip() else {}
    return (out.get("hookSpecificOutput") or {}).get("additionalContext") or ""


def test_codex_gets_a_nested_agents_md_below_its_folder_before_a_patch_there(hk):
    """Codex loads AGENTS.md from the repository's root down to its working
    folder, never one below (measured with 0.169.0; its model is told to
    look for them).  A patch through the shell that adds or updates a file
    under svc/api gets svc/AGENTS.md and svc/api/AGENTS.md first, top down,
    each once; a patch at the top, or a command that is no patch, gets
    neither; the root's, which Codex loaded, never."""
    (hk.project / ".git").mkdir()
    (hk.project / "AGENTS.md").write_text("ROOT_AGENTS_0a.\n")
    for folder, mark in (("svc", "SVC_1b"), ("svc/api", "API_2c"), ("web", "WEB_3d")):
        (hk.project / folder).mkdir(parents=True)
        (hk.project / folder / "AGENTS.md").write_text(f"# {folder}\nKeep {mark}.\n")
    hk.write_transcript([])
    assert _codex_pre_tool(hk, PATCH.format(path="top.txt")) == ""
    assert _codex_pre_tool(hk, "cat svc/api/AGENTS.md") == ""
    text = _codex_pre_tool(hk, PATCH.format(path="svc/api/new.py"))
    assert text.count("SVC_1b") == 1 and text.count("API_2c") == 1, text
    quoted = "(the project's rule, quoted)\n~~~\n"
    assert f"## svc/AGENTS.md {quoted}" in text and f"## svc/api/AGENTS.md {quoted}" in text, "named by its folder: its scope"
    assert text.index("SVC_1b") < text.index("API_2c"), "top down"
    assert "WEB_3d" not in text and "ROOT_AGENTS_0a" not in text, text
    again = _codex_pre_tool(hk, PATCH.format(path="svc/api/other.py"))
    assert "SVC_1b" not in again and "API_2c" not in again, "once: the engine's delivery is in view"


def test_refresh_preview_for_an_agent_shows_its_nested_agents_md_for_a_touched_file(hk):
    """`engine refresh preview --agent codex --touched svc/api/a.py` shows
    svc/AGENTS.md (in, by its folder) and its text; without --agent the
    preview is Claude Code's, which loads such a file itself; a name that
    is no agent's is said with the agents' names, exit status 1."""
    (hk.project / ".git").mkdir()
    (hk.project / "svc" / "api").mkdir(parents=True)
    (hk.project / "svc" / "AGENTS.md").write_text("# Services\nNever log a token (SVC_9a).\n")
    args = ("refresh", "preview", "--cwd", hk.project, "--touched", "svc/api/a.py", "--text")
    run = hk.engine(*args, "--agent", "codex")
    assert run.returncode == 0, str(run)
    assert "SCOPED  in  " in run.stdout and "svc/api/a.py matches svc/**" in run.stdout, run.stdout
    assert "## svc/AGENTS.md (the project's rule, quoted)\n" in run.stdout and "SVC_9a" in run.stdout
    assert "SVC_9a" not in hk.engine(*args).stdout
    bad = hk.engine(*args, "--agent", "nope")
    assert bad.returncode == 1 and "no agent named 'nope'" in bad.stderr and "codex" in bad.stderr, str(bad)


# -- a subagent's start ------------------------------------------------------
CURSOR_ALWAYS = shared_profile(profile_text({"prompt": [
    {"name": "rules", "sources": [{"agent": "rules"}, CURSOR_SOURCE]}]}, name="cursorsub"))


def _cursor_rules(hk, *texts):
    rules = hk.project / ".cursor" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(texts):
        (rules / f"r{i}.mdc").write_text(f"---\nalwaysApply: true\n---\n# Rule {i}\n{text}\n")


def _state(hk):
    files = hk.session_files()
    return json.loads(files[0].read_text()) if files else {}


@pytest.mark.parametrize("agent", ["claude-code", "copilot"])
def test_a_subagent_starts_with_the_rules_only_the_engine_delivers_and_the_main_contexts_state_stays(hk, agent):
    """A subagent's context starts with the agent's own instruction files
    (measured with Claude Code 2.1.330 and Copilot CLI 1.0.102), never with
    what the engine gave the main context: at its start (SubagentStart,
    subagentStart: their context reaches its first request) the engine gives
    it the rule files the agent does not load itself, even those the main
    context has in view already, and records nothing as the main context's."""
    _cursor_rules(hk, "Name every branch SUB_RULE_7d1e.")
    (hk.project / "AGENTS.md").write_text("# Team\nAGENTS_OWN_3c9a.\n")
    (hk.project / ".claude").mkdir(exist_ok=True)
    if agent == "claude-code":
        _claude_transcript(hk, "2.1.332")
    start = _context(agent, hk, "session_start", profile=CURSOR_ALWAYS)
    assert "SUB_RULE_7d1e" in start and "AGENTS_OWN_3c9a" not in start, start
    before = _state(hk)
    text = _context(agent, hk, "subagent_start", profile=CURSOR_ALWAYS)
    assert "SUB_RULE_7d1e" in text and "AGENTS_OWN_3c9a" not in text, text
    assert "[Rules refresh" in text, text
    assert _state(hk) == before, "a subagent's delivery is not the main context's"
    plain = _context(agent, hk, "subagent_start")
    assert plain == "", "the built-in profile's sources are the agent's own: nothing to add"


def test_a_subagent_of_a_claude_code_that_does_not_read_agents_md_gets_it(hk):
    """Before 2.1.330 Claude Code did not read an AGENTS.md-only project's
    file: the engine gives it at the session's start, and at each subagent's."""
    (hk.project / "AGENTS.md").write_text("# Team\nRun the linter before each commit (AGM_SUB_5e).\n")
    _claude_transcript(hk, "2.1.300")
    assert "AGM_SUB_5e" in _context("claude-code", hk, "subagent_start")
    _claude_transcript(hk, "2.1.332")
    assert _context("claude-code", hk, "subagent_start") == ""


def test_a_subagents_start_names_what_its_room_cannot_hold_and_leaves_no_round_pending(hk):
    """Nothing can wait for a next event of a subagent's context (pending
    rounds run in the main one): what one answer cannot hold is named with
    where to read it, never said to follow, and no round opens in the
    session's state."""
    _claude_transcript(hk, "2.1.332")
    _cursor_rules(hk, *[f"Rule text {i} SUBFIT_{i:02d} " + "word " * 600 for i in range(6)])
    before = _state(hk)
    text = _context("claude-code", hk, "subagent_start", profile=CURSOR_ALWAYS)
    given = [i for i in range(6) if f"SUBFIT_{i:02d}" in text]
    assert given and len(given) < 6, text
    assert "follow at the next event" not in text, text
    for i in sorted(set(range(6)) - set(given)):
        assert f"r{i}.mdc" in text, (i, text)  # named, with its path to read
    assert len(text) <= 10000, len(text)
    assert _state(hk) == before


def test_a_subagent_gets_no_path_scoped_rule_for_the_files_the_main_context_touched(hk):
    """A scoped rule belongs to a context that touched a matching file: the
    subagent touched none yet (its writes get the rule: scoped_rules)."""
    _rules_and_a_web_file(hk, ".cursor/rules", {
        "ts.mdc": '---\nglobs: "web/**/*.ts"\nalwaysApply: false\n---\nSCOPED_SUB_8f.\n',
        "all.mdc": "---\nalwaysApply: true\n---\nALWAYS_SUB_2a.\n"})
    hk.write_transcript([
        {"type": "user", "version": "2.1.332", "sessionId": hk.session, "isSidechain": False, "uuid": "u1",
         "message": {"role": "user", "content": "edit it"}},
        {"type": "assistant", "sessionId": hk.session, "isSidechain": False, "uuid": "a1",
         "message": {"id": "m1", "role": "assistant", "content": [
             {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(hk.project / "web" / "a.ts")}}]}}])
    scoped = shared_profile(profile_text({"prompt": [{"name": "rules", "every_turns": 1, "sources": [
        {"agent": "rules"}, CURSOR_SOURCE]}]}, name="cursorscoped"))
    assert "SCOPED_SUB_8f" in _context("claude-code", hk, "prompt", profile=scoped), "the main context touched it"
    text = _context("claude-code", hk, "subagent_start", profile=scoped)
    assert "ALWAYS_SUB_2a" in text and "SCOPED_SUB_8f" not in text, text


def test_a_real_sessions_subagent_starts_with_the_rule_the_main_context_has_in_view(hk):
    """Session 21 (a recorded Claude Code session that starts 16 Task
    subagents), fed event by event to the hook command up to its first
    Task call, with Cursor's rules added: the session's start gave the rule
    to the main context, and the subagent started then gets it too; the
    session's state is as the main context's events left it."""
    from engine.replay.events import events
    from testdata import transcript

    _cursor_rules(hk, "Name every branch REAL_SUB_40d2.")
    source = transcript("21-erk-ci-compact-17errors-41files-ebe65926.jsonl")
    data = source.read_bytes()
    hk.transcript.parent.mkdir(parents=True, exist_ok=True)
    hk.transcript.write_bytes(b"")
    hk.compiled(CURSOR_ALWAYS)
    given, task = [], None
    for ev, offset in events(source, cwd=str(hk.project), session_id=hk.session, transcript_path=str(hk.transcript)):
        hk.transcript.write_bytes(data[:offset])
        run = hk.hook(ev, profile=CURSOR_ALWAYS).assert_ok()
        given.append("REAL_SUB_40d2" in run.stdout)
        if ev["hook_event_name"] == "PreToolUse" and ev["tool_name"] == "Task":
            task = ev
            break
    assert task is not None and given[0] and not any(given[1:]), given  # at the start only: in view since
    before = _state(hk)
    start = dict(hk.event("SubagentStart", agent_id="a7", agent_type=task["tool_input"].get("subagent_type", "x")))
    text = hk.hook(start, profile=CURSOR_ALWAYS).assert_ok().context
    assert "REAL_SUB_40d2" in text, text
    assert _state(hk) == before


def test_a_codex_subagent_gets_the_rules_it_lacks_at_its_start_or_else_at_its_first_tool_call_once(hk):
    """Codex 0.171.0 sends SubagentStart when a subagent starts (its
    context reaches the subagent's first request), and its subagent's calls
    carry the subagent's id (agent_id; its subagent loads its AGENTS.md
    files itself).  So the rules only the engine delivers come at the
    start, and its first tool call gives none again; a subagent whose start
    reached no hook (hooks installed before the engine took SubagentStart:
    its YAML's subagent_first_call) gets them at its first tool call
    (PreToolUse, whose context reaches the model), once per subagent; the
    main agent's calls, and Claude Code's subagent (which has its start),
    get none."""
    _cursor_rules(hk, "Name every branch CODEX_SUB_3a.")
    (hk.project / "AGENTS.md").write_text("# Team\nAGENTS_OWN_9d.\n")
    hk.compiled(CURSOR_ALWAYS)

    def answer(agent, event, **fields):
        payload = {"session_id": hk.session, "transcript_path": str(hk.transcript), "cwd": str(hk.project),
                   "hook_event_name": event, **fields}
        run = hk.engine("hook", "--agent", agent, "--profile", str(CURSOR_ALWAYS),
                        stdin=json.dumps(payload).encode()).assert_ok()
        return (json.loads(run.stdout).get("hookSpecificOutput") or {}).get("additionalContext", "") \
            if run.stdout.strip() else ""

    def pre_tool(agent, **fields):
        return answer(agent, "PreToolUse", tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="call_1", **fields)

    started = answer("codex", "SubagentStart", agent_id="sub-s", agent_type="default")
    assert "CODEX_SUB_3a" in started and "AGENTS_OWN_9d" not in started, started
    assert "CODEX_SUB_3a" not in pre_tool("codex", agent_id="sub-s", agent_type="default"), "given at its start"
    first = pre_tool("codex", agent_id="sub-a", agent_type="default")
    assert "CODEX_SUB_3a" in first and "AGENTS_OWN_9d" not in first, first
    assert "CODEX_SUB_3a" not in pre_tool("codex", agent_id="sub-a", agent_type="default"), "once per subagent"
    assert "CODEX_SUB_3a" in pre_tool("codex", agent_id="sub-b", agent_type="default"), "each subagent its own"
    assert "CODEX_SUB_3a" not in pre_tool("codex"), "the main agent's call"
    assert "CODEX_SUB_3a" not in pre_tool("claude-code", agent_id="a1b2c3"), "Claude Code's subagent had its start"


def _codex_call(call_id, cmd, output):
    """A Codex rollout's shell call and its output, as 0.171.0 writes them."""
    return [{"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": call_id,
                                                   "arguments": json.dumps({"cmd": cmd})}},
            {"type": "response_item", "payload": {"type": "function_call_output", "call_id": call_id,
                                                   "output": output}}]


def test_a_codex_subagents_failed_command_is_remembered_from_its_own_rollout(hk):
    """Codex 0.171.0 writes a subagent's calls to a rollout of its own,
    which its SubagentStart names (transcript_path; the subagent's other
    events name the session's), and its PostToolUse shows no exit status:
    the Stop scan read the session's rollout alone, so a subagent's failed
    command was never remembered.  Now the start notes that rollout and each
    Stop reads it too, when it grew: once per failure.  Claude Code's
    subagent start (the session's transcript) notes nothing."""
    main, sub = hk.root / "rollout-main.jsonl", hk.root / "rollout-sub.jsonl"

    def write(path, records):
        path.write_text("".join(json.dumps(r) + "\n" for r in records))

    def send(agent, event, path, **fields):
        payload = {"session_id": hk.session, "transcript_path": str(path), "cwd": str(hk.project),
                   "hook_event_name": event, **fields}
        hk.engine("hook", "--agent", agent, stdin=json.dumps(payload).encode()).assert_ok()

    def remembered():
        listed = hk.engine("memory", "list", "--json")
        assert listed.returncode == 0, str(listed)
        return sorted((e["input"], e["error"], e["count"]) for e in json.loads(listed.stdout))

    write(main, _codex_call("call_m", "ls", "Process exited with code 0\nOutput:\nREADME\n"))
    send("claude-code", "SubagentStart", main, agent_id="a1b2c3", agent_type="general-purpose")
    assert not any("subagent_transcript" in p.read_text() for p in hk.session_files()), "Claude Code's: nothing noted"
    send("codex", "SubagentStart", sub, agent_id="sub-1", agent_type="default")
    write(sub, _codex_call("call_s1", "make deploy", "Process exited with code 2\nOutput:\ndeploy-boom-7x\n"))
    send("codex", "Stop", main, stop_hook_active=False)
    assert remembered() == [("make deploy", "deploy-boom-7x", 1)]
    send("codex", "Stop", main, stop_hook_active=False)
    assert remembered() == [("make deploy", "deploy-boom-7x", 1)], "the same failure once"
    with sub.open("a") as fh:  # the subagent goes on: a second failure, read at the next Stop
        fh.write("".join(json.dumps(r) + "\n" for r in _codex_call("call_s2", "make test", "Process exited with code 1\n"
                                                                                        "Output:\ntest-boom-3q\n")))
    send("codex", "SessionEnd", main, reason="other")
    assert remembered() == [("make deploy", "deploy-boom-7x", 1), ("make test", "test-boom-3q", 1)]


def test_a_projects_gemini_settings_name_no_file_the_engine_reads(hk):
    """Audit: Gemini CLI takes context.fileName from a trusted project's own
    .gemini/settings.json too; the engine reads that setting from the user's
    file only, so a repository naming ../../.ssh/id_rsa, /etc/passwd, a
    FIFO, /dev/zero or 100,000 names there gets none of them delivered,
    and the hook answers at once."""
    secret = hk.home / ".ssh" / "id_rsa"
    secret.parent.mkdir()
    secret.write_text("PRIVATE_KEY_7f3a\n")
    (hk.project / ".git").mkdir()
    (hk.project / "GEMINI.md").write_text("GEMINI_FILE_55ee.\n")
    os.mkfifo(hk.project / "fifo.md")
    names = [os.path.relpath(secret, hk.project), str(secret), "/etc/passwd", "/dev/zero", "fifo.md",
             *(f"n{i}.md" for i in range(100000))]
    (hk.project / ".gemini").mkdir()
    (hk.project / ".gemini" / "settings.json").write_text(json.dumps({"context": {"fileName": names}}))
    text = _context("gemini", hk, "prompt", profile=shared_profile(EVERY_PROMPT))
    assert "GEMINI_FILE_55ee" in text, text
    assert "PRIVATE_KEY_7f3a" not in text and "root:" not in text, text
