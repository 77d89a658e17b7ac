"""The word scan (engine/text/wordscan.py) is one mechanism with two ways of
cutting runs: the profile's word pattern through `regex`, or, for a pattern
of character lists, groups and quantifiers, the same runs through `re`.
Both must give the same runs, on the recorded corpus and on every character
the two modules could read differently (white space above all); and the
message pipeline must find its words with the same scan, its own
`word_pattern` saying what a word is."""

import json
from pathlib import Path

import pytest
import regex
import yaml

from engine.text.wordscan import KeyScan, WordTable, fast_runs
from testdata import corpus_files

REPO = Path(__file__).resolve().parent.parent
WORD_PATTERN = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["word_pattern"]


def _runs(rx, text):
    return [m.span() for m in rx.finditer(text)]


def _texts():
    texts = [p.read_text(encoding="utf-8") for p in corpus_files()]
    # every character up to U+3100 (all of Unicode's white space, the
    # control characters `re` calls space and `regex` does not, curly
    # apostrophes, the letter apostrophe U+02BC), between word pieces
    texts.append("".join(f"a{chr(c)}b{chr(c)}{chr(c)}c " for c in range(0x3100)))
    texts.append("don\u2019t e.g. v1.2 a/b x.,y non-blocking \x1c\x1dword\x1e\x1f \u00a0no\u2028not\u3000never")
    return texts


def test_fast_runs_are_the_word_patterns_runs():
    word_re = regex.compile(WORD_PATTERN, regex.V0)
    fast = fast_runs(word_re)
    assert fast is not word_re, "the built-in word pattern is cut by re (fast_runs)"
    for text in _texts():
        assert _runs(fast, text) == _runs(word_re, text)


@pytest.mark.parametrize("pattern", [
    r"[a-z]+",                      # another shape: read with the pattern itself
    r"[^\s\w]+(?:[.][^\s\w]+)*",     # \w in the class: not a plain list
    r"[^\s-]+(?:[-][^\s-]+)*",       # a hyphen in the class
])
def test_other_word_patterns_are_read_as_written(pattern):
    word_re = regex.compile(pattern, regex.V0)
    assert fast_runs(word_re) is word_re


def test_word_table_finds_the_same_words_with_either_cutter():
    """Words and phrases found whole, the same with `re` cutting the runs as
    with the word pattern itself (kept for the other shapes)."""
    word_re = regex.compile(WORD_PATTERN, regex.V0)
    text = "Never nevermind never_again Don\u2019t DON'T e.g. must  not x.never a\x1cnever (never)"

    def found(use_re):
        table = WordTable()
        for w in ("never", "don't", "must not", "e.g"):
            table.add(w, "x")
        table._keys = KeyScan(word_re, table.compiled())
        if not use_re:
            table._keys._runs = word_re
        return [text[s:e] for s, e, _ in table.matches(text, word_re)]

    # U+001C is no white space to `regex`: "a\x1cnever" is one run
    assert found(True) == found(False) == ["Never", "Don\u2019t", "DON'T", "e.g", "must  not", "never"]
    for text in _texts():
        table = WordTable()
        for w in ("the", "a", "never", "not", "don't", "is not", "in order to"):
            table.add(w, "x")
        fast = list(table.matches(text, word_re))
        table._keys._runs = word_re
        assert list(table.matches(text, word_re)) == fast


def _pipeline(tmp_path, word_pattern=None):
    from engine.messages.load import build

    lines = ["kind: messages", "name: wp", "description: word pattern test", "extends: default"]
    if word_pattern is not None:
        lines.append(f"word_pattern: {json.dumps(word_pattern)}")  # JSON is YAML
    path = tmp_path / "wp.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return build(str(path))


def _negations(pipeline, text):
    from engine.messages.load import Scanner

    def scanners(obj, depth=0):
        if isinstance(obj, Scanner):
            yield obj
        elif depth < 3 and hasattr(obj, "__dict__"):
            for v in vars(obj).values():
                for x in (v if isinstance(v, (list, tuple)) else [v]):
                    yield from scanners(x, depth + 1)

    union = next(sc for obj in pipeline.steps + [pipeline.summarizer] for sc in scanners(obj)).union
    return [text[s:e] for s, e in union.scan(text, None).get("negations", [])]


def test_message_pipeline_word_pattern_says_what_a_word_is(tmp_path):
    """Old code: the message pipeline had its own `\\b` alternation and no
    `word_pattern` key (the schema refused it)."""
    text = "**NEVER** push; (no tests) x=None; non-blocking; don't"
    assert _negations(_pipeline(tmp_path), text) == ["NEVER", "no", "None", "don't"]
    # runs cut at white space only: "**NEVER**" and "(no" are not words
    assert _negations(_pipeline(tmp_path, r"[^\s]+"), text) == ["don't"]


def test_a_message_pipelines_word_lists_share_one_pass_and_find_what_each_finds_alone(monkeypatch):
    """Old: the message pipeline cut a text into word runs once per category
    with a word list (negations, assertions: twice per message).  Now the
    tables share one pass (WordTables), and each still finds what it finds
    alone: a phrase of one list does not hide a word of another."""
    from engine.messages.load import load
    from engine.text import wordscan

    union = load("default").summarizer.must.union
    assert len(union.word_tables) >= 2
    passes = []
    real = wordscan.KeyScan.scan
    monkeypatch.setattr(wordscan.KeyScan, "scan", lambda self, *a, **k: passes.append(1) or real(self, *a, **k))
    union._scan("We must not skip it; you should never do that.")
    assert len(passes) == 1
    monkeypatch.setattr(wordscan.KeyScan, "scan", real)
    for text in _texts() + ["must not", "Must  NOT never", "do not don't"]:
        got, patterns = union._scan(text), union.protector.scan(text)
        for name, table in union.word_tables:
            alone = [(s, e) for s, e, _ in table.matches(text, union._word_re)]
            assert got.get(name, []) == [(s, e) for s, e, n in patterns if n == name] + alone, name
    one, other = WordTable(), WordTable()
    one.add("must not", "a")
    other.add("not", "b")
    other.add("must", "b")
    text = "You must not go."
    assert wordscan.WordTables([one, other]).matches(text, regex.compile(WORD_PATTERN, regex.V0)) == [
        [(4, 12, "a")], [(4, 8, "b"), (9, 12, "b")]]


MESSAGE_WORDS = yaml.safe_load((REPO / "pipelines" / "messages" / "default.yaml").read_text(encoding="utf-8"))["word_pattern"]


@pytest.mark.parametrize("pattern", [MESSAGE_WORDS, r"[^\s]+", r"[A-Z]+", r"[a-z']++", r"[\w.-]+", r"[^a-m\s]+"])
def test_an_ascii_texts_keys_found_by_one_trie_are_the_runs_looked_up_one_by_one(pattern):
    """For a word pattern that is one character list repeated, an ASCII
    text's runs that are keys are found by one search of a trie of the keys
    (ascii_keys_finder) instead of every run looked up: the same runs, as
    written, in the same order, whatever the list holds (a key with a
    character the list lacks, a list without the lower-case letters)."""
    word_re = regex.compile(pattern, regex.V0)
    table = WordTable()
    for w in ("never", "not", "don't", "e.g", "must not", "a", "NO", "x-ray", "it's", "z"):
        table.add(w, "x")
    keys = KeyScan(word_re, table.compiled())
    assert keys._keys is not None
    ascii_chars = "".join(map(chr, range(128)))
    texts = [t for t in _texts() if t.isascii()] + [
        "".join(f"not{c}NOT{c}{c}never{c}x-ray{c}e.g{c}" for c in ascii_chars),
        "Never nevermind never_again DON'T e.g. must  not x.never a\x1cnever (never) it's'", "not", "", "zz z"]
    for text in texts:
        fast = list(keys.scan(text))
        keys_finder, keys._keys = keys._keys, None
        assert fast == list(keys.scan(text)), text[:80]
        keys._keys = keys_finder
    assert KeyScan(regex.compile(WORD_PATTERN, regex.V0), table.compiled())._keys is None  # not one list: run by run
