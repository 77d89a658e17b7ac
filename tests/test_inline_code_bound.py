"""inline_code, round 3 of issue 18: a one-backtick span's content is taken
whole by a class scan and its length checked once by a look-behind, where
the former lazy loop tried the closing backtick after every character.  The
spans must not move, at the 1000-character bound above all (random texts
are too short to reach it)."""

import itertools
from pathlib import Path

import regex
import yaml

REPO = Path(__file__).resolve().parent.parent
FORMER = r"(?P<t>`(?<!``)`*+)(?:[^`\n]|\n(?![ \t]*\n)|(?<=[^`])`(?=[^`])){1,1000}?(?<!`)(?P=t)(?!`)"


def _current():
    data = yaml.safe_load((REPO / "protect" / "inline_code.yaml").read_text(encoding="utf-8"))
    return regex.compile(data["patterns"][0], regex.V0)


def _spans(p, text):
    return [m.span() for m in p.finditer(text)]


def test_spans_at_the_length_bound():
    former, current = regex.compile(FORMER, regex.V0), _current()
    assert current.pattern != FORMER
    pieces = ["a", "\n", "\n\n", "` ", " `", "``", " `` ", "```", "\n \n"]
    n = 0
    for ticks in ("`", "``", "```"):
        for size in (1, 999, 1000, 1001):
            for a, b in itertools.product(pieces, repeat=2):
                for cut in (0, size // 2, size - 1):
                    body = ("x" * size)[:cut] + a + ("y" * size)[cut:] + b
                    for tail in (ticks, ticks + "`", "`", "``", ""):
                        text = "p " + ticks + body + tail + " q `z` r"
                        assert _spans(current, text) == _spans(former, text), (ticks, size, a, b, cut, tail)
                        n += 1
    assert n > 2500


def test_the_one_backtick_branch_scans_classes():
    # the speed-up itself: the content of a one-backtick span is a possessive
    # class scan, not a lazy loop tried after every character
    src = _current().pattern
    assert src.startswith("`(?<!``)(?!`)(?:[^`\\n]++"), src
    assert "}?" not in src
