"""The meaning suite: sentences whose meaning-carrying words (marked in
tests/meaning/*.yaml) must survive, whole and in order, at every level.

Protected tokens surviving is necessary, not sufficient: these words are the
prepositions, particles, scope and order words, clause openers, quoted
strings, names and structure marks that a compression could drop without
touching a protected span.  Each case runs through the built-in profile.
"""

import functools
import re
from pathlib import Path

import pytest

from engine.core import schema
from engine.core.profile import load_profile
from engine.core.yamlload import load_file
from engine.text.pipeline import compress

HERE = Path(__file__).resolve().parent / "meaning"
LEVELS = ("off", "light", "standard", "aggressive")


def load_cases():
    out = []
    for path in sorted(HERE.glob("*.yaml")):
        doc = load_file(path)
        schema.require_valid(doc, "meaning")
        for i, case in enumerate(doc.data["cases"]):
            out.append(pytest.param(case, id=f"{path.stem}-{i}"))
    return out


CASES = load_cases()


@functools.lru_cache(maxsize=None)
def profile(level):
    return load_profile("default", level)


def missing_in_order(words, text):
    """The words not found whole, in this order, in text."""
    missing, pos = [], 0
    for w in words:
        m = re.compile(r"(?<![\w])" + re.escape(w) + r"(?![\w])").search(text, pos)
        if m is None:
            missing.append(w)
            continue
        pos = m.end()
    return missing


def test_the_suite_is_large_enough():
    assert len(CASES) >= 150


def test_the_helper_sees_order_and_whole_words():
    assert missing_in_order(["to", "on"], "move to x on y") == []
    assert missing_in_order(["on", "to"], "move to x on y") == ["to"]
    assert missing_in_order(["in"], "within") == ["in"]


def test_every_input_keeps_its_own_words():
    # a case whose marks are not in its own text tests nothing
    for p in CASES:
        case = p.values[0]
        assert missing_in_order(case["keep"], case["text"]) == [], case


@pytest.mark.parametrize("case", CASES)
def test_meaning_words_survive_every_level(case, api_env):
    for level in case.get("levels", LEVELS):
        out = compress(profile(level), case["text"]).text
        assert missing_in_order(case["keep"], out) == [], f"level {level}: {case['text']!r} -> {out!r}"
        for bad in case.get("absent", ()):
            assert bad not in out, f"level {level}: {case['text']!r} -> {out!r} holds {bad!r}"
