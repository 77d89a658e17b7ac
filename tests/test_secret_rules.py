"""The secret rule set's machinery (engine/text/secretrules.py, literals.py):
keywords gate a rule, `starts` say where it is tried (and lose nothing),
entropy and allow-lists drop findings, offsets stay right in a non-ASCII
text; the gitleaks import (scripts/goregex.py) translates RE2 into bounded
patterns with the secret named; a rule set's own checks (`engine validate`)."""

import pickle
import sys
from pathlib import Path

import pytest
import yaml

from engine.core import protectsource
from engine.text.literals import Literals, Positions, encoded
from engine.text.secretrules import RuleSet, entropy

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import goregex  # noqa: E402

TOKEN = {"id": "t", "keywords": ["zq_"], "starts": ["zq_"], "pattern": r"\bzq_(?P<secret>[A-Za-z0-9]{12})\b"}


def rule_set(rules, allow=()):
    """A RuleSet of these rules and allow-lists, read as a category's are (their defaults filled in)."""
    return RuleSet([protectsource.rule(r) for r in rules], [protectsource.allow_list(a) for a in allow])


def secrets(rules, text, allow=()):
    return [text[s:e] for _, _, s, e, _ in rule_set(rules, allow).findings(text)]


def test_a_rule_runs_only_where_a_keyword_is():
    gated = dict(TOKEN, keywords=["vendorx"], starts=[])
    assert secrets([gated], "zq_Ab12Cd34Ef56") == []
    assert secrets([gated], "VendorX key: zq_Ab12Cd34Ef56") == ["Ab12Cd34Ef56"]


def test_starts_find_what_a_whole_search_finds_left_to_right_without_overlap():
    rule = dict(TOKEN, pattern=r"zq_(?P<secret>[A-Za-z0-9_]{12})")
    text = " ".join(f"zq_{i:02d}Ab12Cd34Ef zq_zq_Xy98Wv76Ut54" for i in range(50))
    anchored = secrets([rule], text)
    everywhere = secrets([dict(rule, starts=[])], text)
    assert anchored == everywhere and len(anchored) == 100
    assert anchored[1] == "zq_Xy98Wv76U"  # the second zq_ is inside the first match


def test_entropy_at_or_below_the_threshold_drops_a_finding():
    rule = dict(TOKEN, entropy=3.0)
    assert secrets([rule], "zq_aaaaaabbbbbb") == []  # 1 bit per character
    assert secrets([rule], "zq_Q7wE3rT9yU1i") == ["Q7wE3rT9yU1i"]
    assert entropy("ab") == 1.0 and entropy("") == 0.0


@pytest.mark.parametrize("allow,text", [
    ([{"patterns": ["^Ab"]}], "zq_Ab12Cd34Ef56"),  # on the secret
    ([{"target": "match", "patterns": ["^zq_Ab"]}], "zq_Ab12Cd34Ef56"),
    ([{"target": "line", "patterns": ["^# example"]}], "# example: zq_Ab12Cd34Ef56 here"),
    ([{"stopwords": ["cd34"]}], "zq_Ab12Cd34Ef56"),  # lower-cased secret
])
def test_an_allow_list_drops_a_finding_rule_set_wide_or_for_its_rule(allow, text):
    assert secrets([TOKEN], text) == ["Ab12Cd34Ef56"]
    assert secrets([TOKEN], text, allow) == []
    assert secrets([dict(TOKEN, allow=allow)], text) == []


def test_an_allow_list_can_leave_some_rules_alone():
    """gitleaks' global allow-list (a test-alphabet stopword) is for its own
    rules: the engine's own still redact such a key."""
    allow = [{"except_ids": ["engine-"], "stopwords": ["abcdef"]}]
    text = "zq_abcdefGH1234"
    assert secrets([dict(TOKEN, id="vendor-token")], text, allow) == []
    assert secrets([dict(TOKEN, id="engine-token")], text, allow) == ["abcdefGH1234"]


def test_offsets_are_characters_in_a_non_ascii_text():
    head = "ünïcødé 🚀 " * 1000  # longer than the short-text path, wider than one byte
    text = head + "zq_Ab12Cd34Ef56 " + "é" * 5000
    found = list(rule_set([TOKEN]).findings(text))
    assert [text[s:e] for _, _, s, e, _ in found] == ["Ab12Cd34Ef56"]
    positions = Positions(encoded(text), text.isascii())
    assert positions.of("zq_") == [text.index("zq_")]


def test_literals_in_words_and_across_separators():
    words = Literals(["ghp_", "<add key=", "absent"])
    long_text = ("x " * 3000 + 'cfg: <Add Key="Password" value="v"/> ' + "GHP_X").encode()
    assert words.present(long_text) == {"ghp_", "<add key="}
    assert words.present(b"short ghp_x") == {"ghp_"}


def test_a_trie_of_the_literals_finds_what_one_search_per_literal_finds():
    """A short text was searched once per literal (394 in the built-in rule
    set); past the first few, one trie of them all is matched at every
    position: the same literals, those that overlap, start inside another
    or are a prefix of another included."""
    from engine.text import literals

    names = ["ab", "abc", "bcd", "c", "cd", "<add key=", "s.", "ghp_", "sk-", "sk-ant-"]
    texts = [b"xABCDx", b"abc", b"c", b"", b"<Add Key=v", b"SK-ANT-x and gHp_y", b"s.s.", b"nothing here",
             "ünï abcd".encode()]
    found = Literals(names)
    for text in texts * literals._TRIE_AFTER + texts:
        assert found.present(text) == {k for k in names if k.encode() in text.lower()}, text
    assert found._trie is not None
    sample = (REPO / "protect" / "secrets.yaml").read_text(encoding="utf-8")  # every literal, every example
    index = RuleSet(protectsource.source(yaml.safe_load(sample), "s_").rules)._index()
    chunks = [sample[i:i + 700].encode() for i in range(0, len(sample), 350)]
    assert sum(map(len, map(index.present, chunks))) > 1000
    for chunk in chunks:
        assert index.present(chunk) == {k for k, raw in index._in_words + index._whole if raw in chunk.lower()}


def test_a_rule_set_pickles_as_its_sources():
    rules = rule_set([TOKEN])
    assert secrets([TOKEN], "zq_Ab12Cd34Ef56")
    list(rules.findings("zq_Ab12Cd34Ef56"))
    state = pickle.dumps(rules)
    assert b"regex" not in state  # nothing compiled is kept
    assert [f[4] for f in pickle.loads(state).findings("zq_Ab12Cd34Ef56")] == ["t"]


@pytest.mark.parametrize("go,python", [
    # a flag group mid-pattern holds to its group's end (RE2), here scoped
    (r"\b(p8e-(?i)[a-z0-9]{32})(?:x|$)", r"\b(?P<secret>p8e-(?i:[a-z0-9]{32}))(?:x|$)"),
    # unbounded repetitions get a bound; the first capture group is the secret
    (r"tok_([a-z]+)\.[0-9]*", r"tok_(?P<secret>[a-z]{1,4096})\.[0-9]{0,4096}"),
    # gitleaks' name prefix goes; a group under a repetition never is the secret
    (r"(?i)[\w.-]{0,50}?(?:acme)=([a-f0-9]{8}-){2}", r"(?i)(?:acme)=(?:[a-f0-9]{8}-){2}"),
    # alternatives each capture the secret; \z is \Z
    (r"a(x{3})|b(y{3})\z", r"a(?P<secret>x{3})|b(?P<secret>y{3})\Z"),
    # gitleaks' end of a secret also accepts a closing bracket
    (r"""k_([0-9]{4})(?:[\x60'"\s;]|\\[nr]|$)""", r"""k_(?P<secret>[0-9]{4})(?:[\x60'"\s;,)\]}><|&]|\\[nr]|$)"""),
])
def test_go_regexes_are_translated(go, python):
    assert goregex.to_python(go, bound=4096) == python


def test_the_literals_every_match_starts_with():
    found = goregex.leading_literals(r"(?i)[\w.-]{0,50}?(?:passw(?:or)?d|(?-i:[Aa]pi))=x")
    assert found == ["api=x", "passwd=x", "password=x"]
    assert goregex.leading_literals(r"\b(sk_|rk_)[a-z]{4}") == ["rk_", "sk_"]
    assert goregex.leading_literals(r"[a-z]{3}_key") is None  # a class first: none


def test_the_built_in_rule_set_names_its_source_and_every_gitleaks_rule():
    text = (REPO / "protect" / "secrets.yaml").read_text(encoding="utf-8")
    doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert doc["source"]["name"] == "gitleaks" and doc["source"]["version"].startswith("v8.")
    ids = [r["id"] for r in doc["rules"]]
    assert len(ids) == len(set(ids)) and len([i for i in ids if not i.startswith("engine-")]) >= 200
    assert all(r["examples"] for r in doc["rules"])


BAD_RULES = """kind: protect
name: vendor_tokens
description: a user's own secret rules
rules:
  - id: vendor-token
    description: the vendor's tokens
    keywords: [vnd_]
    starts: [tok]
    pattern: 'vnd_(?P<secret>[a-z0-9]{10})'
    examples:
      - {text: 'vnd_abc123def4', secret: 'abc123def4'}
  - id: vendor-key
    description: the vendor's keys
    keywords: [vky_]
    pattern: 'vky_(?P<secret>[a-z0-9]{10})'
    examples:
      - {text: 'vky_zzzzzzzzz9', secret: 'nothing-like-it'}
examples:
  match: []
"""


def test_validate_checks_a_rule_sets_examples_and_starts(tmp_path, cli):
    path = tmp_path / "vendor_tokens.yaml"
    path.write_text(BAD_RULES, encoding="utf-8")
    run = cli("validate", str(path))
    assert run.returncode != 0, str(run)
    assert f"{path.name}:8:" in run.err and "none of `starts`" in run.err, run.err
    assert f"{path.name}:17:" in run.err and "should find the secret 'nothing-like-it'" in run.err, run.err
    path.write_text(BAD_RULES.replace("starts: [tok]", "starts: [vnd_]").replace("nothing-like-it", "zzzzzzzzz9"),
                    encoding="utf-8")
    assert cli("validate", str(path)).returncode == 0


def _user_rules(cli, pattern):
    (cli.cwd / "cats").mkdir(exist_ok=True)
    (cli.cwd / "cats" / "vendor.yaml").write_text(
        "kind: protect\nname: vendor\ndescription: a user's secret rules\nrules:\n"
        "  - id: vendor-phrase\n    description: kept as it is\n    keywords: [vnd-id]\n    starts: [vnd-id]\n"
        f"    pattern: '{pattern}'\n"
        "    examples:\n      - {text: 'vnd-id: in order to proceed', secret: 'vnd-id: in order to proceed'}\n"
        "examples:\n  match: ['vnd-id: in order to proceed']\n", encoding="utf-8")
    (cli.cwd / "profile.yaml").write_text("kind: profile\nname: mine\nextends: default\nlevel: standard\n"
                                          "protect:\n  add: [./cats/vendor.yaml]\n", encoding="utf-8")
    (cli.cwd / "rules.md").write_text("Keep the vnd-id: in order to proceed. Run tests in order to be safe.\n",
                                      encoding="utf-8")
    return cli("compress", "rules.md", "--profile", "profile.yaml")


def test_a_users_rule_set_protects_its_matches_from_compression(cli):
    run = _user_rules(cli, r"vnd-id: in order to [a-z]{1,10}")
    assert run.returncode == 0, str(run)
    assert "vnd-id: in order to proceed" in run.out and "in order to be safe" not in run.out, run.out


def test_a_users_rule_that_does_not_compile_is_an_error_where_it_is(cli):
    run = _user_rules(cli, r"vnd-id: (in order to [a-z]{1,10}")
    assert run.returncode != 0 and "Traceback" not in run.err, str(run)
    assert "vendor.yaml:9:" in run.err, run.err


@pytest.mark.parametrize("name", ["protect/secrets.yaml", "pipelines/default.yaml", "protect/cli_commands.yaml"])
def test_the_engines_own_files_read_by_libyaml_give_the_same_data_and_places(name):
    """Built-in files are parsed by libyaml (the rule set is 160 KB); what
    they hold and where each value is (FILE:LINE:COL of errors) must be
    what the pure-Python parser, used for every other file, gives."""
    from engine.core.yamlload import load_text

    text = (REPO / name).read_text(encoding="utf-8")
    fast, slow = load_text(text, name, builtin=True), load_text(text, name)
    assert fast.data == slow.data and fast.marks == slow.marks and fast.key_marks == slow.key_marks
    assert fast.block_scalars == slow.block_scalars
