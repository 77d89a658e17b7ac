"""aggressive's header_labels makes a "Title:" line of a heading only where
the heading opens a block (after a blank line, another heading or the
text's start): a label right under a list item or a paragraph would
continue it ("- Run it" over "# Title" -> one item "Run it Title: ..." on
the next pass)."""

import functools

import pytest

from engine.core.profile import load_profile
from engine.text.pipeline import compress


@functools.lru_cache(maxsize=None)
def profile(level):
    return load_profile("default", level)


@pytest.mark.parametrize("level", ("aggressive", "vowels"))
@pytest.mark.parametrize(("text", "heading"), [
    ("- Run the item\n# Title\nSetup the thing\n", "\n# Title\n"),
    ("Intro text here.\n## Part\nSetup the thing\n\n# Other\n\ntext\n", "\n## Part\n"),
])
def test_a_heading_under_text_stays_a_heading(level, text, heading):
    once = compress(profile(level), text).text
    assert heading in once, once
    assert compress(profile(level), once).text == once


@pytest.mark.parametrize("level", ("aggressive", "vowels"))
def test_a_heading_that_opens_a_block_is_still_labelled(level):
    out = compress(profile(level), "# Guide\n## Part\nSetup the thing\n\n# Next\n\n## Two\n\nMore.\n").text
    assert "\nPart:\n" in out and "\nTwo:\n" in out, out
