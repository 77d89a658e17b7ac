"""A horizontal rule ("***", "- - -") ends the block above it.  `rules`
drops it before `bullets` reads the lists, and a rule right under a line of
text leaves a blank line: the next line must not become part of a list item
above it ("- item" / "***" / "Next." -> "item Next."), and a second pass
must read the blocks the first one left."""

import functools

import pytest

from engine.core.profile import load_profile
from engine.text.pipeline import compress

LEVELS = ("light", "standard", "aggressive")


@functools.lru_cache(maxsize=None)
def profile(level):
    return load_profile("default", level)


@pytest.mark.parametrize("level", LEVELS)
def test_a_paragraph_after_a_rule_stays_out_of_the_item_above(level):
    out = compress(profile(level), "- Run the item\n***\nNext para.\n").text
    assert "\n\nNext para." in out, out
    assert "***" not in out


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("text", [
    "- the item\n- - -\n",
    "Text.\n\n- - -\n  - nested item\n",
    "Intro.\n\n  - the nested\n- - -\n  - the other\n",
    "Para one.\n***\nPara two.\n",
    # a line of dashes under a rule is a rule too (a rule underlines nothing)
    "<!-- c -->\n- - -\n---\ntext\n",
    "Text\n***\n---\nMore\n",
])
def test_rules_and_lists_are_a_fixed_point(level, text):
    once = compress(profile(level), text).text
    assert compress(profile(level), once).text == once
    assert "- - -" not in once and "***" not in once
