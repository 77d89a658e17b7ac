"""User profiles: `extends: default` plus protect and dictionary edits, their
effect on `engine compress`, what `engine profile show` prints, and the
mistakes a user can make while writing one."""

import json
import re

import pytest
import yaml

from conftest import REPO, Engine, position, problems, write

TICKETS = """kind: protect
name: tickets
description: ticket ids
patterns: ['TICK-\\d+']
examples:
  match: [TICK-12]
  no_match: [ticket, TICK]
"""

MY_ABBREVIATIONS = """kind: dictionary
name: myabbr
description: my team's short forms; they win over the built-in ones
entries:
  configuration: conf
  environment: envt
"""

MORE_FILLERS = """kind: dictionary
name: morefillers
description: more words to drop
words: [kindly, honestly]
"""

# The profile of the issue: extends default, adds a category, removes one,
# adds and removes dictionary words, merges a dictionary file on top.
MINE = """kind: profile
name: mine
extends: default
protect:
  add: [./mycat.yaml]
  remove: [action_verbs]
dictionaries:
  fillers:
    add: [basically]
    remove: ["an"]
    files: [./morefillers.yaml]
  abbreviations:
    add: {microservice: msvc, delete: del}
    remove: [database]
    files: [./myabbr.yaml]
"""

# The same edits, keeping action_verbs: what removing the category changes.
MINE_KEEPING_VERBS = MINE.replace("name: mine", "name: mineverbs").replace("  remove: [action_verbs]\n", "")

# objective chars uses every abbreviation that saves characters, so the
# removal of `database` shows in the output.
CHARS = "kind: profile\nname: chars\nextends: default\nobjective: chars\n"
CHARS_MINE = "kind: profile\nname: charsmine\nextends: ./chars.yaml\ndictionaries:\n  abbreviations:\n    remove: [database]\n"


@pytest.fixture(scope="module")
def pdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("profiles")
    write(d, "mycat.yaml", TICKETS)
    write(d, "myabbr.yaml", MY_ABBREVIATIONS)
    write(d, "morefillers.yaml", MORE_FILLERS)
    write(d, "mine.yaml", MINE)
    write(d, "mineverbs.yaml", MINE_KEEPING_VERBS)
    write(d, "chars.yaml", CHARS)
    write(d, "charsmine.yaml", CHARS_MINE)
    return d


@pytest.fixture
def run(pdir, cache_dir):
    return Engine(cache_dir, pdir)


def words_of(text):
    return re.findall(r"[\w'’-]+", text)


def compress(run, text, *args):
    r = run("compress", "-", "--level", "standard", *args, input=text)
    assert r.returncode == 0, r
    return r.out


# ---------------------------------------------------------------- validate and show


def test_the_user_profile_is_valid(run):
    r = run("validate", "mine.yaml", "mycat.yaml", "myabbr.yaml", "morefillers.yaml", "chars.yaml", "charsmine.yaml")
    assert r.returncode == 0, r
    assert r.err == ""


def test_profile_show_prints_the_resolved_profile(run, pdir):
    r = run("profile", "show", "mine.yaml")
    assert r.returncode == 0, r
    shown = yaml.safe_load(r.out)
    default = yaml.safe_load(run("profile", "show", "default").out)
    assert shown["name"] == "mine"
    assert shown["level"] == default["level"]
    # protect: one category added (at the end), one removed, the rest inherited in order
    assert "tickets" in shown["protect"]
    assert "action_verbs" not in shown["protect"]
    assert shown["protect"] == [c for c in default["protect"] if c != "action_verbs"] + ["tickets"]
    # fillers: words added from the profile and from the file, one removed
    fillers = [w["word"] for w in shown["dictionaries"]["fillers"]["words"]]
    default_fillers = [w["word"] for w in default["dictionaries"]["fillers"]["words"]]
    assert "an" in default_fillers and "an" not in fillers
    assert {"basically", "kindly", "honestly"} <= set(fillers)
    assert set(fillers) == (set(default_fillers) - {"an"}) | {"basically", "kindly", "honestly"}
    # abbreviations: entries added, one removed, the user file merged on top
    entries = shown["dictionaries"]["abbreviations"]["entries"]
    default_entries = default["dictionaries"]["abbreviations"]["entries"]
    assert "database" in default_entries and "database" not in entries
    assert entries["microservice"] == "msvc"
    assert entries["configuration"] == "conf" != default_entries["configuration"]
    assert entries["environment"] == "envt"
    files = shown["dictionaries"]["abbreviations"]["files"]
    assert files[:-1] == default["dictionaries"]["abbreviations"]["files"]
    assert files[-1].endswith("myabbr.yaml")


def test_profile_show_of_a_profile_extending_a_user_profile(run):
    shown = yaml.safe_load(run("profile", "show", "charsmine.yaml").out)
    assert shown["name"] == "charsmine"
    assert shown["objective"] == "chars"  # inherited from ./chars.yaml
    assert "database" not in shown["dictionaries"]["abbreviations"]["entries"]


def test_profile_show_by_active_profile(run):
    r = run("profile", "show", env={"ENGINE_PROFILE": "mine.yaml"})
    assert r.returncode == 0, r
    assert yaml.safe_load(r.out)["name"] == "mine"


# ---------------------------------------------------------------- effect on compress


def test_added_and_removed_filler_words(run):
    text = "Basically you kindly keep an eye on production hosts.\n"
    default = compress(run, text)
    mine = compress(run, text, "--profile", "mine.yaml")
    # built-in: "Basically" and "kindly" are no fillers; "an" is one here
    assert "Basically" in default and "kindly" in default
    assert "an" not in words_of(default), default
    # mine: the added words go, the removed one stays
    assert "Basically" not in mine and "basically" not in mine.lower(), mine
    assert "kindly" not in mine, mine
    assert "an" in words_of(mine), mine


def test_added_abbreviation_and_user_file_entries_win(run):
    text = "Each microservice reads its configuration and its environment.\n"
    default = compress(run, text)
    mine = compress(run, text, "--profile", "mine.yaml")
    assert "microservice" in default and "msvc" not in default
    assert "msvc" in words_of(mine) and "microservice" not in mine, mine
    assert "conf" in words_of(mine), mine
    assert "configuration" not in mine


def test_removed_abbreviation_is_kept(run):
    text = "Raise the database limit for the request.\n"
    chars = compress(run, text, "--profile", "chars.yaml")
    charsmine = compress(run, text, "--profile", "charsmine.yaml")
    assert "database" not in chars, chars  # objective chars: database -> its short form
    assert "database" in charsmine, charsmine


def test_removed_category_no_longer_protects(run):
    """mine and mineverbs differ only in `remove: [action_verbs]`; both add
    the abbreviation delete -> del."""
    text = "Never delete the backup.\n"
    keeping = compress(run, text, "--profile", "mineverbs.yaml")
    removed = compress(run, text, "--profile", "mine.yaml")
    assert "delete" in words_of(keeping), keeping
    assert "del" in words_of(removed) and "delete" not in removed, removed


def test_added_category_protects_and_is_explained(run):
    text = "See TICK-12 and push the fix to the repository.\n"
    r = run("explain", "-", "--profile", "mine.yaml", "--level", "standard", input=text)
    assert r.returncode == 0, r
    spans = re.findall(r"^  \d+:\d+\t(\S+)\t(.*)$", r.out, re.M)
    assert ("tickets", "TICK-12") in spans, r.out
    assert not any(cat == "action_verbs" for cat, _ in spans), r.out
    default = run("explain", "-", "--level", "standard", input=text).out
    assert "\taction_verbs\tpush" in default
    assert "tickets" not in default


def test_json_names_the_user_profile(run):
    r = run("compress", "-", "--profile", "mine.yaml", "--json", input="the configuration\n")
    fig = json.loads(r.out)
    assert fig["profile"] == "mine"


def test_editing_a_user_dictionary_changes_the_next_run(cli):
    """The compiled profile is cached; a changed user file must not be served stale."""
    write(cli.cwd, "abbr.yaml", MY_ABBREVIATIONS)
    write(cli.cwd, "p.yaml", "kind: profile\nname: p\nextends: default\ndictionaries:\n  abbreviations:\n    files: [./abbr.yaml]\n")
    text = "Read the configuration.\n"
    first = cli("compress", "-", "--profile", "p.yaml", input=text)
    assert "conf" in words_of(first.out), first
    write(cli.cwd, "abbr.yaml", MY_ABBREVIATIONS.replace("configuration: conf", "configuration: config"))
    second = cli("compress", "-", "--profile", "p.yaml", input=text)
    assert "config" in words_of(second.out), second


def test_dictionary_use_replaces_the_inherited_files(cli):
    write(cli.cwd, "few.yaml", "kind: dictionary\nname: few\ndescription: x\nwords: [kindly]\n")
    write(cli.cwd, "p.yaml", "kind: profile\nname: p\nextends: default\ndictionaries:\n  fillers: {use: [./few.yaml]}\n")
    write(cli.cwd, "q.yaml", "kind: profile\nname: q\nextends: default\ndictionaries:\n  fillers: [./few.yaml]\n")
    text = "Kindly read the file of the day.\n"
    for prof in ("p.yaml", "q.yaml"):
        out = cli("compress", "-", "--profile", prof, "--level", "standard", input=text).out
        assert "Kindly" not in out, (prof, out)
        assert words_of(out).count("the") == 2, (prof, out)
        shown = yaml.safe_load(cli("profile", "show", prof).out)
        assert [w["word"] for w in shown["dictionaries"]["fillers"]["words"]] == ["kindly"]


def test_profile_paths_are_read_relative_to_the_profile_file(cli, pdir):
    """From another working folder, ./mycat.yaml still means the one next to mine.yaml."""
    r = cli("explain", "-", "--profile", pdir / "mine.yaml", input="See TICK-7.\n")
    assert r.returncode == 0, r
    assert "\ttickets\tTICK-7" in r.out


# ---------------------------------------------------------------- mistakes


def _check_one_problem(cli, path, text, needle, words, occurrence=0):
    for args in (("validate", path.name), ("compress", "-", "--profile", path.name)):
        r = cli(*args, input="the text\n", timeout=60)
        assert r.returncode == 1, r
        assert r.out == ""
        found = problems(r)
        assert found, r
        p = found[0]
        assert p.is_in(path, cli.cwd), r.err
        assert (p.line, p.col) == position(text, needle, occurrence), r.err
        for w in words:
            assert w in p.msg, r.err


@pytest.mark.parametrize("slot, present, word", [("fillers", "the", "nonword"), ("abbreviations", "database", "kubernetess")])
def test_removing_a_word_that_is_not_there(cli, slot, present, word):
    text = f"kind: profile\nname: p\nextends: default\ndictionaries:\n  {slot}:\n    remove: [{present}, {word}]\n"
    path = write(cli.cwd, "p.yaml", text)
    _check_one_problem(cli, path, text, word, [word])


def test_removing_a_word_ignores_case_in_word_lists(cli):
    write(cli.cwd, "p.yaml", "kind: profile\nname: p\nextends: default\ndictionaries:\n  fillers:\n    remove: [The]\n")
    r = cli("validate", "p.yaml")
    assert r.returncode == 0, r
    shown = yaml.safe_load(cli("profile", "show", "p.yaml").out)
    assert "the" not in [w["word"].lower() for w in shown["dictionaries"]["fillers"]["words"]]


def test_removing_a_category_that_is_not_there(cli):
    text = "kind: profile\nname: p\nextends: default\nprotect:\n  remove: [negations, nosuchcat]\n"
    path = write(cli.cwd, "p.yaml", text)
    _check_one_problem(cli, path, text, "nosuchcat", ["nosuchcat"])


def test_adding_a_category_twice(cli):
    write(cli.cwd, "mycat.yaml", TICKETS)
    text = "kind: profile\nname: p\nextends: default\nprotect:\n  add: [./mycat.yaml, ./mycat.yaml]\n"
    path = write(cli.cwd, "p.yaml", text)
    _check_one_problem(cli, path, text, "./mycat.yaml", ["tickets"], occurrence=1)


def test_missing_user_file(cli):
    text = "kind: profile\nname: p\nextends: default\nprotect:\n  add: [./gone.yaml]\n"
    path = write(cli.cwd, "p.yaml", text)
    _check_one_problem(cli, path, text, "./gone.yaml", ["gone.yaml"])


def test_wrong_kind_of_document(cli):
    wrong = write(cli.cwd, "notcat.yaml", MORE_FILLERS)
    text = "kind: profile\nname: p\nextends: default\nprotect:\n  add: [./notcat.yaml]\n"
    write(cli.cwd, "p.yaml", text)
    r = cli("validate", "p.yaml")
    assert r.returncode == 1
    [p] = problems(r)
    assert "protect" in p.msg and "dictionary" in p.msg, r.err
    assert p.is_in(wrong, cli.cwd), r.err  # said at the wrong document's own kind


BASE = "kind: profile\nname: base\nextends: default\n"


@pytest.mark.parametrize("text, wrong, kind", [
    # the profile it extends, read before as a profile, used as a slot's dictionary (was: KeyError 'words')
    ("kind: profile\nname: p\nextends: ./base.yaml\ndictionaries:\n  fillers:\n    use: [./base.yaml]\n",
     "base.yaml", "dictionary"),
    # its own file as a dictionary (was: 'this dictionary holds words but the slot holds entries')
    ("kind: profile\nname: p\nextends: default\ndictionaries:\n  abbreviations:\n    files: [./p.yaml]\n",
     "p.yaml", "dictionary"),
    # a dictionary read for a slot, then named as the level (was: KeyError 'transforms')
    ("kind: profile\nname: p\nextends: default\nlevel: ./more.yaml\ndictionaries:\n  fillers:\n    files: [./more.yaml]\n",
     "more.yaml", "level"),
], ids=["profile-as-dictionary", "itself-as-dictionary", "dictionary-as-level"])
def test_a_document_read_before_is_still_checked_for_its_kind(cli, text, wrong, kind):
    write(cli.cwd, "base.yaml", BASE)
    write(cli.cwd, "more.yaml", MORE_FILLERS)
    write(cli.cwd, "p.yaml", text)
    for args in (("validate", "p.yaml"), ("compress", "-", "--profile", "p.yaml")):
        r = cli(*args, input="the text\n", timeout=60)
        assert r.returncode == 1, r
        [p] = problems(r)
        assert p.is_in(cli.cwd / wrong, cli.cwd) and (p.line, p.col) == (1, 7), r.err
        assert p.msg.startswith(f"expected a {kind} document here, found kind"), r.err


@pytest.mark.parametrize("line", ['level: "a\\0b"', 'extends: "a\\0b"', 'protect: {add: ["./a\\0b.yaml"]}'],
                         ids=["level", "extends", "protect-file"])
def test_a_string_holding_a_nul_is_said_where_it_is(cli, line):
    """A double-quoted YAML string may hold a NUL (\\0), which no name, path
    or word holds and every file call refuses with ValueError: such a
    profile ended in a traceback (RuntimeError: compiling failed:
    ValueError: embedded null byte).  The loader says it at the string."""
    head = "kind: profile\nname: p\n" + ("" if line.startswith("extends") else "extends: default\n")
    text = f"{head}{line}\n"
    path = write(cli.cwd, "p.yaml", text)
    _check_one_problem(cli, path, text, '"', ["this string holds a NUL character"])


def test_a_content_cache_folder_holding_a_nul_is_said_where_it_is(cli):
    """The content cache's `folder:` holding a NUL passed engine validate and
    ended engine cache stats in a traceback (os.listdir: ValueError)."""
    text = (REPO / "pipelines/settings/content_cache.yaml").read_text(encoding="utf-8")
    assert '\nfolder: ""\n' in text
    text = text.replace('\nfolder: ""\n', '\nfolder: "/tmp/a\\0b"\n')
    path = write(cli.cwd, "cc.yaml", text)
    for args, env in ((("validate", "cc.yaml"), {}), (("cache", "stats"), {"ENGINE_CONTENT_CACHE": str(path)})):
        r = cli(*args, env=env, timeout=60)
        assert r.returncode == 1, r
        [p] = problems(r)
        assert p.is_in(path, cli.cwd) and (p.line, p.col) == position(text, '"/tmp/a'), r.err
        assert p.msg == "this string holds a NUL character (\\0 or \\x00); remove it", r.err


def test_entries_and_words_in_one_slot(cli):
    text = "kind: profile\nname: p\nextends: default\ndictionaries:\n  fillers:\n    add: {foo: bar}\n"
    path = write(cli.cwd, "p.yaml", text)
    _check_one_problem(cli, path, text, "{foo: bar}", ["entries"])


@pytest.mark.parametrize("cycle", ["two", "self"])
def test_extends_cycle(cli, cycle):
    if cycle == "two":
        a = "kind: profile\nname: a\nextends: ./b.yaml\n"
        write(cli.cwd, "b.yaml", "kind: profile\nname: b\nextends: ./a.yaml\n")
    else:
        a = "kind: profile\nname: a\nextends: ./a.yaml\n"
    path = write(cli.cwd, "a.yaml", a)
    for args in (("validate", "a.yaml"), ("compress", "-", "--profile", "a.yaml"), ("profile", "show", "a.yaml")):
        r = cli(*args, input="x\n", timeout=60)
        assert r.returncode == 1, r
        found = problems(r)
        assert found and all("circle" in p.msg for p in found), r.err
        assert any(p.is_in(path, cli.cwd) and (p.line, p.col) == position(a, "./") for p in found), r.err


def test_level_extends_cycle(cli):
    la = "kind: level\nname: la\nextends: ./lb.yaml\ndescription: x\ntransforms: []\n"
    write(cli.cwd, "la.yaml", la)
    write(cli.cwd, "lb.yaml", "kind: level\nname: lb\nextends: ./la.yaml\ndescription: x\ntransforms: []\n")
    write(cli.cwd, "p.yaml", "kind: profile\nname: p\nextends: default\nlevel: ./la.yaml\n")
    for args in (("validate", "p.yaml"), ("compress", "-", "--profile", "p.yaml")):
        r = cli(*args, input="x\n", timeout=60)
        assert r.returncode == 1, r
        [p] = problems(r)
        assert "circle" in p.msg


def test_level_extends_cycle_found_when_validating_the_level(cli):
    write(cli.cwd, "la.yaml", "kind: level\nname: la\nextends: ./lb.yaml\ndescription: x\ntransforms: []\n")
    write(cli.cwd, "lb.yaml", "kind: level\nname: lb\nextends: ./la.yaml\ndescription: x\ntransforms: []\n")
    r = cli("validate", "la.yaml", timeout=60)
    assert r.returncode == 1, r
    assert all("circle" in p.msg for p in problems(r)) and problems(r), r.err


def test_a_process_reads_a_builtin_document_once_and_a_users_file_at_every_resolve(tmp_path, monkeypatch):
    """`engine validate` resolves the profile at every level, each in a
    Library of its own: the built-in documents are read and checked once,
    the user's own files every time (an edit between two is seen)."""
    from engine.core import documents
    from engine.core.profile import resolve

    reads = []
    real = documents.load_file
    monkeypatch.setattr(documents, "load_file", lambda path: reads.append(str(path)) or real(path))
    monkeypatch.setattr(documents, "_BUILTIN_READ", {})
    write(tmp_path, "myabbr.yaml", MY_ABBREVIATIONS)
    write(tmp_path, "mine.yaml", "kind: profile\nname: mine\nextends: default\n"
                                 "dictionaries:\n  abbreviations:\n    files: [./myabbr.yaml]\n")
    first, _ = resolve(str(tmp_path / "mine.yaml"))
    builtin = [p for p in reads if documents.is_builtin(p)]
    assert len(builtin) > 10 and len(set(builtin)) == len(builtin)
    write(tmp_path, "myabbr.yaml", MY_ABBREVIATIONS.replace("envt", "env"))
    reads.clear()
    second, _ = resolve(str(tmp_path / "mine.yaml"))
    assert sorted(reads) == sorted(str((tmp_path / name).resolve()) for name in ("mine.yaml", "myabbr.yaml"))
    assert dict(first.slots["abbreviations"].entries)["environment"] == "envt"
    assert dict(second.slots["abbreviations"].entries)["environment"] == "env"
