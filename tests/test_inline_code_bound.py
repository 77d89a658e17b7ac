"""inline_code, round 3 of issue 18: a one-backtick span's content is taken
whole by a class scan and its length checked once by a look-behind, where
the former lazy loop tried the closing backtick after every character.  The
spans must not move, at the 1000-character bound above all (random texts
are too short to reach it).  A span holds backtick runs of another length
than its own ("`a``b`"), as Markdown reads it: the reference reads so too."""

import itertools
import random
from pathlib import Path

import regex
import yaml

REPO = Path(__file__).resolve().parent.parent
# The reference: the former lazy loop, read as Markdown reads a code span
# (the content may hold backtick runs of another length than the opening
# one): a backtick is content where it starts a run that is not exactly the
# opening's length, or goes on with one; the closing run starts after no
# backtick.  One item a character, so the bound counts characters.
FORMER = (r"(?P<t>`(?<!``)`*+)(?:[^`\n]|\n(?![ \t]*\n)|(?<!`)(?!(?P=t)(?!`))`|(?<=`)`){1,1000}?"
          r"(?<!`)(?P=t)(?!`)")


def _current():
    data = yaml.safe_load((REPO / "protect" / "inline_code.yaml").read_text(encoding="utf-8"))
    return regex.compile(data["patterns"][0], regex.V0)


def _spans(p, text):
    return [m.span() for m in p.finditer(text)]


def test_spans_at_the_length_bound():
    former, current = regex.compile(FORMER, regex.V0), _current()
    assert current.pattern != FORMER
    pieces = ["a", "\n", "\n\n", "` ", " `", "``", " `` ", "```", "\n \n", "````", "a``b", " ``` "]
    # Each text is checked once: the loops below make some more than once
    # (size 1 has a single cut; the tails list repeats the opening run's
    # length), 20376 distinct texts of 38880.
    seen = set()
    for ticks in ("`", "``", "```"):
        for size in (1, 998, 999, 1000, 1001):
            for a, b in itertools.product(pieces, repeat=2):
                for cut in (0, size // 2, size - 1):
                    body = ("x" * size)[:cut] + a + ("y" * size)[cut:] + b
                    for tail in (ticks, ticks + "`", "`", "``", "```", ""):
                        text = "p " + ticks + body + tail + " q `z` r"
                        if text in seen:
                            continue
                        seen.add(text)
                        assert _spans(current, text) == _spans(former, text), (ticks, size, a, b, cut, tail)
    assert len(seen) > 2500


def test_runs_of_another_length_are_content():
    # "`a``b`" is one span, and so is "``a```b``"; a run of the opening's
    # length closes it, wherever it stands
    former, current = regex.compile(FORMER, regex.V0), _current()
    for text, spans in [("x `a``b` y", [(2, 8)]), ("x ``a```b`` y", [(2, 11)]), ("`a``", []),
                        ("``a`b``c``", [(0, 7)]), ("`a```b` `c`", [(0, 7), (8, 11)])]:
        assert _spans(current, text) == _spans(former, text) == spans, text


def test_random_texts_with_runs_of_every_length():
    former, current = regex.compile(FORMER, regex.V0), _current()
    rnd = random.Random(18)
    alphabet = ["`", "``", "```", "````", "a", " ", "\n", "\n\n", "\n \n", "b c"]
    for _ in range(20000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 25)))
        assert _spans(current, text) == _spans(former, text), repr(text)


def test_the_one_backtick_branch_scans_classes():
    # the speed-up itself: the content of a one-backtick span is a possessive
    # class scan, not a lazy loop tried after every character; its length is
    # checked once by a look-behind whose run is lazy (read backwards, it
    # stops at the opening backtick, not 1000 characters back)
    src = _current().pattern
    assert src.startswith("`(?<!``)(?!`)(?:[^`\\n]++"), src
    content, _, check = src.partition("(?<=")
    assert not any(lazy in content for lazy in ("}?", "*?", "+?")), content
    assert check.startswith("(?<!`)`(?!`)[\\s\\S]{1,1000}?)"), check
