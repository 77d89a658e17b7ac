"""KeyScan unifies the apostrophes of a whole text at once (two str.replace)
when the word pattern's character lists hold all three or none of them; the
runs found and the words given back are those of the per-run translation."""

from pathlib import Path

import regex
import yaml

from engine.text.wordscan import KeyScan, _apostrophes_alike

REPO = Path(__file__).resolve().parent.parent
WORD = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8"))["word_pattern"]


def test_which_patterns_may_unify():
    assert _apostrophes_alike(WORD)
    assert not _apostrophes_alike("[^\\s']+")  # ' ends a run, \u2019 does not
    assert not _apostrophes_alike("[a-z]+")  # a range: not read, so not trusted


def _scan(keys, text, unify):
    keys._unify = unify
    return list(keys.scan(text))


def test_same_hits_as_the_per_run_translation():
    table = {"don't": ["d"], "it's": ["i"], "never": ["n"], "caf\u00e9": ["c"]}
    keys = KeyScan(regex.compile(WORD, regex.V0), table)
    assert keys._unify
    text = ("Don\u2019t stop; it\u02bcs never caf\u00e9. don't IT'S never\u2019s \u2019never\u2019 "
            "x\u2019y Never, caf\u00e9\u2019s \U0001F600 it\u2019s\n") * 3
    got = _scan(keys, text, True)
    assert got == _scan(keys, text, False)
    assert [w for _, _, w, _ in got][:3] == ["Don't", "it's", "never"]
