"""End-to-end tests of what a user does with the `engine` command: compress a
file or stdin at each level, read the figures, write the result to a file,
choose a profile, review a level with diff / explain / stats, print a profile.

Every call runs the real CLI in a subprocess (see conftest.py); the Python API
is used only to compute the reference a CLI result must equal."""

import json
import os
import re
import shutil
import stat

import pytest
import yaml

from conftest import LEVELS, REPO, write
from testdata import corpus_files

SAMPLE = """# Deploy guide

You must never push to `main` without review.
In order to deploy the application to production, check the configuration of the database.
This is **important**: keep the firewall on at all times.
See https://example.com/configuration/environment and run `npm test --environment production`.

| Name | Value |
|------|-------|
| timeout | 30s |

- the first item of the list
- the second item of the list
"""

# Pieces of SAMPLE that a protect category covers: every level keeps them.
PROTECTED = [
    "never",
    "`main`",
    "without",
    "https://example.com/configuration/environment",
    "`npm test --environment production`",
    "30s",
]

CJK = "日本語のテキストを圧縮しないでください。\nこんにちは世界、これはテストです。\n"


def api_text(text, level=None, profile=None):
    from engine.core.profile import load_profile
    from engine.text.pipeline import compress

    return compress(load_profile(profile, level), text).text


# ---------------------------------------------------------------- compress


@pytest.mark.parametrize("level", LEVELS)
def test_compress_file_and_stdin_at_each_level(cli, api_env, level):
    write(cli.cwd, "rules.md", SAMPLE)
    by_file = cli("compress", "rules.md", "--level", level)
    by_stdin = cli("compress", "-", "--level", level, input=SAMPLE)
    assert by_file.returncode == 0, by_file
    assert by_stdin.returncode == 0, by_stdin
    assert by_file.err == "" and by_stdin.err == ""
    assert by_file.out_bytes == by_stdin.out_bytes
    # the CLI is a thin layer over the API
    assert by_file.out == api_text(SAMPLE, level)
    for piece in PROTECTED:
        assert piece in by_file.out, (level, piece, by_file.out)
    if level == "off":
        assert by_file.out == SAMPLE
    else:
        assert len(by_file.out) < len(SAMPLE), by_file.out


def test_each_level_saves_at_least_as_much_as_the_one_below(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    sizes = [len(cli("compress", "rules.md", "--level", lv).out) for lv in LEVELS]
    assert sizes[0] == len(SAMPLE)
    assert sizes[0] > sizes[1] > sizes[2] >= sizes[3], dict(zip(LEVELS, sizes))


def test_without_level_the_profile_level_is_used(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    shown = yaml.safe_load(cli("profile", "show").out)
    assert shown["name"] == "default"
    plain = cli("compress", "rules.md")
    explicit = cli("compress", "rules.md", "--level", shown["level"])
    assert plain.returncode == 0
    assert plain.out_bytes == explicit.out_bytes


def test_json_has_text_and_figures(cli, pure_count):
    write(cli.cwd, "rules.md", SAMPLE)
    plain = cli("compress", "rules.md", "--level", "standard").out
    r = cli("compress", "-", "--level", "standard", "--json", input=SAMPLE)
    assert r.returncode == 0, r
    fig = json.loads(r.out)
    assert fig["text"] == plain
    assert fig["level"] == "standard"
    assert fig["tokenizer"] == "o200k_base"
    assert fig["chars_before"] == len(SAMPLE)
    assert fig["chars_after"] == len(plain) < len(SAMPLE)
    assert fig["tokens_before"] == pure_count(SAMPLE, "o200k_base")
    assert fig["tokens_after"] == pure_count(plain, "o200k_base")
    assert fig["tokens_after"] < fig["tokens_before"]


def test_tokenizer_choice(cli, pure_count):
    write(cli.cwd, "cjk.md", CJK)
    o200k = json.loads(cli("compress", "cjk.md", "--level", "off", "--json").out)
    cl100k = json.loads(cli("compress", "cjk.md", "--level", "off", "--json", "--tokenizer", "cl100k_base").out)
    assert o200k["tokenizer"] == "o200k_base"
    assert cl100k["tokenizer"] == "cl100k_base"
    assert o200k["tokens_before"] == pure_count(CJK, "o200k_base")
    assert cl100k["tokens_before"] == pure_count(CJK, "cl100k_base")
    # the two encodings do not agree on this text: the flag really switches
    assert o200k["tokens_before"] != cl100k["tokens_before"]
    assert o200k["text"] == cl100k["text"] == CJK
    assert o200k["chars_before"] == cl100k["chars_before"] == len(CJK)


def test_unknown_tokenizer_is_refused(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("compress", "rules.md", "--json", "--tokenizer", "gpt2")
    assert r.returncode != 0
    assert "gpt2" in r.err
    assert r.out == ""


# ---------------------------------------------------------------- -o FILE


def _leftovers(folder, expected):
    return sorted(set(os.listdir(folder)) - set(expected))


def test_output_file(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    expected = cli("compress", "rules.md", "--level", "standard").out_bytes
    r = cli("compress", "rules.md", "--level", "standard", "-o", "out.md")
    assert r.returncode == 0, r
    assert r.out_bytes == b""
    assert (cli.cwd / "out.md").read_bytes() == expected
    assert _leftovers(cli.cwd, ["rules.md", "out.md"]) == []


def test_output_file_replaces_an_existing_file(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    write(cli.cwd, "out.md", "old content that is much longer than the new one " * 200)
    expected = cli("compress", "rules.md", "--level", "light").out_bytes
    r = cli("compress", "rules.md", "--level", "light", "-o", "out.md")
    assert r.returncode == 0, r
    assert (cli.cwd / "out.md").read_bytes() == expected
    assert _leftovers(cli.cwd, ["rules.md", "out.md"]) == []


def test_output_file_may_be_the_input_file(cli):
    path = write(cli.cwd, "rules.md", SAMPLE)
    expected = cli("compress", "rules.md", "--level", "standard").out_bytes
    r = cli("compress", "rules.md", "--level", "standard", "-o", "rules.md")
    assert r.returncode == 0, r
    assert path.read_bytes() == expected != SAMPLE.encode()


def test_output_file_keeps_the_permissions_of_the_file_it_replaces(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    out = write(cli.cwd, "out.md", "old\n")
    os.chmod(out, 0o644)
    r = cli("compress", "rules.md", "-o", "out.md")
    assert r.returncode == 0, r
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o644


def test_new_output_file_gets_the_usual_permissions(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    reference = write(cli.cwd, "made-by-python.md", "x")  # created under the same umask
    r = cli("compress", "rules.md", "-o", "out.md")
    assert r.returncode == 0, r
    assert stat.S_IMODE(os.stat(cli.cwd / "out.md").st_mode) == stat.S_IMODE(os.stat(reference).st_mode)


def test_output_into_a_missing_folder_fails_cleanly(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("compress", "rules.md", "-o", "no/such/folder/out.md")
    assert r.returncode == 1, r
    assert "out.md" in r.err
    assert not (cli.cwd / "no").exists()
    assert _leftovers(cli.cwd, ["rules.md"]) == []


def test_output_onto_a_folder_fails_and_leaves_nothing_behind(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    (cli.cwd / "target").mkdir()
    r = cli("compress", "rules.md", "-o", "target")
    assert r.returncode == 1, r
    assert "target" in r.err
    assert (cli.cwd / "target").is_dir() and list((cli.cwd / "target").iterdir()) == []
    assert _leftovers(cli.cwd, ["rules.md", "target"]) == []


def test_in_place_through_a_symbolic_link_writes_its_file_and_keeps_the_link(cli):
    """CLAUDE.md -> AGENTS.md, compressed in place: AGENTS.md is compressed
    and CLAUDE.md stays a link (the rename put a file in the link's place)."""
    real = write(cli.cwd, "AGENTS.md", SAMPLE)
    os.symlink("AGENTS.md", cli.cwd / "CLAUDE.md")
    expected = cli("compress", "AGENTS.md", "--level", "standard").out_bytes
    r = cli("compress", "CLAUDE.md", "--level", "standard", "-i")
    assert r.returncode == 0, r
    assert os.readlink(cli.cwd / "CLAUDE.md") == "AGENTS.md"
    assert real.read_bytes() == expected != SAMPLE.encode()
    assert _leftovers(cli.cwd, ["AGENTS.md", "CLAUDE.md"]) == []


def test_output_onto_a_fifo_is_refused_and_left_a_fifo(cli):
    """-o naming a FIFO (or a device, /dev/full) is one error; the rename
    put a regular file in its place (as root, in /dev too)."""
    write(cli.cwd, "rules.md", SAMPLE)
    os.mkfifo(cli.cwd / "pipe")
    r = cli("compress", "rules.md", "-o", "pipe")
    assert r.returncode == 1, r
    assert r.err.strip() == ("pipe: cannot write: this is not a regular file (a device, a FIFO or a socket); "
                             "name a file, nothing was changed"), r.err
    assert stat.S_ISFIFO(os.lstat(cli.cwd / "pipe").st_mode)
    assert _leftovers(cli.cwd, ["rules.md", "pipe"]) == []


def test_failed_read_leaves_the_output_file_alone(cli):
    (cli.cwd / "bad.md").write_bytes(b"caf\xe9\n")
    out = write(cli.cwd, "out.md", "keep me\n")
    r = cli("compress", "bad.md", "-o", "out.md")
    assert r.returncode == 1
    assert out.read_text() == "keep me\n"


def test_json_with_output_file(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    expected = cli("compress", "rules.md", "--level", "standard").out
    r = cli("compress", "rules.md", "--level", "standard", "--json", "-o", "out.md")
    assert r.returncode == 0, r
    fig = json.loads(r.out)
    assert (cli.cwd / "out.md").read_text(encoding="utf-8") == expected
    assert fig["chars_after"] == len(expected)
    assert fig["chars_before"] == len(SAMPLE)


# ---------------------------------------------------------------- level off and line endings

PASSTHROUGH = {
    "crlf": SAMPLE.replace("\n", "\r\n"),
    "bom-crlf": "\ufeff" + SAMPLE.replace("\n", "\r\n"),
    "mixed-endings": "one\r\ntwo\nthree\r\n\r\nfour",
    "no-final-newline": "the end of the file",
    "lone-cr": "a\rb\r\n",
    "unicode": CJK + "café naïve ✓ 🚀 — “quotes” don’t\n",
    "blanks": "\n\n\n   \t\n  trailing   \n\t\tindented\n\n\n",
    "empty": "",
}


@pytest.mark.parametrize("name", sorted(PASSTHROUGH))
def test_level_off_is_byte_for_byte(cli, name):
    data = PASSTHROUGH[name].encode("utf-8")
    (cli.cwd / "in.md").write_bytes(data)
    file_to_stdout = cli("compress", "in.md", "--level", "off")
    stdin_to_file = cli("compress", "-", "--level", "off", "-o", "out.md", input=data)
    assert file_to_stdout.returncode == stdin_to_file.returncode == 0
    assert file_to_stdout.out_bytes == data
    assert (cli.cwd / "out.md").read_bytes() == data


def test_level_off_on_the_whole_corpus_is_byte_for_byte(cli):
    data = b"".join(f.read_bytes() for f in corpus_files())
    r = cli("compress", "-", "--level", "off", input=data)
    assert r.returncode == 0, r
    assert r.out_bytes == data


@pytest.mark.parametrize("level", LEVELS[1:])
def test_crlf_input_keeps_crlf_at_every_level(cli, api_env, level):
    data = SAMPLE.replace("\n", "\r\n").encode()
    (cli.cwd / "in.md").write_bytes(data)
    r = cli("compress", "in.md", "--level", level)
    assert r.returncode == 0, r
    out = r.out_bytes
    assert out.count(b"\n") > 3
    assert out.count(b"\r\n") == out.count(b"\n"), out
    # and it is the same compression as for the LF file
    assert out == api_text(SAMPLE, level).replace("\n", "\r\n").encode()


# ---------------------------------------------------------------- choosing a profile


@pytest.fixture(scope="module")
def choice_dir(tmp_path_factory):
    """Profiles that differ only in their level: flag.yaml (off), env.yaml
    (light), .engine/profile.yaml (aggressive); the built-in default is standard."""
    d = tmp_path_factory.mktemp("choice")
    for name, level in (("flag.yaml", "off"), ("env.yaml", "light"), (".engine/profile.yaml", "aggressive")):
        write(d, name, f"kind: profile\nname: {name.split('.')[0].strip('/') or 'local'}-{level}\nextends: default\nlevel: {level}\n")
    write(d, "rules.md", SAMPLE)
    return d


@pytest.fixture
def refs(api_env):
    out = {lv: api_text(SAMPLE, lv, "default") for lv in LEVELS}
    # the test below can tell each level from the others
    assert len(set(out.values())) == len(LEVELS), out
    assert out["off"] == SAMPLE
    return out


def test_profile_flag_wins_over_env_and_local_file(cli, choice_dir, refs):
    r = cli("compress", "rules.md", "--profile", "flag.yaml", cwd=choice_dir, env={"ENGINE_PROFILE": "env.yaml"})
    assert r.returncode == 0, r
    assert r.out == refs["off"] == SAMPLE


def test_profile_flag_by_name_wins_over_env_and_local_file(cli, choice_dir, refs):
    r = cli("compress", "rules.md", "--profile", "default", cwd=choice_dir, env={"ENGINE_PROFILE": "env.yaml"})
    assert r.returncode == 0, r
    assert r.out == refs["standard"]


def test_env_wins_over_local_file(cli, choice_dir, refs):
    r = cli("compress", "rules.md", cwd=choice_dir, env={"ENGINE_PROFILE": "env.yaml"})
    assert r.returncode == 0, r
    assert r.out == refs["light"]


def test_env_may_hold_an_absolute_path(cli, choice_dir, refs):
    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("compress", "rules.md", env={"ENGINE_PROFILE": choice_dir / "flag.yaml"})
    assert r.returncode == 0, r
    assert r.out == refs["off"]


def test_local_file_wins_over_builtin_default(cli, choice_dir, refs):
    assert cli("trust", cwd=choice_dir).returncode == 0  # a project profile is used once approved
    r = cli("compress", "rules.md", cwd=choice_dir)
    assert r.returncode == 0, r
    assert r.out == refs["aggressive"]


def test_builtin_default_without_anything_else(cli, refs):
    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("compress", "rules.md")
    assert r.returncode == 0, r
    assert r.out == refs["standard"]


def test_level_flag_wins_over_the_profile_level(cli, choice_dir, refs):
    r = cli("compress", "rules.md", "--profile", "flag.yaml", "--level", "light", cwd=choice_dir)
    assert r.returncode == 0, r
    assert r.out == refs["light"]


def test_profile_show_follows_the_same_order(cli, choice_dir):
    def shown(*args, env=None):
        r = cli("profile", "show", *args, cwd=choice_dir, env=env)
        assert r.returncode == 0, r
        return yaml.safe_load(r.out)

    assert cli("trust", cwd=choice_dir).returncode == 0  # the project profile, approved (whatever ran before)
    assert shown()["level"] == "aggressive"
    assert shown(env={"ENGINE_PROFILE": "env.yaml"})["level"] == "light"
    assert shown("flag.yaml", env={"ENGINE_PROFILE": "env.yaml"})["level"] == "off"
    assert shown("default", env={"ENGINE_PROFILE": "env.yaml"})["name"] == "default"


def test_level_flag_takes_a_path_relative_to_the_working_folder(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    write(cli.cwd, "levels/mine.yaml", "kind: level\nname: mine\nextends: \"off\"\ndescription: nothing\ntransforms: []\n")
    r = cli("compress", "rules.md", "--level", "levels/mine.yaml")
    assert r.returncode == 0, r
    assert r.out == SAMPLE


def test_same_relative_level_path_in_two_folders_means_two_levels(cli, tmp_path, refs):
    """The compiled-profile cache must not confuse ./level.yaml of one folder
    with ./level.yaml of another."""
    outs = []
    for name, below in (("a", "off"), ("b", "standard")):
        d = tmp_path / name
        write(d, "rules.md", SAMPLE)
        write(d, "level.yaml", f"kind: level\nname: lv{name}\nextends: {below}\ndescription: x\ntransforms: []\n")
        r = cli("compress", "rules.md", "--level", "./level.yaml", cwd=d)
        assert r.returncode == 0, r
        outs.append(r.out)
    assert outs == [refs["off"], refs["standard"]]


def test_missing_profile_is_reported(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    for args, env, needle in (
        (("--profile", "nosuch"), None, "nosuch"),
        (("--profile", "./nosuch.yaml"), None, "nosuch.yaml"),
        ((), {"ENGINE_PROFILE": "./gone.yaml"}, "gone.yaml"),
        (("--level", "nosuchlevel"), None, "nosuchlevel"),
    ):
        r = cli("compress", "rules.md", *args, env=env)
        assert r.returncode == 1, r
        assert needle in r.err, r
        assert r.out == ""


# ---------------------------------------------------------------- diff

FIGURES = re.compile(
    r"^level (?P<level>\S+): chars (?P<cb>\d+) -> (?P<ca>\d+) .*?(?P<tok>o200k_base|cl100k_base) tokens (?P<tb>\d+) -> (?P<ta>\d+)"
)


def test_diff_shows_a_unified_diff_and_figures(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("diff", "rules.md", "--level", "aggressive", "--color", "never")
    assert r.returncode == 0, r
    lines = r.out.splitlines()
    assert lines[0].startswith("--- rules.md")
    assert lines[1].startswith("+++ rules.md")
    assert any(line.startswith("@@ ") for line in lines)
    assert "\x1b[" not in r.out
    compressed = cli("compress", "rules.md", "--level", "aggressive").out
    minus = [line[1:] for line in lines[2:] if line.startswith("-")]
    plus = [line[1:] for line in lines[2:] if line.startswith("+")]
    assert minus and plus
    assert set(minus) <= set(SAMPLE.splitlines())
    assert set(plus) <= set(compressed.splitlines())
    fig = FIGURES.match(lines[-1])
    assert fig, lines[-1]
    want = json.loads(cli("compress", "rules.md", "--level", "aggressive", "--json").out)
    assert fig["level"] == "aggressive"
    assert fig["tok"] == want["tokenizer"]
    assert (int(fig["cb"]), int(fig["ca"])) == (want["chars_before"], want["chars_after"])
    assert (int(fig["tb"]), int(fig["ta"])) == (want["tokens_before"], want["tokens_after"])


def test_diff_at_level_off_changes_nothing(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("diff", "rules.md", "--level", "off")
    assert r.returncode == 0, r
    lines = r.out.splitlines()
    assert not any(line.startswith(("@@", "+", "-")) for line in lines), r.out
    fig = FIGURES.match(lines[-1])
    assert fig and fig["cb"] == fig["ca"] == str(len(SAMPLE)) and fig["tb"] == fig["ta"]


def test_diff_color(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("diff", "rules.md", "--color", "always")
    assert r.returncode == 0
    assert "\x1b[31m-" in r.out and "\x1b[32m+" in r.out
    assert "\x1b[" not in cli("diff", "rules.md").out  # auto: stdout is a pipe here


def test_diff_reads_stdin(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    a = cli("diff", "rules.md", "--color", "never").out.splitlines()
    b = cli("diff", "-", "--color", "never", input=SAMPLE).out.splitlines()
    assert a[2:] == b[2:]


# ---------------------------------------------------------------- explain

SPAN = re.compile(r"^  (?P<line>\d+):(?P<col>\d+)\t(?P<cat>[a-z0-9_-]+)\t(?P<text>.*)$")
CHANGE = re.compile(r"^  (?P<line>\d+)\t(?P<transform>[a-z0-9_/-]+)\t(?P<what>.* -> .*)$")


def test_explain_lists_protected_spans_and_changes(cli, api_env):
    from engine.core.profile import resolve

    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("explain", "rules.md", "--level", "standard")
    assert r.returncode == 0, r
    spans = [m for m in map(SPAN.match, r.out.splitlines()) if m]
    changes = [m for m in map(CHANGE.match, r.out.splitlines()) if m]
    cats = {m["cat"] for m in spans}
    assert {"negations", "inline_code", "urls"} <= cats, r.out
    lines = SAMPLE.splitlines()
    for m in spans:
        shown = m["text"]
        if not shown.endswith("..."):
            at = lines[int(m["line"]) - 1][int(m["col"]) - 1:]
            assert at.startswith(shown), (m.group(0), at)
    texts = {m["text"] for m in spans}
    for piece in ("never", "`main`", "https://example.com/configuration/environment"):
        assert any(piece in t for t in texts), (piece, r.out)
    resolved, _ = resolve("default", "standard")
    names = {spec["name"] for spec, _, _ in resolved.transforms}
    assert changes, r.out
    for m in changes:
        assert m["transform"].split("/")[0] in names, m.group(0)
    # a removed bullet and a removed filler are among the changes
    assert any("-" in m["what"].split(" -> ")[0] for m in changes if m["transform"] == "bullets"), r.out
    assert any("the" in m["what"].split(" -> ")[0].lower() for m in changes), r.out


def test_explain_at_level_off_lists_spans_but_no_change(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("explain", "rules.md", "--level", "off")
    assert r.returncode == 0, r
    assert any(SPAN.match(line) for line in r.out.splitlines())
    assert not any(CHANGE.match(line) for line in r.out.splitlines())


# ---------------------------------------------------------------- stats


@pytest.fixture
def stats_dir(cli):
    d = cli.cwd / "rules"
    write(d, "a.md", SAMPLE)
    corpus = corpus_files()[0]
    (d / "sub").mkdir()
    shutil.copy(corpus, d / "sub" / corpus.name)
    write(d, "notes.txt", "not a rule file\n")
    return d, {"a.md": SAMPLE, f"sub/{corpus.name}": corpus.read_text(encoding="utf-8")}


def test_stats_json(cli, api_env, stats_dir, pure_count):
    from engine.core.profile import load_profile
    from engine.text.pipeline import compress

    folder, files = stats_dir
    r = cli("stats", "rules", "--json")
    assert r.returncode == 0, r
    data = json.loads(r.out)
    assert data["tokenizer"] == "o200k_base"
    rows = data["rows"]
    assert sorted({os.path.relpath(row["file"], "rules") for row in rows}) == sorted(files)
    assert sorted((os.path.relpath(row["file"], "rules"), row["level"]) for row in rows) == sorted(
        (f, lv) for f in files for lv in LEVELS
    )
    for row in rows:
        text = files[os.path.relpath(row["file"], "rules")]
        assert row["chars_before"] == len(text)
        assert row["chars_after"] == compress(load_profile(None, row["level"]), text).chars_after
        if row["level"] == "off":
            assert row["chars_after"] == row["chars_before"]
            assert row["tokens_after"] == row["tokens_before"]
    a = [row for row in rows if row["file"].endswith("a.md")][0]
    assert a["tokens_before"] == pure_count(SAMPLE, "o200k_base")
    totals = {t["level"]: t for t in data["totals"]}
    assert sorted(totals) == sorted(LEVELS)
    for lv, t in totals.items():
        assert t["file"] == "TOTAL"
        for key in ("chars_before", "chars_after", "tokens_before", "tokens_after"):
            assert t[key] == sum(row[key] for row in rows if row["level"] == lv)
    assert totals["standard"]["tokens_after"] < totals["standard"]["tokens_before"]


def test_stats_table_matches_json(cli, stats_dir):
    folder, files = stats_dir
    table = cli("stats", "rules", "--levels", "off,standard")
    assert table.returncode == 0, table
    data = json.loads(cli("stats", "rules", "--levels", "off,standard", "--json").out)
    expect = [
        (row["file"], row["level"], row["chars_before"], row["chars_after"], row["tokens_before"], row["tokens_after"])
        for row in data["rows"] + data["totals"]
    ]
    got = []
    for line in table.out.splitlines():
        f = line.split()
        if len(f) >= 10 and f[1] in ("off", "standard"):
            got.append((f[0], f[1], int(f[2]), int(f[4]), int(f[6]), int(f[8])))
    assert got == expect, table.out
    assert [g[0] for g in got].count("TOTAL") == 2
    assert "notes.txt" not in table.out


def test_stats_with_cl100k(cli, stats_dir, pure_count):
    r = cli("stats", "rules/a.md", "--levels", "off", "--tokenizer", "cl100k_base", "--json")
    assert r.returncode == 0, r
    data = json.loads(r.out)
    assert data["tokenizer"] == "cl100k_base"
    assert data["rows"][0]["tokens_before"] == pure_count(SAMPLE, "cl100k_base")


def test_stats_of_a_folder_without_rule_files(cli):
    (cli.cwd / "empty").mkdir()
    write(cli.cwd / "empty", "notes.txt", "not a rule file\n")
    r = cli("stats", "empty")
    assert r.returncode == 1
    assert "empty" in r.err and ".mdc" in r.err


def test_stats_of_a_folder_counts_cursor_rule_files(cli):
    """Cursor's .mdc rules and its single .cursorrules file are rule files
    too (compress.folder_suffixes and folder_names); other files are not."""
    d = cli.cwd / "proj"
    write(d, ".cursor/rules/style.mdc", "---\nalwaysApply: true\n---\nAlways use tabs.\n")
    write(d, ".cursorrules", "Never commit secrets.\n")
    write(d, "AGENTS.md", "Run the tests.\n")
    write(d, "notes.txt", "not a rule file\n")
    r = cli("stats", "proj", "--json")
    assert r.returncode == 0, r
    files = {row["file"] for row in json.loads(r.out)["rows"]}
    assert files == {"proj/.cursor/rules/style.mdc", "proj/.cursorrules", "proj/AGENTS.md"}, files


# ---------------------------------------------------------------- profile show


def test_profile_show_prints_the_resolved_builtin_profile(cli, api_env):
    from engine.core.documents import builtin_names

    r = cli("profile", "show")
    assert r.returncode == 0, r
    shown = yaml.safe_load(r.out)
    assert shown["name"] == "default"
    assert shown["levels"][-1] == shown["level"]
    assert shown["levels"][0] == "off"
    assert {"negations", "fenced_code", "urls", "action_verbs"} <= set(shown["protect"])
    assert set(shown["protect"]) <= set(builtin_names("protect"))
    assert "fillers" in shown["dictionaries"] and "abbreviations" in shown["dictionaries"]
    assert shown["dictionaries"]["abbreviations"]["entries"]["kubernetes"] == "k8s"
    light = yaml.safe_load(cli("profile", "show", "default", "--level", "light").out)
    assert light["level"] == "light" and light["levels"] == ["off", "light"]
    assert len(light["transforms"]) < len(shown["transforms"])


def test_profile_show_with_defaults_shows_what_a_hook_reads(cli, api_env):
    """A default that lives only in the schema is shown with --with-defaults;
    what the profile says is shown as it says it."""
    import json

    default = json.loads((REPO / "schemas" / "profile.schema.json").read_text())["$defs"]["handler"]["properties"][
        "digest_title_chars"]["default"]
    plain = yaml.safe_load(cli("profile", "show").out)["hooks"]
    r = cli("profile", "show", "--with-defaults")
    assert r.returncode == 0, r
    filled = yaml.safe_load(r.out)["hooks"]
    assert "digest_title_chars" not in json.dumps(plain)
    assert [h["name"] for h in plain["events"]["prompt"]] == [h["name"] for h in filled["events"]["prompt"]]
    refresh = [h for h in filled["events"]["prompt"] if h["kind"] == "rule_refresh"]
    assert refresh and all(h["digest_title_chars"] == default for h in refresh)
    for event, handlers in plain["events"].items():
        for said, read in zip(handlers, filled["events"][event]):
            assert {k: read[k] for k in said} == said, (event, said["name"])
    assert plain["deadline_ms"] == filled["deadline_ms"]


def test_in_place_through_a_link_out_of_its_project_is_refused(cli, tmp_path):
    """A cloned repository's CLAUDE.md linked to a file of the user's
    (~/.zshrc) made `compress -i CLAUDE.md` rewrite that file: a link is
    followed only to a file of its own project."""
    outside = tmp_path / "home" / ".zshrc"
    outside.parent.mkdir(parents=True)
    outside.write_text(SAMPLE)
    os.symlink(outside, cli.cwd / "CLAUDE.md")
    r = cli("compress", "CLAUDE.md", "--level", "standard", "-i")
    assert r.returncode == 1 and "outside its project" in r.err, r
    assert outside.read_text() == SAMPLE and os.path.islink(cli.cwd / "CLAUDE.md")


def test_in_place_through_a_link_to_a_home_kept_in_git_is_refused(cli, tmp_path):
    """Audit: with a home kept in git, a downloaded folder (no .git of its
    own) under it took the home for its project, so its CLAUDE.md linked to
    ../../.bashrc made `compress -i` rewrite ~/.bashrc.  The home is never a
    project (project_folder, as trust reads it): the write is refused."""
    home = tmp_path / "home"
    proj = home / "Downloads" / "proj"
    proj.mkdir(parents=True)
    (home / ".git").mkdir()
    (home / ".bashrc").write_text(SAMPLE)
    os.symlink("../../.bashrc", proj / "CLAUDE.md")
    r = cli("compress", "CLAUDE.md", "--level", "standard", "-i", cwd=proj, env={"HOME": home})
    assert r.returncode == 1 and "outside its project" in r.err, r
    assert (home / ".bashrc").read_text() == SAMPLE and os.path.islink(proj / "CLAUDE.md")
