"""The trust model (README, "Security and limits"): a cloned repository cannot
make the hook inject the user's files.  A profile found in the project reads
only the project and the agent's own rule files; a link in the project's
rule folder that leaves the project is skipped; the user's own rule folder
may link anywhere; only the user's own profile may widen this."""

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
    return {"UserPromptSubmit": [{"name": "claude_md", "every_turns": 1, "files": files},
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
        {"name": "claude_md", "every_turns": 0}]})
    ctx = hk.hook(hk.prompt(1)).assert_ok().context or ""
    assert "PROJRULE" in ctx
    assert SECRET not in ctx


def test_links_in_the_project_rule_folder_that_leave_the_project_are_skipped(hk):
    """The second attack: .claude/rules/*.md linking to /etc/passwd and ~/secret.txt (built-in profile)."""
    secret = _secret(hk)
    hk.rule("good.md", "# Good\nMarker GOODRULE.\n")
    (hk.project_rules / "evil.md").symlink_to(secret)
    (hk.project_rules / "passwd.md").symlink_to("/etc/passwd")
    inside = hk.project / "docs" / "shared.md"
    inside.parent.mkdir()
    inside.write_text("# Shared\nMarker INSIDELINK.\n")
    (hk.project_rules / "inside.md").symlink_to(inside)
    run = hk.hook(hk.event("SessionStart", source="compact"))
    ctx = run.assert_ok().context or ""
    assert "GOODRULE" in ctx and "INSIDELINK" in ctx, f"files and links inside the project still count\n{run}"
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
