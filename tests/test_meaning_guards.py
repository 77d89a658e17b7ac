"""The guards of issue 25 and what keeps them a fixed point.

- A word-list guard may name a class of words (`\\L<name>`, a dictionary's
  `lists:`), and `only_followed_by` says the context a word needs to go.
- A guard reads only words that no level removes, or reads them the same
  whether they are there or not: the lead-in words of a list, the adverbs
  of the copula guard (every hedge among them), the auxiliaries of the
  relative-clause guard.  Otherwise the first pass would decide on a word
  the same pass then removes, and the second pass would decide otherwise.
"""

import functools
import re
from pathlib import Path

import pytest
import yaml

from engine.core.profile import load_profile
from engine.text.pipeline import compress
from engine.text.wordscan import GuardSet, Runs

REPO = Path(__file__).resolve().parent.parent
LEVELS = ("light", "standard", "aggressive")


def dictionary(name):
    return yaml.safe_load((REPO / "dictionaries" / f"{name}.yaml").read_text(encoding="utf-8"))


def words_of(name):
    return {w["word"] if isinstance(w, dict) else w for w in dictionary(name)["words"]}


@functools.lru_cache(maxsize=None)
def profile(level):
    return load_profile("default", level)


RUNS = Runs(r"[^\s.,;:!?()\[\]{}\"']+")


def test_only_followed_by_lets_a_word_go_only_where_its_context_matches():
    guard = GuardSet(only_followed=r"[ \t]+(?:\L<shapes>)\b", lists={"shapes": ["round", "square"]})
    text = "box is round; box is blue"
    first, second = text.index("is"), text.rindex("is")
    assert not guard.blocks(text, first, first + 2, RUNS)
    assert guard.blocks(text, second, second + 2, RUNS)
    assert guard.reads_next()


def test_a_named_list_is_matched_whole_and_unlisted_words_are_not():
    guard = GuardSet(followed=r"[ \t]+(?i:\L<kinds>)(?!\w)", lists={"kinds": ["tab", "tabs"]})
    for after, blocked in ((" Tabs now", True), (" tab", True), (" table", False), (" spaces", False)):
        text = "x" + after
        assert guard.blocks(text, 0, 1, RUNS) is blocked, after


def test_no_level_removes_a_lead_in_word():
    """The list's lead-in holds the same words on every pass: the first pass
    keeps the markers for a word the second must find again."""
    for word in sorted(words_of("list_lead_ins")):
        text = f"Reviewers {word} merge these:\n- Rebase the branch\n- Squash the fixups\n"
        for level in LEVELS:
            out = compress(profile(level), text).text
            assert re.search(rf"(?<![\w'’]){re.escape(word)}(?![\w'’])", out, re.I), (level, word, out)
            assert "\n- Rebase" in out, (level, word, out)


def test_every_hedge_is_an_adverb_and_no_part_of_a_noun_phrase():
    """Aggressive removes a hedge after standard's guards read it: the copula
    guard skips it ("is very slow" and "is slow" decide alike), and the
    relative-clause guard never counts it as a word of the phrase."""
    lists = dictionary("fillers")["lists"]
    hedges = words_of("hedges")
    assert hedges <= set(lists["adverbs"]), hedges - set(lists["adverbs"])
    assert hedges <= set(lists["joins"]), hedges - set(lists["joins"])
    assert {"a", "an", "the"} <= set(lists["joins"])


def test_the_relative_clause_guard_reads_no_word_the_fillers_remove():
    lists = dictionary("fillers")["lists"]
    removable = {w.lower() for w in words_of("fillers")}
    assert not removable & {w.lower() for w in lists["auxiliaries"]}


@pytest.mark.parametrize("level", ["standard", "aggressive"])
def test_a_copula_stays_where_its_article_goes_before_an_adjective(level):
    """"is often a flaky test": the article stays, so the copula is judged
    before a determiner on both passes."""
    out = compress(profile(level), "The suite is often a flaky mess.\n").text
    assert "is often a flaky" in out, out
    assert compress(profile(level), out).text == out
