"""`engine validate`: nothing and exit 0 for good YAML; for every kind of user
mistake, exactly one `FILE:LINE:COL: message` line per problem on stderr,
pointing at the offending key or value, and exit 1 - never a traceback.

Most single-file cases are checked in one `engine validate` run over all of
them (the command reports every file's problems in one go); cases whose
problem sits in a file that another one names run on their own."""

import json
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import HOSTILE, REPO, position, problems, run_under_an_address_space_cap, write
from support import shared

# Each case: file name -> (YAML text, [(needle, occurrence, words the message must hold)]).
# The expected position is that of `needle` in the text (LINE:COL, 1-based);
# a needle of None means the document itself (1:1).
CASES = {
    # --- unknown keys
    "unknown_key.yaml": (
        "kind: profile\nname: mine\nextends: default\nlevle: light\n",
        [("levle", 0, ["levle"])],
    ),
    "unknown_key_in_protect_edit.yaml": (
        "kind: profile\nname: mine\nextends: default\nprotect:\n  add: [negations]\n  delete: [numbers]\n",
        [("delete", 0, ["delete"])],
    ),
    "misspelled_slot.yaml": (  # a new slot no transform uses, next to one the level uses
        "kind: profile\nname: mine\nextends: default\ndictionaries:\n  filers:\n    add: [basically]\n"
        "  abbreviatons: {add: {microservice: msvc}}\n  mine: [fillers]\n",
        [("filers", 0, ["did you mean 'fillers'"]), ("abbreviatons", 0, ["did you mean 'abbreviations'"])],
    ),
    "unknown_key_in_dictionary_edit.yaml": (
        "kind: profile\nname: mine\nextends: default\ndictionaries:\n  fillers:\n    add: [basically]\n    remvoe: [the]\n",
        [("remvoe", 0, ["remvoe"])],
    ),
    "unknown_key_in_transform.yaml": (
        "kind: level\nname: mylevel\nextends: light\ndescription: x\ntransforms:\n"
        "  - name: foo\n    kind: regex\n    patern: 'x'\n    pattern: 'x'\n    replace: 'y'\n",
        [("patern", 0, ["patern"])],
    ),
    # before: "transforms/0: {...} has the wrong form; expected a mapping"
    "unknown_transform_kind.yaml": (
        "kind: level\nname: mylevel\nextends: light\ndescription: x\ntransforms:\n"
        "  - name: foo\n    kind: regexx\n    pattern: 'x'\n    replace: 'y'\n",
        [("regexx", 0, ["unknown kind 'regexx'", "remove_vowels", "did you mean 'regex'"])],
    ),
    "unknown_key_in_examples.yaml": (
        "kind: protect\nname: tickets\ndescription: x\npatterns: ['TICK-\\d+']\nexamples: {match: [TICK-1], no_mach: [x]}\n",
        [("no_mach", 0, ["no_mach"])],
    ),
    "line_break_of_no_line_start.yaml": (  # found from a line break, it would be looked for only after one
        "kind: protect\nname: titles\nstage: opaque\ndescription: x\npatterns: ['Title: \\w+', '(?m)^Part \\d+']\n"
        "from_line_break: [0, 2]\nexamples: {match: ['Title: a']}\n",
        [("0, 2]", 0, ["pattern 0", "(?m)^"]), ("2]", 0, ["no pattern 2"])],
    ),
    # --- wrong types and values
    "wrong_type_scalar.yaml": (
        "kind: profile\nname: mine\nextends: default\npattern_timeout_ms: fast\n",
        [("fast", 0, ["integer"])],
    ),
    "wrong_type_in_list.yaml": (
        "kind: protect\nname: mywords\ndescription: x\nwords: [never, 3]\nexamples: {match: [never]}\n",
        [("3]", 0, ["string"])],
    ),
    "wrong_type_in_transform.yaml": (
        "kind: level\nname: mylevel\nextends: light\ndescription: x\ntransforms:\n"
        "  - name: foo\n    kind: regex\n    pattern: 'x'\n    replace: 'y'\n    only_if_shorter: \"yes\"\n",
        [('"yes"', 0, ["boolean"])],
    ),
    "wrong_enum.yaml": (
        "kind: profile\nname: mine\nextends: default\nobjective: speed\n",
        [("speed", 0, ["tokens", "chars"])],
    ),
    "wrong_name.yaml": (
        "kind: profile\nname: My Profile\nextends: default\n",
        [("My Profile", 0, ["name"])],
    ),
    "unknown_kind.yaml": (
        "kind: widget\nname: w\n",
        [("widget", 0, ["widget"])],
    ),
    "not_a_mapping.yaml": (
        "- just\n- a list\n",
        [(None, 0, ["kind"])],
    ),
    # --- missing required keys
    "missing_required.yaml": (
        "kind: protect\nname: tickets\npatterns: ['TICK-\\d+']\nexamples: {match: [TICK-1]}\n",
        [(None, 0, ["description"])],
    ),
    "missing_required_in_transform.yaml": (
        "kind: level\nname: mylevel\nextends: light\ndescription: x\ntransforms:\n"
        "  - name: foo\n    kind: regex\n    pattern: 'x'\n",
        [("name: foo", 0, ["replace"])],
    ),
    # --- malformed YAML
    "unclosed_bracket.yaml": (
        "kind: profile\nname: mine\nextends: default\nprotect: {add: [negations, numbers\n",
        [("[negations", 0, ["YAML"])],
    ),
    "bad_indentation.yaml": (
        "kind: profile\nname: mine\nextends: default\nlevel: standard\n  objective: chars\n",
        [(": chars", 0, ["YAML"])],
    ),
    "duplicate_key.yaml": (
        "kind: profile\nname: mine\nextends: default\nlevel: light\nlevel: \"off\"\n",
        [("level", 1, ["level", "twice"])],
    ),
    # --- unknown built-in names
    "unknown_extends.yaml": (
        "kind: profile\nname: mine\nextends: defualt\n",
        [("defualt", 0, ["defualt"])],
    ),
    "unknown_level.yaml": (
        "kind: profile\nname: mine\nextends: default\nlevel: agressive\n",
        [("agressive", 0, ["agressive"])],
    ),
    "unknown_protect_add.yaml": (
        "kind: profile\nname: mine\nextends: default\nprotect:\n  add: [negatons]\n",
        [("negatons", 0, ["negatons"])],
    ),
    "unknown_protect_list.yaml": (
        "kind: profile\nname: mine\nextends: default\nprotect: [negations, nosuchcat]\n",
        [("nosuchcat", 0, ["nosuchcat"])],
    ),
    "unknown_dictionary.yaml": (
        "kind: profile\nname: mine\nextends: default\ndictionaries:\n  fillers: {use: [nosuchdict]}\n",
        [("nosuchdict", 0, ["nosuchdict"])],
    ),
    "level_unknown_extends.yaml": (
        "kind: level\nname: mylevel\nextends: agressive\ndescription: x\ntransforms: []\n",
        [("agressive", 0, ["agressive"])],
    ),
    # --- patterns
    "bad_regex.yaml": (
        "kind: protect\nname: badre\ndescription: x\npatterns:\n  - 'ok\\d+'\n  - 'foo(bar'\nexamples: {match: [ok1]}\n",
        [("'foo(bar'", 0, ["regular expression"])],
    ),
    "bad_regex_in_transform.yaml": (
        "kind: level\nname: mylevel\nextends: light\ndescription: x\ntransforms:\n"
        "  - name: foo\n    kind: regex\n    pattern: 'a[b'\n    replace: 'y'\n",
        [("'a[b'", 0, ["regular expression"])],
    ),
    "bad_word_pattern.yaml": (
        "kind: profile\nname: mine\nextends: default\nword_pattern: '(unclosed'\n",
        [("'(unclosed'", 0, ["regular expression"])],
    ),
    "numbered_backref.yaml": (
        "kind: protect\nname: backref\ndescription: x\npatterns: ['(a)\\1']\nexamples: {match: [aa]}\n",
        [("'(a)\\1'", 0, ["back-reference"])],
    ),
    "inline_flag_in_the_middle.yaml": (
        "kind: protect\nname: flags\ndescription: x\npatterns: ['foo(?i)bar']\nexamples: {match: [foobar]}\n",
        [("'foo(?i)bar'", 0, ["(?i"])],
    ),
    "runaway_nested_plus.yaml": (
        "kind: protect\nname: runaway\ndescription: x\npatterns:\n  - '(a+)+$'\nexamples: {match: [aaa]}\n",
        [("'(a+)+$'", 0, ["runs away"])],
    ),
    "runaway_words.yaml": (
        "kind: protect\nname: runaway2\ndescription: x\npatterns:\n  - '(\\w+\\s?)+$'\nexamples: {match: [abc]}\n",
        [("'(\\w+\\s?)+$'", 0, ["runs away"])],
    ),
    "runaway_guard.yaml": (
        "kind: dictionary\nname: guarded\ndescription: x\nwords:\n  - word: foo\n    unless_followed_by: '(?:a|aa)+$'\n",
        [("'(?:a|aa)+$'", 0, ["runs away"])],
    ),
    "runaway_entry_guard.yaml": (
        "kind: dictionary\nname: rewrites\ndescription: x\nentries:\n  foo bar: {to: baz, unless_followed_by: '(?:a|aa)+$'}\n",
        [("'(?:a|aa)+$'", 0, ["runs away"])],
    ),
    "undefined_named_list.yaml": (
        "kind: dictionary\nname: listed\ndescription: x\nlists:\n  colours: [red, blue]\nwords:\n"
        "  - word: qux\n    only_followed_by: '[ \\t]+\\L<shades>'\n",
        [("'[ \\t]+\\L<shades>'", 0, ["named list", "lists:"])],
    ),
    "runaway_transform.yaml": (
        "kind: level\nname: slow\nextends: light\ndescription: x\ntransforms:\n"
        "  - name: foo\n    kind: regex\n    pattern: '(?:a|aa)+$'\n    replace: 'z'\n",
        [("'(?:a|aa)+$'", 0, ["runs away"])],
    ),
    # --- self-tests
    "failing_self_tests.yaml": (
        "kind: protect\nname: tickets\ndescription: x\npatterns: ['TICK-\\d+']\n"
        "examples:\n  match: [TICK-12, TICK-x]\n  no_match: [ticket, TICK-9]\n",
        [("TICK-x", 0, ["TICK-x", "match"]), ("TICK-9", 0, ["TICK-9", "not match"])],
    ),
    "failing_word_self_test.yaml": (
        "kind: protect\nname: mywords\ndescription: x\nwords: [deploy]\n"
        "examples:\n  match: [deploy, deployment]\n  no_match: [redeploy]\n",
        [("deployment", 0, ["deployment"])],
    ),
    # --- replacement templates
    "unknown_group.yaml": (
        "kind: level\nname: mylevel\nextends: light\ndescription: x\ntransforms:\n"
        "  - name: foo\n    kind: regex\n    pattern: '(?P<a>x)yz'\n    replace: '\\g<b>'\n",
        [("'\\g<b>'", 0, ["b"])],
    ),
    "unknown_escape.yaml": (
        "kind: level\nname: mylevel\nextends: light\ndescription: x\ntransforms:\n"
        "  - name: foo\n    kind: regex\n    pattern: '(?P<a>x)'\n    replace: '\\q'\n",
        [("'\\q'", 0, ["\\q"])],
    ),
}


@pytest.fixture(scope="module")
def batch(tmp_path_factory, cache_dir):
    """One `engine validate` over every case file, once per test run
    (tests/support/shared.py: its runaway probes wait their whole time, on
    whichever worker runs it first)."""
    from conftest import Engine

    def make(d):
        d.mkdir(parents=True)
        for name, (text, _) in CASES.items():
            write(d, name, text)
        run = Engine(cache_dir, d)("validate", *CASES, timeout=300)
        return d, run, problems(run)

    return shared.once(tmp_path_factory, "validate-batch", make)


def test_batch_exit_status(batch):
    d, run, found = batch
    assert run.returncode == 1, run
    assert run.out == ""
    files_with_problems = {Path(p.file).name for p in found}
    assert files_with_problems <= set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mistake_is_reported_where_it_is(batch, name):
    d, run, found = batch
    text, expected = CASES[name]
    mine = [p for p in found if p.is_in(d / name, d)]
    assert len(mine) == len(expected), f"{name}: expected {len(expected)} problem(s), got:\n" + "\n".join(
        f"{p.file}:{p.line}:{p.col}: {p.msg}" for p in mine
    )
    for p, (needle, occurrence, words) in zip(sorted(mine, key=lambda p: (p.line, p.col)), expected):
        where = (1, 1) if needle is None else position(text, needle, occurrence)
        assert (p.line, p.col) == where, f"{name}: {p.line}:{p.col}: {p.msg} - expected at {where[0]}:{where[1]} ({needle!r})"
        for w in words:
            assert w.lower() in p.msg.lower(), f"{name}: message lacks {w!r}: {p.msg}"


def test_one_bad_file_alone(cli):
    text, [(needle, _, _)] = CASES["unknown_key.yaml"]
    path = write(cli.cwd, "unknown_key.yaml", text)
    r = cli("validate", "unknown_key.yaml")
    assert r.returncode == 1
    assert r.out == ""
    [p] = problems(r)
    assert p.is_in(path, cli.cwd)
    assert (p.line, p.col) == position(text, needle)


def test_runaway_pattern_is_reported_not_hanging(batch):
    # The batch's run validates this file as `engine validate FILE` (and
    # ended: cli raises if it hangs); a run of its own would wait one more
    # whole probe for the same answer.  That a runaway alone makes the exit
    # status 1 is checked where a profile names it, the run's only problem
    # (test_validating_a_profile_checks_the_user_files_it_names, timeout=60).
    d, run, found = batch
    [p] = [p for p in found if p.is_in(d / "runaway_nested_plus.yaml", d)]
    assert "runs away" in p.msg


# ---------------------------------------------------------------- whole runs


def test_builtin_yaml_is_valid(cli):
    r = cli("validate")
    assert r.returncode == 0, r
    assert r.out == "" and r.err == ""


def test_a_good_user_profile_is_valid(cli):
    write(cli.cwd, "cats/tickets.yaml", "kind: protect\nname: tickets\ndescription: ticket ids\n"
          "patterns: ['TICK-\\d+']\nexamples:\n  match: [TICK-12]\n  no_match: [ticket, TICK]\n")
    write(cli.cwd, "profile.yaml", "kind: profile\nname: mine\nextends: default\nlevel: light\n"
          "protect:\n  add: [./cats/tickets.yaml]\ndictionaries:\n  fillers:\n    add: [basically]\n")
    r = cli("validate", "profile.yaml", "cats/tickets.yaml")
    assert r.returncode == 0, r
    assert r.out == "" and r.err == ""


def test_a_new_slot_serves_a_level_of_the_users_own(cli):
    """A slot the built-in levels do not know is used by the user's level
    that names it, at the profile's level and at any other."""
    write(cli.cwd, "sure.yaml", "kind: dictionary\nname: sure\ndescription: x\nwords: [surely]\n")
    write(cli.cwd, "mine-level.yaml", "kind: level\nname: mine-level\nextends: light\ndescription: x\n"
          "transforms:\n  - name: drop_surely\n    kind: words\n    rules:\n"
          "      - {dictionary: fillerz, action: remove}\n")
    write(cli.cwd, "profile.yaml", "kind: profile\nname: mine\nextends: default\nlevel: ./mine-level.yaml\n"
          "dictionaries:\n  fillerz: [./sure.yaml]\n")
    r = cli("validate", "profile.yaml")
    assert r.returncode == 0 and r.err == "", r
    r = cli("compress", "-", "--profile", "profile.yaml", input="Run it, surely.\n")
    assert r.returncode == 0 and "surely" not in r.out, r
    r = cli("compress", "-", "--profile", "profile.yaml", "--level", "light", input="Run it, surely.\n")
    assert r.returncode == 0 and "surely" in r.out, r


def test_missing_file(cli):
    r = cli("validate", "nosuch.yaml")
    assert r.returncode == 1
    assert r.err.startswith("nosuch.yaml: ")


def test_non_utf8_yaml(cli):
    (cli.cwd / "latin.yaml").write_bytes("kind: profile\nname: café\n".encode("latin-1"))
    r = cli("validate", "latin.yaml")
    assert r.returncode == 1
    [p] = problems(r)
    assert p.is_in(cli.cwd / "latin.yaml", cli.cwd)
    assert p.line == 2
    assert "UTF-8" in p.msg


def test_a_profiles_runaway_word_pattern_is_said_at_its_place(cli):
    """Old: validate probed the patterns of protect, dictionary and level
    files, not a profile's own word_pattern: it passed, and compress then
    ran out of time and said to run engine validate."""
    text = 'kind: profile\nname: p\nextends: default\nword_pattern: "(a+a+)+y"\n'
    write(cli.cwd, "wp.yaml", text)
    r = cli("validate", "wp.yaml")
    assert r.returncode == 1, r
    [p] = problems(r)
    assert p.is_in(cli.cwd / "wp.yaml", cli.cwd) and p.line == 4 and "runs away" in p.msg, r
    write(cli.cwd, "ok.yaml", text.replace("(a+a+)+y", "[A-Za-z]+"))
    assert cli("validate", "ok.yaml").returncode == 0


@pytest.mark.parametrize("char", ["\x01", "\x1b", "\x7f", "\x80", "\ufffe"])
def test_a_character_yaml_forbids_is_said_at_its_place_escaped(cli, char):
    """Old: PyYAML's reader refused it before the parse's error handling, a
    traceback from validate, compress --profile, and any command reading a
    user's YAML."""
    text = f"kind: profile\nname: p\nextends: default\ndescription: a{char}b\n"
    write(cli.cwd, "c.yaml", text)
    for args in (("validate", "c.yaml"), ("compress", "-", "--profile", "c.yaml")):
        r = cli(*args, input="Run the tests.\n")
        assert r.returncode == 1, r
        [p] = problems(r)
        assert p.is_in(cli.cwd / "c.yaml", cli.cwd) and (p.line, p.col) == position(text, char), r
        assert f"U+{ord(char):04X}" in p.msg and char not in r.err, r


def test_local_profile_is_validated_by_default(cli):
    text = "kind: profile\nname: local\nextends: default\nlevle: light\n"
    path = write(cli.cwd, ".engine/profile.yaml", text)
    r = cli("validate")
    assert r.returncode == 1
    [p] = problems(r)
    assert p.is_in(path, cli.cwd)
    assert (p.line, p.col) == position(text, "levle")


def test_env_profile_is_validated_by_default(cli):
    text = "kind: profile\nname: envp\nextends: default\nlevel: agressive\n"
    path = write(cli.cwd, "envp.yaml", text)
    r = cli("validate", env={"ENGINE_PROFILE": "envp.yaml"})
    assert r.returncode == 1
    found = problems(r)
    assert found, r
    for p in found:
        assert p.is_in(path, cli.cwd)
        assert (p.line, p.col) == position(text, "agressive")


def test_every_unknown_name_of_a_profile_is_reported_in_one_run(cli):
    text = "kind: profile\nname: mine\nextends: default\nlevel: agressive\nprotect: [negations, nosuchcat]\n"
    path = write(cli.cwd, "p.yaml", text)
    r = cli("validate", "p.yaml")
    assert r.returncode == 1
    got = sorted((p.line, p.col) for p in problems(r) if p.is_in(path, cli.cwd))
    assert got == [position(text, "agressive"), position(text, "nosuchcat")], r.err


# ---------------------------------------------------------------- problems in files a profile names

LEVEL_WITH_BAD_ALLOW = (
    "kind: level\nname: mylevel\nextends: light\ndescription: x\ntransforms:\n"
    "  - name: foo\n    kind: regex\n    allow: [fenced_cod]\n    pattern: 'xyz'\n    replace: 'x'\n"
)


def test_allow_naming_an_unknown_category(cli):
    level = write(cli.cwd, "mylevel.yaml", LEVEL_WITH_BAD_ALLOW)
    write(cli.cwd, "p.yaml", "kind: profile\nname: mine\nextends: default\nlevel: ./mylevel.yaml\n")
    r = cli("validate", "p.yaml")
    assert r.returncode == 1
    [p] = problems(r)
    assert p.is_in(level, cli.cwd)
    assert (p.line, p.col) == position(LEVEL_WITH_BAD_ALLOW, "[fenced_cod]")
    assert "fenced_cod" in p.msg


def _profile_naming(cli, case, how):
    text, expected = CASES[case]
    named = write(cli.cwd, case, text)
    write(cli.cwd, "p.yaml", "kind: profile\nname: mine\nextends: default\n" + how.format(f"./{case}"))
    r = cli("validate", "p.yaml", timeout=60)
    return named, text, expected, r


@pytest.mark.parametrize(
    "case, how",
    [
        ("runaway_nested_plus.yaml", "protect:\n  add: [{}]\n"),
        ("runaway_transform.yaml", "level: {}\n"),
        ("failing_self_tests.yaml", "protect:\n  add: [{}]\n"),
        ("runaway_guard.yaml", "dictionaries:\n  fillers:\n    files: [{}]\n"),
    ],
)
def test_validating_a_profile_checks_the_user_files_it_names(cli, case, how):
    """`engine compress` tells the user to run `engine validate` on the profile
    when a pattern runs away: that run must find it."""
    named, text, expected, r = _profile_naming(cli, case, how)
    assert r.returncode == 1, r
    found = problems(r)
    assert all(p.is_in(named, cli.cwd) for p in found), r.err  # the named file's problems are the run's only ones
    assert sorted((p.line, p.col) for p in found) == sorted(position(text, n, o) for n, o, _ in expected), r.err


# ---------------------------------------------------------------- YAML 1.1 booleans


BOOL_WORDS = "kind: dictionary\nname: boolwords\ndescription: YAML 1.1 booleans\nwords: [no, on, yes, off]\n"


def test_yaml11_booleans_stay_words(cli, api_env):
    from engine.core.profile import resolve

    write(api_env, "bool.yaml", BOOL_WORDS)
    write(api_env, "p.yaml", "kind: profile\nname: boolp\nextends: default\ndictionaries:\n  fillers: {use: [./bool.yaml]}\n")
    r = cli("validate", "bool.yaml", "p.yaml", cwd=api_env)
    assert r.returncode == 0, r
    resolved, _ = resolve("p.yaml")
    words = [w["word"] for w in resolved.slots["fillers"].words.values()]
    assert words == ["no", "on", "yes", "off"]
    assert all(isinstance(w, str) for w in words)
    shown = yaml.safe_load(cli("profile", "show", "p.yaml", cwd=api_env).out)
    assert [w["word"] for w in shown["dictionaries"]["fillers"]["words"]] == ["no", "on", "yes", "off"]


def test_yaml11_boolean_words_are_removed_as_words(cli, api_env):
    write(api_env, "bool.yaml", BOOL_WORDS)
    write(api_env, "p.yaml", "kind: profile\nname: boolp\nextends: default\ndictionaries:\n  fillers: {use: [./bool.yaml]}\n")
    text = "Say yes or no to turning it off and on now and pet the cat.\n"
    r = cli("compress", "-", "--profile", "p.yaml", "--json", input=text, cwd=api_env)
    assert r.returncode == 0, r
    out = json.loads(r.out)["text"]
    words = out.replace(",", " ").replace(".", " ").split()
    assert "yes" not in words and "off" not in words and "on" not in words, out
    assert "no" in words, out  # a negation: protected
    # "the" is no longer a filler: the slot uses only bool.yaml
    assert "the" in words and "cat" in words, out


def test_unquoted_off_level_in_a_profile(cli):
    write(cli.cwd, "p.yaml", "kind: profile\nname: quiet\nextends: default\nlevel: off\n")
    text = "In order to deploy the application, check the configuration.\n"
    assert cli("validate", "p.yaml").returncode == 0
    r = cli("compress", "-", "--profile", "p.yaml", input=text)
    assert r.returncode == 0, r
    assert r.out == text


def test_every_shipped_schema_is_a_valid_schema():
    """The engine does not check its own schemas at run time: this does."""
    import jsonschema

    schemas = sorted((Path(__file__).resolve().parent.parent / "schemas").glob("*.schema.json"))
    assert len(schemas) >= 7
    for path in schemas:
        schema = json.loads(path.read_text(encoding="utf-8"))
        jsonschema.validators.validator_for(schema).check_schema(schema)


def test_a_file_changed_in_the_same_clock_tick_is_read_again(tmp_path):
    """load_file keeps what it parsed; an edit of the same size, made at
    once, must still be seen (mtime can stay the same within a tick)."""
    from engine.core.yamlload import load_file

    f = tmp_path / "p.yaml"
    f.write_text("kind: profile\nname: a\nlevel: light\n")
    first = load_file(f)
    first.data["level"] = "changed by the caller"
    f.write_text("kind: profile\nname: b\nlevel: light\n")
    assert load_file(f).data["name"] == "b"
    f.write_text("kind: profile\nname: a\nlevel: light\n")
    assert load_file(f).data == {"kind": "profile", "name": "a", "level": "light"}, "the caller's change leaked"


def test_a_remembered_pass_of_the_builtin_files_is_checked_again_when_one_changes(api_env, tmp_path, monkeypatch):
    """`engine validate` remembers that the built-in documents passed; an
    edited or an added file is checked again all the same."""
    from engine.core import validate

    folder = tmp_path / "protect"
    folder.mkdir()
    for name in ("numbers.yaml", "urls.yaml"):
        shutil.copy(REPO / "protect" / name, folder / name)
    monkeypatch.setattr(validate, "builtin_files", lambda: sorted(folder.glob("*.yaml")))
    assert validate.validate_paths([]) == []
    assert validate.validate_paths([]) == []  # remembered
    text = (folder / "urls.yaml").read_text(encoding="utf-8")
    (folder / "urls.yaml").write_text(text.replace("patterns:", "patterns:\n  - '(unclosed'", 1), encoding="utf-8")
    assert any("urls.yaml" in str(p) for p in validate.validate_paths([]))
    (folder / "urls.yaml").write_text(text, encoding="utf-8")
    assert validate.validate_paths([]) == []
    (folder / "bad.yaml").write_text("kind: protect\nname: bad\nnope: 1\n", encoding="utf-8")
    assert any("bad.yaml" in str(p) for p in validate.validate_paths([]))


def test_validate_warms_the_process_once_at_its_first_cache_miss_only(api_env, tmp_path, monkeypatch):
    """`engine validate` compiles up to seven profiles, each in a box forked
    from its process: at its first compile that misses the cache, the
    process compiles the built-in default itself (once), so the boxes
    inherit what every compile loads; with every compile a hit, it compiles
    nothing itself."""
    from engine.core import profile, validate

    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cold-cache"))
    monkeypatch.setattr(validate, "builtin_files", lambda: [])  # the active profile's compiles only
    built = []
    real_build = profile.build
    monkeypatch.setattr(profile, "build", lambda *a, **k: built.append(k.get("chosen")) or real_build(*a, **k))
    monkeypatch.setattr(profile, "_WARM", {"asked": False, "done": False})
    assert validate.validate_paths([]) == []
    # the boxes' compiles run in forked children: only the warming one counts here
    assert [(c.ref, c.origin) for c in built] == [("default", "user")]
    built.clear()
    monkeypatch.setattr(profile, "_WARM", {"asked": False, "done": False})
    assert validate.validate_paths([]) == []
    assert built == [], "every compile was a cache hit: nothing to warm"


def test_a_process_checks_a_template_and_probes_a_memory_pattern_once(api_env, monkeypatch):
    """Every compile checks the hooks' templates (parsed with Jinja2) and
    probes the `hooks.memory` patterns for runaways, and `engine validate`
    compiles up to seven profiles, each in a box forked from its process
    after the first: what a compile of that process checked, the next ones
    do not check again (0.12 s -> 0.055 s a compile).  What is wrong with a
    template is still said every time it is asked."""
    from engine.core import patterncheck, profile, templates
    from engine.hooks import banner

    profile.build(chosen=profile.choice("default"))  # checks every built-in template and pattern
    parsed, probed = [], []
    real_parsed, real_probe = templates.parsed, patterncheck.runaway_reason
    monkeypatch.setattr(templates, "parsed", lambda *a: parsed.append(a) or real_parsed(*a))
    monkeypatch.setattr(patterncheck, "runaway_reason", lambda *a: probed.append(a) or real_probe(*a))
    for level in ("light", "aggressive"):
        assert profile.build(level=level, chosen=profile.choice("default")).level == level
    assert parsed == [] and probed == [], (len(parsed), len(probed))
    said = [(1, "template uses unknown variable 'nosuch'; available: turn")]
    first = banner.check("{{ nosuch }}", {"turn"})
    assert first == said and len(parsed) == 1
    first.append("the caller's own")
    assert banner.check("{{ nosuch }}", {"turn"}) == said and len(parsed) == 1
    assert banner.check("{{ nosuch }}", {"turn", "nosuch"}) == [] and len(parsed) == 2
    monkeypatch.setattr(patterncheck, "_probe_bounds", lambda: (0.05, 4000))  # a runaway found in 50 ms
    runaway = "(a+)+$"
    reason = patterncheck.re_runaway_reason(runaway)
    assert reason.startswith("pattern runs away") and patterncheck.re_runaway_reason(runaway) == reason
    assert len(probed) == 1


def test_validate_checks_the_users_own_content_cache_settings(cli):
    """Every hook reads the content cache settings: when they are the user's
    own file, a plain `engine validate` checks it too, and says where."""
    builtin = (REPO / "pipelines" / "settings" / "content_cache.yaml").read_text(encoding="utf-8")
    good = write(cli.cwd, "mine.yaml", builtin)
    assert cli("validate", env={"ENGINE_CONTENT_CACHE": good}).returncode == 0
    bad = write(cli.cwd, "bad.yaml", builtin.replace("unsure: pass", "unsure: maybe"))
    r = cli("validate", env={"ENGINE_CONTENT_CACHE": bad})
    assert r.returncode == 1, r
    [p] = problems(r)
    assert p.is_in(bad, cli.cwd) and (p.line, p.col) == position(bad.read_text(encoding="utf-8"), "maybe"), p


def test_a_pattern_that_asks_for_gigabytes_is_said_at_its_place_within_the_memory_cap(cli):
    """engine validate checks a user's file in a compile box, as a profile
    compiles: the pattern's check ends at the box's memory cap, with one
    error at the pattern's FILE:LINE:COL; validating a profile that names
    the file says it there too."""
    evil = write(cli.cwd, "evil.yaml", "kind: protect\nname: evil\ndescription: hostile\npatterns:\n"
                                       f"  - '{HOSTILE}'\nexamples:\n  match: [qqq]\n  no_match: [abc]\n")
    write(cli.cwd, "profile.yaml", "kind: profile\nname: evil\nextends: default\nprotect:\n  add: [./evil.yaml]\n")
    at = position(evil.read_text(encoding="utf-8"), f"'{HOSTILE}'")
    for target in ("evil.yaml", "profile.yaml"):
        r = run_under_an_address_space_cap(cli, "validate", target)
        assert r.returncode == 1 and "Traceback" not in r.err and "out of memory" not in r.err, r
        mine = [p for p in problems(r) if p.is_in(evil, cli.cwd)]
        assert [(p.line, p.col) for p in mine] == [at], r
        assert "compiling this pattern needs more than" in mine[0].msg and "simplify it" in mine[0].msg, mine


def test_a_file_check_past_the_boxs_time_is_said_at_the_pattern_it_was_on(api_env, monkeypatch):
    """A box past its time is killed (a pattern may hold it in C code, where
    no Python timer runs): the error is said at the pattern the box had
    started on, not only at its file."""
    from engine.core import settings, validate

    limits = dict(settings.compile_limits(), timeout_ms=200)  # shorter than one runaway probe (probe_ms)
    monkeypatch.setattr(settings, "compile_limits", lambda: limits)
    text, _ = CASES["runaway_nested_plus.yaml"]
    path = write(api_env, "runaway.yaml", text)
    [p] = validate.validate_paths([str(path)])
    assert (Path(p.file).resolve(), p.line, p.col) == (path.resolve(), *position(text, "'(a+)+$'")), str(p)
    assert "checking this file did not finish within 200 ms" in p.message and "here: simplify this pattern" in p.message, p


def test_an_exception_in_the_compile_box_is_one_line_at_the_file(api_env):
    """Old: an exception no check had turned into a user error came out of
    the box as RuntimeError('compiling failed: ...'), a traceback."""
    from engine.base.errors import UserError
    from engine.core import compilebox

    with pytest.raises(UserError) as got:
        compilebox.run(lambda: {}["missing"], "p.yaml")
    assert (got.value.file, got.value.line, got.value.col) == ("p.yaml", 1, 1)
    assert "compiling this profile failed: KeyError: 'missing'" in got.value.message, got.value.message


def test_an_agent_documents_failure_patterns_are_checked_at_their_place(cli):
    """An agent's failure.skip_lines, failure.strip and a shell output's
    failed_cut_marker run with Python's re on a failure's text: one that
    does not compile is said at its FILE:LINE:COL."""
    text = (REPO / "pipelines" / "agents" / "claude-code.yaml").read_text(encoding="utf-8")
    text = text.replace('  strip: ["</?tool_use_error>"]', '  strip: ["</?tool_use_error>", "([a-z"]')
    text = text.replace("failed_cut_marker: '", "failed_cut_marker: '(?P<x")
    path = write(cli.cwd, "agent.yaml", text)
    r = cli("validate", "agent.yaml")
    assert r.returncode == 1, r
    found = sorted((p.line, p.col) for p in problems(r) if p.is_in(path, cli.cwd))
    assert found == sorted([position(text, "'(?P<x"), position(text, '"([a-z"')]) and len(problems(r)) == 2, r


@pytest.mark.parametrize("shape, takes", [
    ('{first: "a-z", rest: "a-z/", max_length: 64}', "'a/b'"),
    ('{first: "a-z.", rest: "a-z0-9.", max_length: 64}', "'.'"),
    ('{first: "A-Za-z0-9_", rest: "A-Za-z0-9_.-", max_length: 64}', "'a..b'"),
    ('{first: "a-z", rest: "a-z\\\\", max_length: 64}', "'a\\\\b'"),
])
def test_an_agents_session_shape_that_takes_an_unsafe_id_is_refused_at_its_place(cli, shape, takes):
    """A session id of an agent's session_shape becomes a folder name
    (Copilot's transcript.session_path): a shape that takes '..', '/', a
    backslash or a NUL is refused at its FILE:LINE:COL; one past 255
    characters, with a key of its own or a session_path without a shape
    is a schema error."""
    text = (REPO / "pipelines" / "agents" / "copilot.yaml").read_text(encoding="utf-8")
    ours = 'session_shape: {first: "A-Za-z0-9", rest: "A-Za-z0-9_-", max_length: 128}'
    assert ours in text
    path = write(cli.cwd, "agent.yaml", text.replace(ours, f"session_shape: {shape}"))
    r = cli("validate", "agent.yaml")
    assert r.returncode == 1, r
    [p] = [p for p in problems(r) if p.is_in(path, cli.cwd)]
    assert (p.line, p.col) == position(path.read_text(), shape) and "the shape takes" in p.msg and takes in p.msg, r
    for other, says in (("", "session_shape"), (ours.replace("128", "300"), "300"),
                        (ours.replace("}", ", pattern: x}"), "unknown key 'pattern'")):
        write(cli.cwd, "agent.yaml", text.replace(ours, other))
        r = cli("validate", "agent.yaml")
        assert r.returncode == 1 and says in r.err, (other, r)


@pytest.mark.parametrize("says, at, message", [
    ("    fraction: 0.5\n    compacts_when: never\n", "compacts_when", "unknown key 'compacts_when'"),
    ("    fraction: 0.5\n    tokens: 1000\n", "fraction", ""),
    ("    tokens: 2000000\n", "2000000", "context.compaction.tokens is 2,000,000, not below window_tokens (1,048,576)"),
])
def test_an_agents_compaction_fact_is_checked(cli, says, at, message):
    """context.compaction (where the agent compacts on its own, which engine
    doctor compares with the context monitor's thresholds): an unknown key,
    two places at once, or a place past the window is an error at its
    FILE:LINE:COL."""
    text = (REPO / "pipelines" / "agents" / "gemini.yaml").read_text(encoding="utf-8")
    ours = "    fraction: 0.5\n"
    assert ours in text
    path = write(cli.cwd, "agent.yaml", text.replace(ours, says))
    r = cli("validate", "agent.yaml")
    assert r.returncode == 1 and "Traceback" not in r.err, r
    [p] = [p for p in problems(r) if p.is_in(path, cli.cwd)]
    assert (p.line, p.col) == position(path.read_text(), at) and message in p.msg, r
    write(cli.cwd, "agent.yaml", text)
    assert cli("validate", "agent.yaml").returncode == 0
