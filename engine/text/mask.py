"""The protection mask: sorted, disjoint spans that no transform may change.

A transform proposes edits (start, end, replacement) on the current text; the
mask answers whether an edit touches a protected span (bisection, O(log n)),
and after the edits are applied the mask is carried over to the new text in
one merge walk (O(spans + edits)).
"""

from bisect import bisect_right
from typing import NamedTuple


class Span(NamedTuple):
    start: int
    end: int
    category: str


class Edit(NamedTuple):
    start: int
    end: int
    text: str
    label: str = ""  # which rule of a transform made it (for explain)


class Mask:
    __slots__ = ("spans", "_starts")

    def __init__(self, spans=()):
        self.spans = list(spans)
        self._starts = [s.start for s in self.spans]

    @classmethod
    def from_matches(cls, matches):
        """Build from possibly overlapping (start, end, category) triples.

        Overlaps are merged into one span labelled by its earliest member, so
        protection is the union of everything any category found.
        """
        merged = []
        for start, end, cat in sorted(matches, key=lambda m: (m[0], -m[1])):
            if end <= start:
                continue
            if merged and start < merged[-1].end:
                last = merged[-1]
                if end > last.end:
                    merged[-1] = Span(last.start, end, last.category)
                continue
            merged.append(Span(start, end, cat))
        return cls(merged)

    def category_at(self, pos):
        """The category of the span holding position pos, or None."""
        i = bisect_right(self._starts, pos) - 1
        if i >= 0 and pos < self.spans[i].end:
            return self.spans[i].category
        return None

    def blocking(self, start, end, allow=frozenset()):
        """True if changing text[start:end] (or inserting at start when empty)
        would alter a protected span whose category is not in allow."""
        spans = self.spans
        i = max(bisect_right(self._starts, start) - 1, 0)
        n = len(spans)
        while i < n:
            s = spans[i]
            if start == end:
                # An insertion alters a span only when strictly inside it.
                if s.start >= start:
                    return False
                if start < s.end and s.category not in allow:
                    return True
            else:
                if s.start >= end:
                    return False
                if s.end > start and s.category not in allow:
                    return True
            i += 1
        return False

    def apply(self, text, edits):
        """Apply sorted, disjoint edits to text; return (new_text, new_mask, dropped).

        Spans inside an edit (possible only for allowed categories) are dropped
        and returned, so callers can report what was replaced by design.
        """
        if not edits:
            return text, self, []
        out = []
        pos = 0
        # shifts: (old_position, delta_after) checkpoints for remapping spans
        checkpoints = []
        delta = 0
        for e in edits:
            out.append(text[pos:e.start])
            out.append(e.text)
            delta += len(e.text) - (e.end - e.start)
            checkpoints.append((e.start, e.end, delta))
            pos = e.end
        out.append(text[pos:])
        # A span no edit before it moved keeps its object; a moved one is
        # built with tuple.__new__ (no Python-level constructor call): this
        # walk runs once per transform over every protected span.
        spans = self.spans
        new_spans = []
        dropped = []
        new_starts = []
        make = tuple.__new__
        j = 0
        cur = 0
        ncp = len(checkpoints)
        for s in spans:
            start = s[0]
            while j < ncp and checkpoints[j][1] <= start:
                cur = checkpoints[j][2]
                j += 1
            # an edit that overlaps this span (only allowed categories get here)
            if j < ncp and checkpoints[j][0] < s[1] and checkpoints[j][1] > start:
                dropped.append(s)
                continue
            if cur:
                s = make(Span, (start + cur, s[1] + cur, s[2]))
            new_spans.append(s)
            new_starts.append(start + cur)
        mask = Mask.__new__(Mask)
        mask.spans = new_spans
        mask._starts = new_starts
        return "".join(out), mask, dropped
