"""Emphasis never changes what is protected: a negation in bold or italics is
found as the plain one is (`engine explain` lists its span), and a word the
author stressed keeps its marks."""

import pytest

from engine.core.profile import build


@pytest.fixture(scope="module")
def standard():
    return build("default", "standard")


@pytest.mark.parametrize("text, word", [("**Never** push to main.", "Never"), ("*Do not* merge.", "Do not"),
                                        ("The build **is not** green.", "is not")])
def test_a_negation_in_emphasis_is_a_negation_span(standard, text, word):
    spans = [(s.category, text[s.start:s.end]) for s in standard.protector.mask(text).spans]
    assert ("negations", word) in spans, spans


def test_a_stressed_filler_keeps_word_and_marks(standard):
    from engine.text.pipeline import compress

    assert compress(standard, "Humans _are_ the product.").text == "Humans _are_ product."
