"""trailing_blanks starts from the line break (issue 18, round 3): the former
pattern opened with a look-behind and was tried at every position of the
text.  The blanks before the break are a look-behind group where the change
starts (regex transforms: match_start); the blanks at the very end of the
text, with no break after them, are trailing_blanks_end's.  Together they
remove what the former pattern removed, protected spans respected."""

import random
from pathlib import Path
from types import SimpleNamespace

import regex
import yaml

from engine.core import specs
from engine.core.compile import TRANSFORM
from engine.text.mask import Mask
from engine.text.transforms.regex_replace import RegexReplace, match_start

REPO = Path(__file__).resolve().parent.parent
FORMER = {"name": "trailing_blanks", "kind": "regex", "pattern": r"(?m)(?<![ \t])[ \t]+$", "replace": ""}
RUN = SimpleNamespace(timeout_ms_per_mb=10_000)


def _specs():
    level = yaml.safe_load((REPO / "pipelines" / "levels" / "light.yaml").read_text(encoding="utf-8"))
    return [t for t in level["transforms"] if t["name"] in ("trailing_blanks", "trailing_blanks_end")]


def _run(transforms, text, mask):
    for t in transforms:
        text, mask, _ = mask.apply(text, t.edits(text, mask, RUN))
    return text


def test_the_pattern_opens_with_the_line_break():
    first = _specs()[0]["pattern"]
    assert first.startswith("(?P<nl>\\n)"), first
    assert [s["name"] for s in _specs()] == ["trailing_blanks", "trailing_blanks_end"]


def test_a_look_behind_group_moves_the_start_back():
    m = regex.compile(r"(?P<nl>\n)(?<=(?P<b>[ \t]++)\n)", regex.V0).search("ab  \ncd")
    assert m.start() == 4 and match_start(m, [2]) == 2 and match_start(m, []) == 4


def test_same_text_as_the_former_pattern():
    now = [RegexReplace(specs.build("level", TRANSFORM, spec), None) for spec in _specs()]
    former = [RegexReplace(specs.build("level", TRANSFORM, FORMER), None)]
    rnd = random.Random(4)
    alphabet = [" ", "\t", "\n", "a", "  ", "\n\n", " \n", "b c", "\r\n"]
    for _ in range(20000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 14)))
        spans = []
        if text and rnd.random() < 0.3:  # a protected span somewhere
            a = rnd.randrange(len(text))
            spans = [(a, min(len(text), a + rnd.randint(1, 4)), "inline_code")]
        mask = Mask.from_matches(spans)
        assert _run(now, text, mask) == _run(former, text, mask), repr(text)
