"""fenced_code takes its content a line at a time (issue 18, round 3): the
lazy [\\s\\S]*? of the former spelling tried the closing fence after every
character of the code.  The regions found are the former ones (an empty or
unclosed block included: both spellings try the longer content first)."""

import random
from pathlib import Path

import regex
import yaml

from testdata import corpus_files

REPO = Path(__file__).resolve().parent.parent
FORMER = r"(?m)^[ \t]*(?P<f>`{3,}+|~{3,}+)[^\n`]*+(?:\n[\s\S]*?)?(?:\n[ \t]*(?P=f)(?:(?<=`)`*+|(?<=~)~*+)[ \t]*$|\Z)"


def _current():
    data = yaml.safe_load((REPO / "protect" / "fenced_code.yaml").read_text(encoding="utf-8"))
    return data["patterns"][0]


def test_content_is_not_a_lazy_any_character_loop():
    assert "[\\s\\S]*?" not in _current()


def test_same_regions_as_the_former_spelling():
    current, former = regex.compile(_current(), regex.V0), regex.compile(FORMER, regex.V0)
    texts = [p.read_text(encoding="utf-8") for p in corpus_files()]
    texts += [p.read_text(encoding="utf-8") for p in sorted((REPO / "tests" / "golden").glob("*/*.md"))]
    rnd = random.Random(31)
    alphabet = ["```", "~~~", "````", "`", "\n", " ", "a", "py", "\n\n", "  ```", "~~~~", "\t", "```\n", "\n~~~"]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 16))) for _ in range(40000)]
    found = 0
    for text in texts:
        expected = [m.span() for m in former.finditer(text)]
        found += len(expected)
        assert [m.span() for m in current.finditer(text)] == expected, repr(text[:200])
    assert found
