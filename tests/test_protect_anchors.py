"""Issue 18, a faster word pass: protect patterns that opened with a
look-behind (tried by the regex engine at every position of the text) now
open with a character a hit must start with, which the engine skips to.

The rewrite must not move a single protected span.  The former spellings
are kept here as the reference: each current pattern must give the same
spans as its former spelling (span_of: a look-behind group carries a span
back) on the recorded corpus, the golden inputs, their compressed forms (where
flattened table rows appear) and random texts made of the characters each
pattern cares about."""

import random
from pathlib import Path

import pytest
import regex

from engine.core.profile import load_profile
from engine.text.protect import blank_out, span_of
from engine.text.regexutil import after_look_behinds
from testdata import corpus_files

REPO = Path(__file__).resolve().parent.parent

# category -> (index of the pattern in protect/<category>.yaml, former spelling, alphabet for random texts)
FORMER = {
    "table_values": [
        # a pipe after a backslash is a character of the cell ("a \\| b" is one cell, as Markdown
        # reads it): the cell's characters are "not a blank, pipe or star, or a pipe after a
        # backslash", and the pipes around the cell are not after one
        (0, r"(?<=(?<!\\)\|[ \t]{0,40}(?:\*\*|__)?)(?![ \t:-]*\|)(?:[^\s|*]|(?<=\\)\|)+(?:[ \t]+(?:[^\s|*]|(?<=\\)\|)+){0,2}"
            r"(?=(?:\*\*|__)?[ \t]{0,40}(?<!\\)\|)(?![^\n]{0,300}\n[ \t]{0,3}\|?[ \t]*:?-+:?[ \t]*\|)",
         ["|", " ", "*", "_", ":", ";", "a", "b", "\n", "-", "\t", "**", "__", ": ", "; ", "\\", "\\|", "a \\| b"]),
        (1, r"(?<=(?m:^)[^\n:;|]{1,60}: [ \t]{0,40})(?:[^\s;|*]|(?<=\\)\|)+(?:[ \t]+(?:[^\s;|*]|(?<=\\)\|)+){0,2}"
            r"(?=[ \t]{0,40}; [^\n:;|]{1,60}: )",
         ["|", " ", "*", "_", ":", ";", "a", "b", "\n", "-", "\t", "x: ", "; y: ", ": ", "; ", "\u00e9", "\\", "\\|"]),
        (2, r"(?<=; [^\n:;|]{1,60}: [ \t]{0,40})(?:[^\s;|*]|(?<=\\)\|)+(?:[ \t]+(?:[^\s;|*]|(?<=\\)\|)+){0,2}"
            r"(?=[ \t]{0,40}; |[ \t]*(?m:$))",
         ["|", " ", "*", ":", ";", "a", "b", "\n", "-", "; k: ", ": ", "; ", "ab cd", "x" * 30, "\\", "\\|", "a \\| b"]),
    ],
    "hashes": [
        (0, r"(?<![\w])(?=[0-9a-fA-F]{0,63}[0-9])(?=[0-9a-fA-F]{0,63}[a-fA-F])[0-9a-fA-F]{7,64}(?![\w])",
         ["a", "1", "f", "F", "9", " ", "_", "-", ".", "g", "\u00e9", "\n", "abc123", "0" * 20, "b" * 30]),
    ],
    "numbers": [
        (0, r"(?<![\w.])v?\d+(?:\.\d+)+(?:-[\w.]+)?(?:\+[\w.]+)?(?![\w])",
         ["1", "-", "+", "~", ".", "a", "v", " ", "1.2", "_", "x", "v1"]),
        (1, r"(?<![\w.])[-+~]?\d(?:[\d,_]*\d)?(?:\.\d+)?(?:[ \t]?(?:%|[KMGTP]i?B|[kKMGT]|bytes?|ms|µs|ns|sec|secs|seconds?|s|min|mins|"
            r"minutes?|m|hours?|hrs?|h|days?|d|weeks?|w|px|em|rem|x|k|chars?|characters?|tokens?|lines?|turns?))?(?![\w])"
            r"(?:[-–][\d.]+(?:%|[KMGTP]i?B|[kKMG]|ms|s|m|h|d)?(?![\w]))?",
         ["1", "-", "+", "~", ".", "a", "v", " ", "12,3", "ms", "k", ",", "_", "\u2013", "x", "\u00e9"]),
    ],
    "paths": [
        (3, r"(?<![\w./\-])[\w\-]++(?:\.(?![a-z][a-z0-9]{0,7}(?![\w/]))[\w\-]++)*+\.[a-z][a-z0-9]{0,7}(?![\w/])(?:\.[\w\-]++)*+",
         ["a", "b", "md", "py", "-", ".", "/", " ", "_", "x1", "abcdefghij", "\u00e9", "\n", "..", "A"]),
    ],
    "cli_commands": [
        (0, r"(?<![\w./-])(?:kubectl|helm|terraform|aws|gcloud|docker|docker-compose|git|gh|npm|npx|pnpm|yarn|bun|deno|pip|pipx|uv|uvx|"
            r"poetry|cargo|rustup|go|scp|ssh|rsync|curl|wget|brew|apt|apt-get|systemctl|pytest|node|python|python3|ruby|bundle|rake|"
            r"mvn|gradle|dotnet|rm|mv|cp|chmod|chown|sudo)(?:[ \t]+[a-z][\w:.-]*){1,2}(?:[ \t]+--?[A-Za-z][\w-]*(?:=[^\s`]+)?)*",
         ["git", "apt", "-get", " ", "\t", "x", "-", "/", ".", "\u00e9", "a", "--f", "=", "go", "\n"]),
    ],
}

# the opaque categories are one alternation, scanned together
FORMER_OPAQUE = {
    # a backtick is content where it starts a run of another length than the
    # opening one, or goes on with one ("`a``b`" is one span, as Markdown reads it)
    "inline_code": r"(?<!`)(?P<t>`+)(?!`)(?:[^`\n]|\n(?![ \t]*\n)|(?<!`)(?!(?P=t)(?!`))`|(?<=`)`){1,1000}?"
                   r"(?<!`)(?P=t)(?!`)",
    "indented_code": r"(?m)(?:(?<=\A)|(?<=(?:\A|\n)(?![ \t]*(?:[-*+]|\d+[.)])[ \t])(?![ \t])[^\n]*\n[ \t]*\n))"
                     r"(?:(?: {4}|\t)[^\n]*(?:\n|\Z)|[ \t]*\n(?=(?: {4}|\t)))+",
    "link_targets": r"(?<=\])\((?:<[^>\n]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'))?\)",
}
OPAQUE_ALPHABET = ["`", "``", "```", "\n", "\n\n", "    ", "\t", "a", " ", "- ", "1. ", "](", "(", "x)", "<", "<b>",
                   "]", "[a]: u", "~~~", "---\n"]
# code spans holding backtick runs of another length than their own
OPAQUE_RUNS_ALPHABET = OPAQUE_ALPHABET + ["````", "`a``b`", "``a```b``", "a``", "``b"]


@pytest.fixture(scope="module")
def standard():
    return load_profile(None, "standard")


@pytest.fixture(scope="module")
def texts(standard):
    from engine.text.pipeline import compress

    inputs = [p.read_text(encoding="utf-8") for p in corpus_files()]
    inputs += [p.read_text(encoding="utf-8") for p in sorted((REPO / "tests" / "golden").glob("*/input.md"))]
    assert inputs
    # compressed text holds the flattened table rows ("Header: cell; Header: cell")
    return inputs + [compress(standard, t).text for t in inputs]


@pytest.fixture(scope="module")
def blanked(standard, texts):
    """The texts as token patterns see them, with the opaque regions blanked
    out: the same for every token pattern, so made once."""
    opaque = standard.protector._opaque
    return [blank_out(text, [(m.start(), m.end(), "") for m in opaque.finditer(text)]) for text in texts]


def _current(standard, category, index):
    return [p for name, p in standard.protector._token if name == category][index]


def _former(source, current):
    """The former spelling, its groups named as the profile names them."""
    from engine.text import regexutil

    prefix = ""
    for name in current.groupindex:
        prefix = name.rsplit("_", 1)[0] + "_"
    return regex.compile(regexutil.prefixed(regexutil.scoped(source), prefix), regex.V0)


def _spans(pattern, text):
    return [span_of(m) for m in pattern.finditer(text)]


def _random_texts(alphabet, seed, count=4000):
    rnd = random.Random(seed)
    return ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 30))) for _ in range(count)]


CASES = [(cat, index, source, alphabet) for cat, items in FORMER.items() for index, source, alphabet in items]


@pytest.mark.parametrize("category,index,source,alphabet", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_token_pattern_opens_with_its_anchor(standard, category, index, source, alphabet):
    """What the pattern consumes first (after any look-behind, which the
    engine checks only where that first item matched) is a character a hit
    must start with, not the broad class of the former spelling."""
    current = _current(standard, category, index)
    assert _without_leading_look_behinds(current.pattern).startswith(ANCHORS[(category, index)]), current.pattern
    assert not _without_leading_look_behinds(source).startswith(ANCHORS[(category, index)])


ANCHORS = {
    ("table_values", 0): r"\|", ("table_values", 1): "(?m:^)", ("table_values", 2): "; ",
    ("hashes", 0): "[0-9]", ("numbers", 0): r"\d", ("numbers", 1): r"\d", ("paths", 3): r"\.",
    ("cli_commands", 0): r"\b",
}


def _without_leading_look_behinds(pattern):
    return pattern[after_look_behinds(pattern):]


@pytest.mark.parametrize("category,index,source,alphabet", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_token_pattern_protects_the_same_spans(standard, blanked, category, index, source, alphabet):
    current = _current(standard, category, index)
    former = _former(source, current)
    hits = 0
    for text in blanked:  # token patterns run on the text with opaque regions blanked out
        expected = _spans(former, text)
        hits += len(expected)
        assert _spans(current, text) == expected
    for text in _random_texts(alphabet, hash((category, index)) & 0xFFFF):
        expected = _spans(former, text)
        hits += len(expected)
        assert _spans(current, text) == expected, repr(text)
    assert hits, "the comparison saw no hit at all"


def test_opaque_scan_finds_the_same_regions(standard, texts):
    current = standard.protector
    assert set(FORMER_OPAQUE) <= set(current.categories)
    former = _rebuild_opaque(current)
    assert former.pattern != current._opaque.pattern
    for text in list(texts) + _random_texts(OPAQUE_ALPHABET, 7, 6000) + _random_texts(OPAQUE_RUNS_ALPHABET, 8, 4000):
        a = [(m.span(), m.lastgroup) for m in former.finditer(text)]
        b = [(m.span(), m.lastgroup) for m in current._opaque.finditer(text)]
        assert a == b, repr(text[:200])


def _rebuild_opaque(protector):
    """The profile's opaque alternation, built as the profile builds it
    (engine/core/compile.py) with the former spellings put back."""
    import yaml

    from engine.core.protectsource import source
    from engine.text.protect import Protector

    cats = []
    for i, name in enumerate(protector.categories):
        data = yaml.safe_load((REPO / "protect" / f"{name}.yaml").read_text(encoding="utf-8"))
        if name in FORMER_OPAQUE:
            data["patterns"] = [FORMER_OPAQUE[name], *data["patterns"][1:]]
        cats.append(source(data, f"c{i}_"))
    word_pattern = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["word_pattern"]
    return Protector(cats, word_pattern, 1000)._opaque


def test_opaque_patterns_no_longer_open_with_a_look_behind(standard):
    import yaml

    for name in FORMER_OPAQUE:
        data = yaml.safe_load((REPO / "protect" / f"{name}.yaml").read_text(encoding="utf-8"))
        first = data["patterns"][0]
        body = first[4:] if first.startswith("(?m)") else first
        assert not body.startswith("(?<") and not body.startswith("(?:(?<"), (name, first)
