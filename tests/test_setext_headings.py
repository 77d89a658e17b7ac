"""A setext heading ("Setup" over a line of "=" or "-") is a heading as
"## Setup" is: its underline is no horizontal rule for `rules` to drop (the
heading would become a paragraph), and its text is a heading's, which no
level rewrites (links and readers point at it)."""

import functools

import pytest

from engine.core.profile import load_profile
from engine.text.pipeline import compress

LEVELS = ("light", "standard", "aggressive", "vowels")

DOC = (
    "Intro text.\n\n"
    "Installing the dependencies\n===========================\n\n"
    "Run the build.\n\n"
    "Configuring the cache\n---\n\n"
    "Run the tests.\n"
)


@functools.lru_cache(maxsize=None)
def profile(level):
    return load_profile("default", level)


@pytest.mark.parametrize("level", LEVELS)
def test_a_dash_underline_stays_under_its_heading(level):
    out = compress(profile(level), DOC).text
    assert "Configuring the cache\n---\n" in out


@pytest.mark.parametrize("level", LEVELS)
def test_a_setext_headings_text_is_not_rewritten(level):
    out = compress(profile(level), DOC).text
    assert "Installing the dependencies\n===" in out
    assert "Configuring the cache\n---" in out


@pytest.mark.parametrize("level", LEVELS)
def test_a_rule_that_underlines_nothing_still_goes(level):
    doc = "Intro.\n\n---\n\nText\n***\n\nMore.\n\n- - -\n\nEnd.\n"
    out = compress(profile(level), doc).text
    assert "---" not in out and "***" not in out and "- - -" not in out


@pytest.mark.parametrize("level", LEVELS)
def test_setext_headings_are_a_fixed_point(level):
    once = compress(profile(level), DOC).text
    assert compress(profile(level), once).text == once
