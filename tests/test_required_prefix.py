"""Issue 18, whole-process speed: a token pattern whose every match starts
with a literal (`glpat-`, `-----BEGIN`) is not run over a text that does not
hold that literal (a byte search, memchr fast, where a regex pass over a text
with one emoji costs as much as a str search).  The literal must be one every
match really needs, and skipping must never change the spans found."""

import random
from pathlib import Path

import pytest
import regex

from engine.core.profile import load_profile
from engine.text.regexutil import required_prefix
from testdata import corpus_files

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("pattern,literal", [
    (r"(?<![\w])glpat-[A-Za-z0-9_-]{20,300}", "glpat-"),
    (r"(?<=(?<![\w.+-])(?P<l>[\w.+-]+))@[A-Za-z0-9-]+", "@"),
    (r"hooks\.slack\.com/(?:services)/x", "hooks.slack.com/"),
    (r"abc?d", "ab"),  # c may be missing
    (r"ab*", "a"),
    (r"ab{0,2}", "a"),
    (r"ab+c", "a"),
    (r"a|b", ""),  # either branch
    (r"(?:a|b)c", ""),
    (r"(?i)abc", ""),  # flags: not the same code points
    (r"(?i:ab)c", ""),
    (r"\bword", ""),
    (r"\.x", ".x"),
    (r"x\d", "x"),
    (r"[ab]c", ""),
    (r"(?<![\w-])sk-[\w]{20}", "sk-"),
    (r"(?<!\])\(x", "(x"),  # an escaped parenthesis is a literal
])
def test_required_prefix_reads_only_what_every_match_starts_with(pattern, literal):
    assert required_prefix(pattern) == literal


def _texts():
    rnd = random.Random(18)
    out = [p.read_text(encoding="utf-8", errors="surrogateescape") for p in corpus_files()]
    out += [p.read_text(encoding="utf-8") for p in sorted((REPO / "tests" / "golden").glob("*/input.md"))]
    pieces = ["glpat-", "sk-", "AKIA", "-----BEGIN", "PRIVATE KEY-----", "\U0001F600", "é", "a", "0", "_KEY=", "x" * 40,
              " ", "\n", "://", "u:p@h", '"private_key": "', "eyJ", ".", "hooks.slack.com/services/", "PASSWORD: ", "|"]
    for _ in range(300):
        out.append("".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 40))))
    return out


@pytest.mark.parametrize("level", ["standard", "aggressive"])
def test_skipping_absent_literals_finds_the_same_spans(level):
    protector = load_profile(None, level).protector
    assert sum(1 for p in protector._prefixes if p) >= 10  # the secret formats have theirs
    plain = protector.__class__.__new__(protector.__class__)
    plain.__dict__.update(protector.__dict__)
    plain._prefixes = [""] * len(protector._prefixes)
    plain._literals = {}
    for text in _texts():
        assert protector.scan(text) == plain.scan(text)


def test_every_builtin_literal_starts_every_match():
    """On texts built to match: wherever a pattern with a literal matches,
    the text holds the literal."""
    protector = load_profile(None, "standard").protector
    import yaml

    examples = []
    for f in sorted((REPO / "protect").glob("*.yaml")):
        doc = yaml.load(f.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        examples += doc.get("examples", {}).get("match", [])
    checked = 0
    for (_, pattern), literal in zip(protector._token, protector._prefixes):
        if not literal:
            continue
        for text in examples + _texts()[-300:]:
            if pattern.search(text) is not None:
                assert literal in text, (pattern.pattern, text)
                checked += 1
    assert checked > 20


def test_cli_command_names_are_grouped_by_first_letter():
    """cli_commands: the tool names, one alternation per first letter (a
    quarter less time at each word start); test_protect_anchors checks the
    spans are those of the former spelling."""
    import yaml

    pattern = yaml.safe_load((REPO / "protect" / "cli_commands.yaml").read_text(encoding="utf-8"))["patterns"][0]
    names = pattern[pattern.index("(?:") + 3:pattern.index(")(?:[ \\t]+")]
    firsts = [branch[0] for branch in regex.findall(r"[a-z]\(\?:[^)]*\)", names)]
    assert firsts and len(firsts) == len(set(firsts)), names
