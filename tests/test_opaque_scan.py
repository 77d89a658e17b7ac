"""The opaque scan past position 0 leaves out the categories that can match
only at the start of the text (frontmatter, `\\A...`): the same regions, one
branch fewer tried at every position of the text."""

import pytest

from engine.core.profile import load_profile
from engine.text.protect import CategorySource, Protector
from engine.text.regexutil import only_at_text_start

WORD = r"\w+"


@pytest.mark.parametrize("pattern,expected", [
    (r"\A---[ \t]*\n", True), (r"(?m)\Ax", True), (r"(?m:\A---)", True), (r"\A(?:a|b)", True),
    (r"\A--|x", False), (r"(?m:\Aa)|b", False), (r"a\A", False), (r"[\A]", False), (r"(?:\Aa)", False), (r"x", False),
])
def test_only_at_text_start(pattern, expected):
    assert only_at_text_start(pattern) is expected


def _protector(*sources):
    return Protector(list(sources), WORD, 1000)


FRONT = CategorySource("front", "opaque", [r"\A---[ \t]*\n(?:[\s\S]*?\n)?---[ \t]*(?:\n|\Z)"])
CODE = CategorySource("code", "opaque", [r"`[^`\n]+`"])
LINE = CategorySource("line", "opaque", [r"(?m:^---x)"])


def test_the_later_scan_leaves_the_text_start_category_out():
    p = _protector(FRONT, CODE, LINE)
    assert p._opaque_later is not p._opaque
    assert "front" not in str(p._opaque_later.pattern) and "o0" not in p._opaque_later.groupindex


TEXTS = [
    "", "---\n", "---\na: 1\n---\nbody `x` and\n---x\n", "`a` ---\n---\n", "---x\n---\n`b`",
    "text\n---\na\n---\n`c`", "---\n`code`\n---\n`d`", "---  \n\n---\n---x", "`---`\n---\n---\n",
]


@pytest.mark.parametrize("order", [(FRONT, CODE, LINE), (CODE, FRONT, LINE), (LINE, CODE, FRONT)])
def test_same_regions_as_the_whole_alternation(order):
    p = _protector(*order)
    for text in TEXTS + [t * 3 for t in TEXTS]:
        whole = [(m.span(), m.lastgroup) for m in p._opaque.finditer(text)]
        assert [(m.span(), m.lastgroup) for m in p._opaque_matches(text, None)] == whole, repr(text)


def test_builtin_frontmatter_is_left_out_past_the_start():
    p = load_profile(None, "standard").protector
    assert p._opaque_later is not p._opaque
    assert len(p._opaque_later.groupindex) < len(p._opaque.groupindex)
    text = "---\ntitle: x\n---\n# T\n\n---\nnot: front\n---\n`x`\n"
    assert [m.span() for m in p._opaque_matches(text, None)] == [m.span() for m in p._opaque.finditer(text)]
