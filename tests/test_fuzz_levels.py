"""Fuzz: random and adversarial text through every level, each case under a
time limit.  Adversarial text is made of long runs of what the patterns look
for (markdown punctuation, backticks, stars, dots, slashes, spaces, unicode,
listed words); random text is any unicode.  Whatever comes in, compression
ends quickly without an error, and level off gives the text back unchanged.
"""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

LEVELS = ("off", "light", "standard", "aggressive")
CASE_SECONDS = 10.0  # a hang guard: one case is at most ~40 KB, linear code takes milliseconds (speed is in bench/)

PIECES = [
    "**", "*", "__", "_", "`", "```", "~~~", "```mermaid\n", ".", "/", "./", "~/", "..", " ", "  ", "\t", "\n", "\n\n",
    "    ", "#", "## ", "-", "- ", "--", "|", " | ", "[", "]", "(", ")", "](", "<", ">", "<!--", "-->", "@", ":", ",",
    "'", "\u2019", "\u00e9", "\u4e2d", "\U0001f600", "\r\n", "\ufeff", "a", "A", "1", "0x1f", "v1.2", "$X", "${",
    "http://", "www.", "sk-", "be", "to", "in", "the", "on", "must not", "in order to", "able", "README.md", "a_b",
]

run = st.tuples(st.sampled_from(PIECES), st.integers(min_value=1, max_value=400)).map(lambda t: t[0] * t[1])
adversarial = st.lists(run, min_size=1, max_size=60).map("".join)
random_text = st.text(max_size=2000)


@pytest.fixture(scope="module")
def profiles():
    from engine.core.profile import build  # compiled here, without the on-disk cache

    return {lv: build("default", lv) for lv in LEVELS}


def _check(profiles, text):
    from engine.text.pipeline import compress

    for lv, profile in profiles.items():
        start = time.perf_counter()
        out = compress(profile, text).text
        took = time.perf_counter() - start
        assert took < CASE_SECONDS, f"level {lv}: {took:.2f} s on {len(text)} characters: {text[:80]!r}"
        assert isinstance(out, str)
        if lv == "off":
            assert out == text


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=adversarial)
def test_adversarial_text_every_level(profiles, text):
    _check(profiles, text)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=random_text)
def test_random_text_every_level(profiles, text):
    _check(profiles, text)
