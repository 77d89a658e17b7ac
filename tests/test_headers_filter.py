"""light/headers matches only a heading that changes (issue 18, round 3): a
heading already in form ("## Title") cost a match and an edit comparison per
heading of the text.  The edits are those of the former spelling."""

import random
from pathlib import Path

import regex
import yaml

from engine.text.transforms.regex_replace import group_edits, parse_template
from testdata import corpus_files

REPO = Path(__file__).resolve().parent.parent
FORMER = r"(?m)^[ \t]{0,3}(?P<marks>#{1,6})[ \t]+(?P<title>[^\n]*?[^\s#])(?:[ \t]+#+)?[ \t]*$"


def _spec():
    level = yaml.safe_load((REPO / "pipelines" / "levels" / "light.yaml").read_text(encoding="utf-8"))
    return next(t for t in level["transforms"] if t["name"] == "headers")


def _edits(pattern, pieces, text):
    out = []
    for m in pattern.finditer(text):
        out.extend(e for e in group_edits(m, pieces) if text[e.start:e.end] != e.text)
    return out


def test_a_heading_in_form_is_not_matched():
    current = regex.compile(_spec()["pattern"], regex.V0)
    for text in ("## Title", "# A b c", "###### x", "## C# and F#"):
        assert current.search(text) is None, text
    for text in (" ## Title", "##  Title", "##\tTitle", "## Title ##", "## Title ", "## Title\t#"):
        assert current.search(text) is not None, text


def test_same_edits_as_the_former_spelling():
    spec = _spec()
    pieces = parse_template(spec["replace"])
    current, former = regex.compile(spec["pattern"], regex.V0), regex.compile(FORMER, regex.V0)
    texts = [p.read_text(encoding="utf-8") for p in corpus_files()]
    texts += [p.read_text(encoding="utf-8") for p in sorted((REPO / "tests" / "golden").glob("*/*.md"))]
    rnd = random.Random(18)
    alphabet = ["#", "##", "#######", " ", "\t", "a", "#a", "\n", "C#", " #", "x y", "  ", "\u00e9"]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 14))) for _ in range(30000)]
    changed = 0
    for text in texts:
        expected = _edits(former, pieces, text)
        changed += len(expected)
        assert _edits(current, pieces, text) == expected, repr(text[:200])
    assert changed
