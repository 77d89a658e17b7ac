"""The trust model (README, "Security and limits"): a cloned repository cannot
make the hook inject the user's files.  A profile found in the project reads
only the project and the agent's own rule files; a link in the project's
rule folder is followed only inside that folder, never into version-control
metadata; the user's own rule folder may link anywhere; only the user's own
profile may widen this.  What is injected passes the redactor."""

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

SECRET = "TOPSECRET-7f3a9c"


def _secret(hk):
    path = hk.home / "secret.txt"
    path.write_text(f"{SECRET}: the user's private file\n")
    return path


def _hostname():
    try:
        return open("/etc/hostname").read().strip()
    except OSError:
        return None


def _project_profile(hk, events, **top):
    """A project profile, approved (`engine trust`): these tests check what
    even an approved one cannot make the hook read."""
    folder = hk.project / ".engine"
    folder.mkdir(exist_ok=True)
    (folder / "profile.yaml").write_text(profile_text(events, name="repo", **top))
    run = hk.engine("trust")
    assert run.returncode == 0, str(run)


def _every_prompt_files(files):
    return {"UserPromptSubmit": [{"name": "instructions", "every_turns": 1, "files": files},
                                 {"name": "rules", "every_turns": 0}]}


def test_a_project_profile_cannot_inject_files_outside_the_project(hk):
    """The exact attack of the issue: files: ["~/secret.txt", "/etc/hostname"]."""
    _secret(hk)
    hk.claude_md("Marker PROJECTMD: the project's own file.\n")
    _project_profile(hk, _every_prompt_files(["~/secret.txt", "/etc/hostname", "{project}/CLAUDE.md"]))
    run = hk.hook(hk.prompt(1))
    run.assert_ok()
    ctx = run.context or ""
    assert "PROJECTMD" in ctx, f"the project's own file is still injected\n{run}"
    assert SECRET not in ctx, "a repository's profile injected ~/secret.txt"
    host = _hostname()
    if host:
        assert "/etc/hostname" not in ctx and f"\n{host}\n" not in f"\n{ctx}\n", "a repository's profile injected /etc/hostname"
    log = "\n".join(hk.log_lines())
    assert "secret.txt" in log and "/etc/hostname" in log, log


def test_a_project_profile_cannot_reach_outside_through_a_source_folder(hk):
    _secret(hk)
    hk.rule("ok.md", "# OK\nMarker PROJRULE.\n")
    _project_profile(hk, {"UserPromptSubmit": [
        {"name": "rules", "every_turns": 1, "sources": [{"dir": "~", "glob": "*.txt"}, {"dir": "{project}/.claude/rules"},
                                                       {"dir": "~/.claude/rules", "glob": "../../secret.txt"}]},
        {"name": "instructions", "every_turns": 0}]})
    ctx = hk.hook(hk.prompt(1)).assert_ok().context or ""
    assert "PROJRULE" in ctx
    assert SECRET not in ctx


def test_links_in_the_project_rule_folder_that_leave_the_project_are_skipped(hk):
    """The second attack: .claude/rules/*.md linking to /etc/passwd and ~/secret.txt (built-in profile)."""
    secret = _secret(hk)
    hk.rule("good.md", "# Good\nMarker GOODRULE.\n")
    (hk.project_rules / "evil.md").symlink_to(secret)
    (hk.project_rules / "passwd.md").symlink_to("/etc/passwd")
    inside = hk.project_rules / "team" / "shared.md"
    inside.parent.mkdir()
    inside.write_text("# Shared\nMarker INSIDELINK.\n")
    (hk.project_rules / "inside.md").symlink_to(inside)
    run = hk.hook(hk.event("SessionStart", source="compact"))
    ctx = run.assert_ok().context or ""
    assert "GOODRULE" in ctx and "INSIDELINK" in ctx, f"files and links inside the rule folder still count\n{run}"
    assert SECRET not in ctx
    assert "root:" not in ctx, "/etc/passwd was injected"
    log = "\n".join(hk.log_lines())
    assert "evil.md" in log and "passwd.md" in log and "outside the project" in log, log


def test_the_users_own_rule_folder_may_link_anywhere(hk):
    elsewhere = hk.root / "dotfiles" / "team.md"
    elsewhere.parent.mkdir()
    elsewhere.write_text("# Team\nMarker TEAMLINK.\n")
    hk.global_rules.mkdir(parents=True)
    (hk.global_rules / "team.md").symlink_to(elsewhere)
    ctx = hk.hook(hk.event("SessionStart", source="compact")).assert_ok().context or ""
    assert "TEAMLINK" in ctx


def test_the_users_own_profile_widens_and_a_project_profile_cannot(hk):
    shared = hk.root / "shared-rules"
    shared.mkdir()
    (shared / "team.md").write_text("# Team\nMarker SHAREDOK.\n")
    _secret(hk)
    # The project asks for both, and tries to allow itself everything.
    _project_profile(hk, _every_prompt_files([str(shared / "team.md"), "~/secret.txt"]),
                     trust={"allow_read": ["~", "/"]})
    ctx = hk.hook(hk.prompt(1)).assert_ok().context
    assert ctx is None or ("SHAREDOK" not in ctx and SECRET not in ctx), ctx
    assert any("ignored" in line for line in hk.log_lines()), hk.log_lines()
    # The user's own profile (config folder) allows the shared folder only.
    own = hk.home / ".config" / "rules-engine" / "profile.yaml"
    own.parent.mkdir(parents=True)
    own.write_text(profile_text(name="mine", trust={"allow_read": [str(shared)]}))
    ctx = hk.hook(hk.prompt(2)).assert_ok().context or ""
    assert "SHAREDOK" in ctx
    assert SECRET not in ctx


def test_a_users_profile_named_in_the_hook_command_reads_what_it_names(hk):
    """Outside any project profile, the user's own profile is trusted as before."""
    _secret(hk)
    prof = shared_profile(profile_text(_every_prompt_files(["~/secret.txt"]), name="own"))
    ctx = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
    assert SECRET in ctx


def test_preview_shows_what_was_skipped_and_why(hk):
    secret = _secret(hk)
    hk.rule("good.md", "# Good\nMarker GOODRULE.\n")
    (hk.project_rules / "evil.md").symlink_to(secret)
    run = hk.engine("refresh", "preview", "--text")
    assert run.returncode == 0, str(run)
    skipped = [line for line in run.stdout.splitlines() if "SKIPPED" in line]
    assert len(skipped) == 1 and "evil.md" in skipped[0] and "outside the project" in skipped[0], run.stdout
    assert SECRET not in run.stdout


def test_trust_allow_list_is_schema_checked(hk):
    prof = hk.project / "bad.yaml"
    prof.write_text(profile_text(name="bad", trust={"allow_read": ["relative/path"]}))
    run = hk.engine("validate", str(prof))
    assert run.returncode == 1 and "allow_read" in run.stderr, str(run)


def test_folder_by_folder_realpath_is_realpath(tmp_path):
    """collect() resolves each folder once; the result must be what
    os.path.realpath gives for files, links to files, links to links and
    files inside a linked folder."""
    import os

    from engine.hooks.sources import _realpath

    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "a.md").write_text("a")
    (tmp_path / "outside.md").write_text("o")
    os.symlink(tmp_path / "real", tmp_path / "linked")
    os.symlink(tmp_path / "outside.md", tmp_path / "real" / "b.md")
    os.symlink(tmp_path / "real" / "b.md", tmp_path / "real" / "c.md")
    os.symlink(tmp_path / "nowhere.md", tmp_path / "real" / "broken.md")
    folders = {}
    for folder in ("real", "linked"):
        for name in ("a.md", "b.md", "c.md", "broken.md", "missing.md"):
            p = str(tmp_path / folder / name)
            assert _realpath(p, folders) == os.path.realpath(p), p


CLONE_TOKEN = "ghp_" + "Zq7" * 12  # the shape of a GitHub token, 39 characters


def _clone_metadata(hk):
    """A clone's metadata as git, Mercurial and Subversion leave it: a remote URL with a token in it."""
    git = hk.project / ".git"
    git.mkdir()
    (git / "config").write_text(f'[remote "origin"]\n\turl = https://x-access-token:{CLONE_TOKEN}@example.test/r.git\n')
    (git / "description").write_text("Marker GITDESC: unnamed repository.\n")
    (hk.project / ".hg").mkdir()
    (hk.project / ".hg" / "hgrc").write_text("[paths]\ndefault = https://alice:HGSECRET42@hg.example.test/r\n")
    (hk.project / ".svn").mkdir()
    (hk.project / ".svn" / "entries.md").write_text("Marker SVNENTRY: svn metadata.\n")


def test_links_into_version_control_metadata_are_never_followed(hk):
    """`.claude/rules/x.md -> ../../.git/config` used to inject the clone's
    token; nor may a link reach .hg or .svn, or leave the rule folder for
    another file of the project (docs/, .env)."""
    _clone_metadata(hk)
    (hk.project / ".env").write_text("Marker DOTENV: API_PASSWORD=hunter2hunter2\n")
    docs = hk.project / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\nMarker DOCSGUIDE: a project document.\n")
    hk.rule("keep.md", "# Keep\nMarker KEEPRULE: an ordinary rule.\n")
    links = {"remote.md": "../../.git/config", "about.md": "../../.git/description", "hg.md": "../../.hg/hgrc",
             "svn.md": "../../.svn/entries.md", "env.md": "../../.env", "guide.md": "../../docs/guide.md"}
    for name, target in links.items():
        (hk.project_rules / name).symlink_to(target)
    ctx = hk.hook(hk.event("SessionStart", source="compact")).assert_ok().context or ""
    assert "KEEPRULE" in ctx
    for leaked in (CLONE_TOKEN, "x-access-token", "GITDESC", "HGSECRET42", "SVNENTRY", "DOTENV", "DOCSGUIDE"):
        assert leaked not in ctx, f"{leaked} reached the context through a link:\n{ctx}"
    log = "\n".join(hk.log_lines())
    for name in links:
        assert name in log, f"{name} left out without a log line:\n{log}"
    assert "version-control metadata (.git)" in log and "outside its rule folder" in log, log
    preview = hk.engine("refresh", "preview", "--text")
    assert CLONE_TOKEN not in preview.stdout and "SKIPPED" in preview.stdout


def test_a_named_file_may_link_inside_the_project_but_not_into_its_metadata(hk):
    """CLAUDE.md -> AGENTS.md (a common layout) still counts; CLAUDE.md ->
    .git/config does not, whichever profile names it."""
    _clone_metadata(hk)
    (hk.project / "AGENTS.md").write_text("# Agents\nMarker AGENTSFILE: the shared instructions.\n")
    (hk.project / "CLAUDE.md").symlink_to("AGENTS.md")
    prof = shared_profile(profile_text(_every_prompt_files(["{project}/CLAUDE.md"]), name="own"))
    ctx = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
    assert "AGENTSFILE" in ctx
    (hk.project / "CLAUDE.md").unlink()
    (hk.project / "CLAUDE.md").symlink_to(".git/config")
    ctx = hk.hook(hk.prompt(2), profile=prof).assert_ok().context or ""
    assert CLONE_TOKEN not in ctx and "x-access-token" not in ctx, ctx
    assert any("CLAUDE.md" in line and "version-control metadata" in line for line in hk.log_lines())


def test_injected_rule_text_passes_the_redactor(hk):
    """A rule file (the user's or a project's) holding a credential: the
    injection carries [REDACTED] in its place, the rest of the rule as it was."""
    aws = "AKIA" + "QX7R2M4N8P6L3K5J"
    hk.rule("deploy-notes.md", f"# Deploy\nMarker DEPLOYNOTE: the key is {aws} for the staging bucket.\n"
                               "Connect with postgres://svc:Tr0ub4dor-and-3@db.internal/app when asked.\n")
    hk.rule("mine.md", f"# Mine\nMarker MYTOKEN: my token {CLONE_TOKEN} stays mine.\n", where="global")
    ctx = hk.hook(hk.event("SessionStart", source="compact")).assert_ok().context or ""
    assert "DEPLOYNOTE" in ctx and "MYTOKEN" in ctx and "staging bucket" in ctx
    for secret in (aws, "Tr0ub4dor-and-3", CLONE_TOKEN):
        assert secret not in ctx, f"{secret} was injected:\n{ctx}"
    assert ctx.count("[REDACTED]") == 3, ctx


def test_an_approved_project_profile_reads_the_users_instruction_files_each_agent_declares_and_nothing_beside(hk):
    """The user's own instruction files are the ones each agent's YAML
    declares (`origin: user`), under the agent's own folder as the agent
    names it ($CLAUDE_CONFIG_DIR, ~/.codex ...): a project profile may name
    them, and not the credentials beside them in the same folder."""
    for folder, name, text in ((".codex", "AGENTS.md", "CODEXUSER_4a1c"), (".gemini", "GEMINI.md", "GEMINIUSER_5b2d"),
                               (".gemini", "oauth_creds.json", "OAUTHTOKEN_6c3e"), ("claude-cfg", "CLAUDE.md",
                                                                                     "CLAUDECFG_7d4f")):
        (hk.home / folder).mkdir(exist_ok=True)
        (hk.home / folder / name).write_text(f"{text}\n")
    _project_profile(hk, _every_prompt_files(["~/.codex/AGENTS.md", "~/.gemini/GEMINI.md",
                                              "~/.gemini/oauth_creds.json", "~/claude-cfg/CLAUDE.md"]))
    ctx = hk.hook(hk.prompt(1), env={"CLAUDE_CONFIG_DIR": str(hk.home / "claude-cfg")}).assert_ok().context or ""
    assert "CODEXUSER_4a1c" in ctx and "GEMINIUSER_5b2d" in ctx and "CLAUDECFG_7d4f" in ctx, ctx
    assert "OAUTHTOKEN_6c3e" not in ctx, ctx
    assert any("oauth_creds.json" in line and "left out" in line for line in hk.log_lines()), hk.log_lines()


def test_a_superprojects_links_above_the_project_never_reach_the_users_files(hk):
    """Claude Code reads CLAUDE.md and .claude/rules in every folder above the
    working folder.  A hostile superproject (or a download folder, or a
    shared /tmp) put links there to ~/.ssh and ~/.aws files, and the
    built-in refresh delivered them: above the project, a link is followed
    only inside the folder it was found in, and a file others may write is
    left out.  The superproject's own plain files are still delivered."""
    hk.extra_env["ENGINE_PROFILE"] = str(hk.home / "mine.yaml")
    (hk.home / "mine.yaml").write_text(profile_text(
        {"UserPromptSubmit": [{"name": "rules", "every_turns": 1}, {"name": "instructions", "every_turns": 1}]},
        name="mine"))
    secret = _secret(hk)
    outer = hk.root / "src" / "evil"
    inner = outer / "vendor" / "lib"
    (outer / ".git").mkdir(parents=True)
    inner.mkdir(parents=True)
    (inner / ".git").write_text("gitdir: ../../.git/modules/lib\n")  # a submodule
    (outer / "CLAUDE.md").symlink_to(secret)
    rules = outer / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "leak.md").symlink_to(secret)
    (rules / "plain.md").write_text("# Plain\nMarker SUPERRULE.\n")
    (rules / "team").mkdir()
    (rules / "team" / "t.md").write_text("# Team\nMarker SUPERLINKIN.\n")
    (rules / "linked.md").symlink_to(rules / "team" / "t.md")
    planted = rules / "planted.md"
    planted.write_text("# Planted\nMarker PLANTED.\n")
    planted.chmod(0o666)
    hk.project = inner
    ctx = hk.hook(hk.prompt(1)).assert_ok().context or ""
    assert SECRET not in ctx, "a folder above the project delivered the user's private file"
    assert "PLANTED" not in ctx, "a file any account may write was delivered"
    assert "SUPERRULE" in ctx and "SUPERLINKIN" in ctx, ctx
    log = "\n".join(hk.log_lines())
    assert "leak.md left out" in log and "CLAUDE.md left out" in log and "planted.md left out" in log, log
