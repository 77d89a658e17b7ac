"""Issue 19: the rough edges a new user meets on the way in: `--levels` in
both spellings, `validate` on a rule file, completion of levels, profiles
and subcommands, what install and uninstall say they did, and a README
command table that lists every command."""

import json
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
