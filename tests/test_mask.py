"""The protection mask (engine/text/mask.py) keeps its spans as parallel
lists and carries them over an edit a slice at a time (issue 18, a faster
word pass).  It must do exactly what a span-by-span walk does: the reference
below, on random spans and edits (insertions, deletions, replacements,
edits overlapping spans, edits at span edges)."""

import random

from engine.text.mask import Edit, Mask, Span


def _reference_apply(spans, text, edits):
    """Span by span: shift by the edits that end at or before its start,
    drop it when the next edit overlaps it (an insertion: strictly inside)."""
    out, pos, cps, delta = [], 0, [], 0
    for e in edits:
        out.append(text[pos:e.start])
        out.append(e.text)
        delta += len(e.text) - (e.end - e.start)
        cps.append((e.start, e.end, delta))
        pos = e.end
    out.append(text[pos:])
    kept, dropped, j, cur = [], [], 0, 0
    for s in spans:
        while j < len(cps) and cps[j][1] <= s.start:
            cur = cps[j][2]
            j += 1
        if j < len(cps) and cps[j][0] < s.end and cps[j][1] > s.start:
            dropped.append(s)
            continue
        kept.append(Span(s.start + cur, s.end + cur, s.category))
    return "".join(out), kept, dropped


def _reference_merge(matches):
    merged = []
    for start, end, cat in sorted(matches, key=lambda m: (m[0], -m[1])):
        if end <= start:
            continue
        if merged and start < merged[-1].end:
            if end > merged[-1].end:
                merged[-1] = Span(merged[-1].start, end, merged[-1].category)
            continue
        merged.append(Span(start, end, cat))
    return merged


def _random_case(rnd):
    n = rnd.randint(0, 60)
    text = "".join(rnd.choice("ab \n") for _ in range(n))
    spans, p = [], 0
    while True:
        p += rnd.randint(0, 5)
        length = rnd.randint(1, 5)
        if p + length > n:
            break
        spans.append(Span(p, p + length, rnd.choice("xy")))
        p += length
    edits, p = [], 0
    while True:
        p += rnd.randint(0, 6)
        length = rnd.choice([0, 0, 1, 2, 3])
        if p + length > n:
            break
        edits.append(Edit(p, p + length, rnd.choice(["", "Z", "ZZZ"])))
        p += length + (1 if length == 0 else 0)
    return text, spans, edits


def test_apply_carries_spans_as_a_span_walk_does():
    rnd = random.Random(18)
    for _ in range(5000):
        text, spans, edits = _random_case(rnd)
        new_text, mask, dropped = Mask(spans).apply(text, edits)
        ref_text, ref_kept, ref_dropped = _reference_apply(spans, text, edits)
        assert (new_text, mask.spans, dropped) == (ref_text, ref_kept, ref_dropped), (text, spans, edits)
        # the carried mask answers as a mask built from its spans does
        fresh = Mask(ref_kept)
        for pos in range(len(new_text) + 1):
            assert mask.category_at(pos) == fresh.category_at(pos)
            assert mask.blocking(pos, pos + 1) == fresh.blocking(pos, pos + 1)
            assert mask.blocking(pos, pos, {"x"}) == fresh.blocking(pos, pos, {"x"})


def _random_matches(rnd, most, last_start, shortest, longest, labels):
    """Up to `most` random (start, end, label) triples, empty and inverted ones too."""
    out = []
    for _ in range(rnd.randint(0, most)):
        start = rnd.randint(0, last_start)
        out.append((start, start + rnd.randint(shortest, longest), rnd.choice(labels)))
    return out


def test_from_matches_merges_overlaps_under_the_longest_first_label():
    rnd = random.Random(5)
    for _ in range(5000):
        matches = _random_matches(rnd, 12, 30, -1, 6, "xyz")
        assert Mask.from_matches(matches).spans == _reference_merge(matches), matches


def test_with_matches_is_from_matches_of_the_spans_and_the_new_triples():
    rnd = random.Random(6)
    for _ in range(5000):
        mask = Mask.from_matches(_random_matches(rnd, 12, 40, 0, 8, "abc"))
        new = _random_matches(rnd, 6, 40, -1, 10, "xyz")
        want = _reference_merge([*mask.spans, *new])
        assert mask.with_matches(new).spans == want, (mask.spans, new)


def test_texts_are_the_protected_texts_in_order():
    text = "keep `code` and ~/a/b here"
    mask = Mask.from_matches([(16, 21, "paths"), (5, 11, "inline_code")])
    assert mask.texts(text) == [("inline_code", "`code`"), ("paths", "~/a/b")]
    assert Mask().texts(text) == []
