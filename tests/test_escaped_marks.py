"""An escaped star or underscore ("\\*", "\\_") is a literal character, no
emphasis mark: bold and italic (light's, and aggressive's label passes) must
not take it for one.  They used to drop the star and leave its backslash
("\\*literal\\*" -> "\\literal\\"), and a second pass dropped more."""

import functools

import pytest

from engine.core.profile import load_profile
from engine.text.pipeline import compress

LEVELS = ("light", "standard", "aggressive", "vowels")

ESCAPED = [
    r"\*literal star\*",
    r"\_underscore\_",
    r"\*\*not bold\*\*",
    r"\_\_not bold\_\_",
]


@functools.lru_cache(maxsize=None)
def profile(level):
    return load_profile("default", level)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("escaped", ESCAPED)
def test_escaped_marks_come_through(level, escaped):
    out = compress(profile(level), f"Write {escaped} in the docs.\n").text
    assert escaped in out
    assert compress(profile(level), out).text == out


@pytest.mark.parametrize("level", ("aggressive", "vowels"))
def test_escaped_marks_in_a_label_come_through(level):
    doc = "# Guide\n\n## Use \\*stars\\* here\n\nRun it.\n"
    out = compress(profile(level), doc).text
    assert "\\*stars\\*" in out


@pytest.mark.parametrize("level", LEVELS)
def test_real_emphasis_still_goes(level):
    out = compress(profile(level), "Use **bold** and *it* and _this_.\n").text
    assert "*" not in out and "_" not in out
