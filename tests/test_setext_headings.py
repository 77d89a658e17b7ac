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


# The setext title pattern is found from the line break before its line
# (protect/headings.yaml `from_line_break`); these are the places where that
# break is not there to find, or where another category matches at the line
# start first.
SPANS = [
    ("Setup\n=====\nText.\n", "Setup"),  # the text's first line
    ("---\nname: x\n---\nSetup\n=====\n", "Setup"),  # front matter takes its closing line break
    ("Intro.\n\n    make build\nSetup\n-----\n", "Setup"),  # so does indented code
    ("Intro.\n\n```\ncode\n```\nSetup\n-----\n", "Setup"),
    ("## Setup ##\n---\n", "Setup"),  # an ATX heading over dashes: its marks stay out
    ("Intro.\nSetup <!-- note\n===\nText.\n", "Setup <!-- note"),  # the title, not an open comment
]


@pytest.mark.parametrize("text, title", SPANS)
def test_a_setext_title_is_protected_where_its_line_break_is_taken(text, title):
    spans = profile("standard").protector.mask(text).texts(text)
    assert ("headings", title) in spans


def _as_written(protector, text):
    """The opaque matches of the categories' alternation as written, tried at
    every position (what `from_line_break` must not change)."""
    first = protector._opaque.match(text, 0)
    pos = 0 if first is None else first.end()
    rest = protector._opaque_later.finditer(text, pos)
    return [(m.span(), m.lastgroup) for m in ([first] if first else []) + list(rest)]


def test_opaque_spans_are_those_of_the_alternation_as_written():
    import random

    protector = profile("standard").protector
    assert protector._opaque_fast is not None
    pieces = ["Title", "\n", "---", "===", "    code", "`x`", "<!--", "-->", "## h", "---\n", "\n\n", " ",
              "[a](b)", "```", "- ", "<b>", "#", "\t"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        found = [(m.span(), m.lastgroup) for m in protector._opaque_matches(text, 10)]
        assert found == _as_written(protector, text), text
