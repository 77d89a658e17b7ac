"""Issue 19: the rough edges a new user meets on the way in: `--levels` in
both spellings, `validate` on a rule file, completion of levels, profiles
and subcommands, what install and uninstall say they did, and a README
command table that lists every command."""

import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import REPO, write

SAMPLE = "# Rules\n\nIn order to deploy the application, check the configuration of the database.\n"


# ---------------------------------------------------------------- stats --levels


@pytest.mark.parametrize("spelling", [["light", "aggressive"], ["light,aggressive"], ["light,", "aggressive"]])
def test_stats_levels_as_words_or_a_comma_list(cli, spelling):
    write(cli.cwd, "rules/a.md", SAMPLE)
    r = cli("stats", "rules", "--levels", *spelling, "--json")
    assert r.returncode == 0, r
    data = json.loads(r.out)
    assert [row["level"] for row in data["rows"]] == ["light", "aggressive"]
    assert [t["level"] for t in data["totals"]] == ["light", "aggressive"]


def test_stats_levels_before_the_folder(cli):
    write(cli.cwd, "rules/a.md", SAMPLE)
    r = cli("stats", "--levels", "standard", "--json", "rules")
    assert r.returncode == 0, r
    assert [row["level"] for row in json.loads(r.out)["rows"]] == ["standard"]


# ---------------------------------------------------------------- validate on a rule file


@pytest.mark.parametrize("name,text", [
    ("CLAUDE.md", (REPO / "examples" / "CLAUDE.md").read_text(encoding="utf-8")),
    ("notes.txt", "hello world\n"),
    ("AGENTS.md", "# Agents\n\nkey: value\n"),  # parses as YAML, but is no engine document
], ids=["CLAUDE.md", "notes.txt", "AGENTS.md"])
def test_validate_on_a_file_that_is_not_a_yaml_document(cli, name, text):
    write(cli.cwd, name, text)
    r = cli("validate", name)
    assert r.returncode == 1, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert lines[0].startswith(f"{name}: not a YAML document"), r.err
    assert "malformed YAML" not in r.err and "another document" not in r.err
    for kind in ("profile", "level", "protect", "dictionary", "messages", "detector", "report", "content_cache",
                 "settings"):
        assert re.search(rf"\b{kind}\b", lines[0]), (kind, lines[0])
    assert f"engine explain {name}" in lines[0]


def test_validate_still_reports_yaml_syntax_errors_in_a_yaml_file(cli):
    write(cli.cwd, "mine.yaml", "kind: profile\nname: [unclosed\n")
    r = cli("validate", "mine.yaml")
    assert r.returncode == 1
    assert r.err.startswith("mine.yaml:") and "malformed YAML" in r.err and "not a YAML document" not in r.err


def test_validate_names_every_kind_for_a_yaml_file_that_is_not_a_mapping(cli):
    write(cli.cwd, "list.yaml", "- a\n- b\n")
    r = cli("validate", "list.yaml")
    assert r.returncode == 1
    for kind in ("messages", "detector", "report", "content_cache", "settings"):
        assert kind in r.err, r.err


# ---------------------------------------------------------------- completion


LEVEL_NAMES = sorted(p.stem for p in (REPO / "pipelines" / "levels").glob("*.yaml"))
PROFILES = sorted(p.stem for p in (REPO / "pipelines").glob("*.yaml"))
PIPELINES = sorted(p.stem for p in (REPO / "pipelines" / "messages").glob("*.yaml"))


@pytest.fixture
def complete(cli, tmp_path):
    """complete(*words) -> what bash offers for the last word, run in bash
    with COMP_WORDS/COMP_CWORD set as bash sets them, in a folder holding
    files whose names would match (so offering file names shows)."""
    bash = shutil.which("bash")
    if not bash:
        pytest.skip("no bash")
    script = cli("completion", "bash").out
    home = tmp_path / "home"
    conf = home / ".config" / "rules-engine"
    conf.mkdir(parents=True)
    (conf / "profile.yaml").write_text("kind: profile\nname: mine\nextends: default\n")
    (conf / "content_cache.yaml").write_text("kind: content_cache\n")  # not a profile
    for name in ("aggressive.md", "default.md", "light-notes.txt"):
        (cli.cwd / name).write_text("x\n")

    def run(*words):
        quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
        code = (script + f"\nCOMP_WORDS=(engine {quoted}); COMP_CWORD={len(words)}; _engine_complete; "
                'printf "%s\\n" "${COMPREPLY[@]}"\n')
        env = {k: v for k, v in cli.env().items() if k != "XDG_CONFIG_HOME"}
        env["HOME"] = str(home)
        out = subprocess.run([bash, "--norc", "-c", code], capture_output=True, text=True, cwd=cli.cwd, env=env)
        assert out.returncode == 0, out.stderr
        return sorted(line for line in out.stdout.splitlines() if line)

    run.config = conf
    return run


@pytest.mark.parametrize("words", [
    ("compress", "x.md", "--level", ""),
    ("diff", "x.md", "--level", ""),
    ("profile", "show", "--level", ""),
    ("stats", "rules", "--levels", ""),
])
def test_bash_completes_level_names_after_level_not_file_names(complete, words):
    assert complete(*words) == LEVEL_NAMES


def test_bash_completes_a_level_prefix(complete):
    assert complete("compress", "x.md", "--level", "a") == ["aggressive"]


def test_bash_completes_more_levels_after_the_first_of_levels(complete):
    offered = complete("stats", "rules", "--levels", "light", "")
    assert set(LEVEL_NAMES) <= set(offered)


@pytest.mark.parametrize("words", [("compress", "x.md", "--profile", ""), ("diff", "--profile", ""),
                                   ("profile", "show", "")])
def test_bash_completes_profiles_builtin_and_the_config_folder(complete, words):
    offered = complete(*words)
    assert offered == sorted(PROFILES + [str(complete.config / "profile.yaml")]), offered


def test_bash_completes_subcommands(complete):
    assert complete("refresh", "") == ["--help", "preview"]
    assert {"stats", "list", "show", "pin", "unpin", "prune", "gc", "learned", "run"} <= set(complete("cache", ""))
    assert complete("session", "r") == ["report"]
    assert "install" in complete("ins") and "uninstall" in complete("un")


def test_bash_completes_choices_of_options_and_arguments(complete):
    assert complete("completion", "") == ["bash", "zsh"]
    assert complete("diff", "x.md", "--color", "") == ["always", "auto", "never"]
    assert complete("cache", "pin", "KEY", "--level", "") == ["hard", "none", "soft"]
    assert complete("messages", "compress", "--profile", "") == PIPELINES
    agents = sorted(p.stem for p in (REPO / "pipelines" / "agents").glob("*.yaml"))
    assert len(agents) == 4
    for words in (("install", "--agent", ""), ("doctor", "--agent", ""), ("session", "report", "--agent", ""),
                  ("replay", "--agent", ""), ("hook", "--agent", ""), ("memory", "preview", "--agent", "")):
        assert complete(*words) == agents, words


def test_bash_still_completes_file_names_where_a_file_goes(complete):
    assert complete("compress", "agg") == ["aggressive.md"]
    assert complete("stats", "rules", "--levels", "light", "agg") == ["aggressive", "aggressive.md"]


def test_zsh_script_offers_levels_and_profiles(cli):
    script = cli("completion", "zsh").out
    levels, profiles = " ".join(LEVEL_NAMES), " ".join(PROFILES)
    assert f'"compress --level") kind=words; vals="{levels}"' in script
    assert f'"stats --levels") kind=words; vals="{levels}"' in script
    assert f'"compress --profile") kind=profile; vals="{profiles}"' in script
    assert "rules-engine" in script and "_engine_profiles" in script
    zsh = shutil.which("zsh")
    assert zsh, "no zsh on the PATH: .ci/run installs Debian's zsh"
    check = subprocess.run([zsh, "-n"], input=script, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


# ---------------------------------------------------------------- install and uninstall say what they did


def _listed(out, title):
    """{path: what} of the lines under `title:` in the output."""
    lines = out.splitlines()
    assert f"{title}:" in lines, out
    rows = {}
    for line in lines[lines.index(f"{title}:") + 1:]:
        if not line.startswith("  "):
            break
        path, what = line.strip().split("  ", 1)
        rows[path] = what.strip()
    return rows


def _files_under(folder):
    return sorted(str(p) for p in folder.rglob("*") if p.is_file())


def test_install_lists_every_file_it_wrote_and_uninstall_every_file_it_removed(cli, tmp_path):
    state = tmp_path / "state"
    env = {"ENGINE_STATE_DIR": state}
    r = cli("install", "--project", env=env)
    assert r.returncode == 0, r
    wrote = _listed(r.out, "wrote")
    absolute = {str((cli.cwd / p) if not p.startswith("/") else p): what for p, what in wrote.items()}
    claude = cli.cwd / ".claude"
    pins = sorted(str(p) for p in (claude / "commands").glob("pin-*.md"))
    assert len(pins) == 4
    # every file written, in the project and in the state folder, is listed, and nothing else
    assert sorted(absolute) == sorted(_files_under(claude) + _files_under(state)), r.out
    assert absolute[str(claude / "settings.json")].startswith("created")
    for pin in pins:
        assert absolute[pin] == f"slash command /{os.path.basename(pin)[:-3]}"
    assert str(state / "installed-commands.json") in absolute

    again = cli("install", "--project", env=env)
    assert "nothing changed" in again.out and "wrote:" not in again.out

    os.unlink(pins[0])  # a command the user deleted: install writes it again, and says so
    again = cli("install", "--project", env=env)
    assert list(_listed(again.out, "wrote")) == [os.path.relpath(pins[0], cli.cwd)], again.out

    r = cli("uninstall", "--project", env=env)
    assert r.returncode == 0, r
    removed = {str((cli.cwd / p) if not p.startswith("/") else p): what for p, what in _listed(r.out, "wrote or removed").items()}
    for path in pins + [str(claude / "settings.json"), str(claude / "commands")]:
        assert path in removed, (path, r.out)
        assert not os.path.exists(path)


def test_install_names_a_users_own_command_it_left_alone(cli, tmp_path):
    env = {"ENGINE_STATE_DIR": tmp_path / "state"}
    write(cli.cwd, ".claude/commands/pin-last.md", "my own pin-last\n")
    r = cli("install", "--project", env=env)
    wrote = _listed(r.out, "wrote")
    assert "left as it is" in wrote[".claude/commands/pin-last.md"], r.out
    assert (cli.cwd / ".claude/commands/pin-last.md").read_text() == "my own pin-last\n"
    r = cli("uninstall", "--project", env=env)
    assert ".claude/commands/pin-last.md" not in _listed(r.out, "wrote or removed")
    assert (cli.cwd / ".claude/commands/pin-last.md").read_text() == "my own pin-last\n"


# ---------------------------------------------------------------- the README's command table


def _parser_commands():
    """{command: [subcommands]} of the parser itself."""
    import argparse

    from engine.cli.parser import build_parser

    def subs(p):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                return a.choices
        return {}

    return {name: sorted(subs(p)) for name, p in subs(build_parser()).items()}


def _readme_table_commands():
    """{command: {subcommands}} named in the first column of the README's
    command table (`engine memory list\\|clear ...` names list and clear)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `engine")]
    named = {}
    for row in rows:
        first = re.split(r"(?<!\\)\|", row)[1]
        for span in re.findall(r"`(engine [^`]*)`", first):
            words = span.replace("\\|", "|").split()
            if len(words) < 2 or words[1].startswith("-"):
                continue
            subs = named.setdefault(words[1], set())
            if len(words) > 2:
                subs.update(w for w in words[2].split("|") if re.fullmatch(r"[a-z][a-z-]*", w))
    return named


def test_readme_command_table_lists_every_command_and_subcommand():
    parser, readme = _parser_commands(), _readme_table_commands()
    missing = sorted(set(parser) - set(readme))
    assert not missing, f"add these commands to the README's command table: {missing}"
    for cmd, subs in parser.items():
        gone = sorted(set(subs) - readme[cmd])
        assert not gone, f"add `engine {cmd} {'|'.join(gone)}` to the README's command table"
    unknown = sorted(set(readme) - set(parser))
    assert not unknown, f"the README's command table names commands the engine does not have: {unknown}"


def test_every_profile_option_names_the_config_folder_profile():
    """--profile NAME|PATH: where the profile comes from without it, the
    config folder's profile.yaml included, on every command that takes it."""
    import argparse

    from engine.cli.parser import build_parser

    def walk(p, path):
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, q in a.choices.items():
                    yield from walk(q, path + [name])
            elif "--profile" in a.option_strings:
                yield " ".join(path), a.help or ""

    seen = list(walk(build_parser(), []))
    assert len(seen) > 10
    for where, text in seen:
        if where == "messages compress":
            assert "pipelines/messages" in text  # a message pipeline, not a profile
            continue
        if where == "install":
            assert "hook command" in text, text
        assert "rules-engine/profile.yaml" in text, (where, text)


@pytest.mark.parametrize("args,says", [
    (("session", "report", "tr"), "tr: this is a folder, not a transcript file"),
    (("replay", "tr"), "tr: this is a folder, not a transcript file"),
    (("replay", "nope.jsonl"), "nope.jsonl: no such file; check the path"),
    (("compress", "CLAUDE.md", "--profile", "tr"), "'tr' is a folder here: give the path of a profile .yaml file"),
])
def test_a_folder_or_a_missing_file_is_called_what_it_is(cli, args, says):
    (cli.cwd / "tr").mkdir()
    (cli.cwd / "CLAUDE.md").write_text("Always run the tests.\n")
    run = cli(*args)
    assert run.returncode == 1 and says in run.err, run


@pytest.mark.parametrize("args,says", [
    (("compress", "--levle", "standard", "x.md"), "unrecognized arguments: --levle; did you mean '--level'? "
                                                 "(see `engine compress --help`)"),
    (("sesion", "report"), "did you mean 'session'? (see `engine --help`)"),
    (("cache", "shw"), "did you mean 'show'? (see `engine cache --help`)"),
    (("install", "--agnt", "codex"), "did you mean '--agent'? (see `engine install --help`)"),
    (("refresh", "preview", "--turn", "abc"), "invalid int value: 'abc' (see `engine refresh preview --help`)"),
    (("compress",), "the following arguments are required: FILE (see `engine compress --help`)"),
])
def test_a_mistyped_command_or_option_is_one_line_with_the_nearest_name_and_exit_1(cli, args, says):
    """As every other mistake (README): one line, exit 1, the nearest known
    name, and the help to read; not argparse's usage block and exit 2."""
    run = cli(*args)
    assert run.returncode == 1 and run.err.startswith("engine: ") and "usage:" not in run.err, run
    assert len(run.err.strip().splitlines()) == 1 and says in run.err, run
