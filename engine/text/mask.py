"""The protection mask: sorted, disjoint spans that no transform may change.

A transform proposes edits (start, end, replacement) on the current text; the
mask answers whether an edit touches a protected span (bisection, O(log n)),
and after the edits are applied the mask is carried over to the new text in
one walk over the edits (O(spans + edits)).

The spans are kept as three parallel lists (starts, ends, categories): a
transform's edits move every span after them, and moving a run of plain
integers is a C loop (map), where moving Span tuples one by one was most of
the cost of applying edits to a long text.
"""

from bisect import bisect_left, bisect_right
from itertools import repeat
from operator import add, itemgetter
from typing import NamedTuple

_START = itemgetter(0)
_END = itemgetter(1)


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
    __slots__ = ("_starts", "_ends", "_cats")

    def __init__(self, spans=()):
        spans = list(spans)
        self._starts = [s[0] for s in spans]
        self._ends = [s[1] for s in spans]
        self._cats = [s[2] for s in spans]

    @property
    def spans(self):
        """The spans as Span tuples, in order."""
        return list(map(Span._make, zip(self._starts, self._ends, self._cats)))

    @classmethod
    def _of(cls, starts, ends, cats):
        mask = cls.__new__(cls)
        mask._starts, mask._ends, mask._cats = starts, ends, cats
        return mask

    @classmethod
    def from_matches(cls, matches):
        """Build from possibly overlapping (start, end, category) triples.

        Overlaps are merged into one span labelled by its earliest member, so
        protection is the union of everything any category found.
        """
        # (start, longest first), input order kept among equals: two stable
        # sorts with C keys, the second deciding
        ordered = sorted(sorted(matches, key=_END, reverse=True), key=_START)
        starts, ends, cats = [], [], []
        last_end = None
        for start, end, cat in ordered:
            if end <= start:
                continue
            if last_end is not None and start < last_end:
                if end > last_end:
                    ends[-1] = last_end = end
                continue
            starts.append(start)
            ends.append(end)
            cats.append(cat)
            last_end = end
        return cls._of(starts, ends, cats)

    def with_matches(self, matches):
        """The mask from_matches makes of this mask's spans followed by more
        (start, end, category) triples, made where they fall only: the
        spans they overlap (and those between) are merged again with them,
        the rest are copied as runs (a few new tokens in a long text cost
        no rebuild of its hundreds of thousands of spans)."""
        found = sorted((m for m in matches if m[1] > m[0]), key=_START)
        starts, ends, cats = self._starts, self._ends, self._cats
        out_s, out_e, out_c = [], [], []
        done, k, n = 0, 0, len(found)
        while k < n:
            # a cluster: new triples that overlap one another or the same
            # spans, and the spans from the first they overlap to the last
            first, top = bisect_right(ends, found[k][0]), bisect_left(starts, found[k][1])
            reach = found[k][1]
            group = [found[k]]
            k += 1
            while k < n and found[k][0] < max(reach, ends[top - 1] if top > first else reach):
                top = max(top, bisect_left(starts, found[k][1]))
                reach = max(reach, found[k][1])
                group.append(found[k])
                k += 1
            top = max(top, first)
            out_s += starts[done:first]
            out_e += ends[done:first]
            out_c += cats[done:first]
            local = Mask.from_matches([*zip(starts[first:top], ends[first:top], cats[first:top]), *group])
            out_s += local._starts
            out_e += local._ends
            out_c += local._cats
            done = top
        out_s += starts[done:]
        out_e += ends[done:]
        out_c += cats[done:]
        return Mask._of(out_s, out_e, out_c)

    def texts(self, text):
        """[(category, protected text)] in order."""
        return list(zip(self._cats, map(text.__getitem__, map(slice, self._starts, self._ends))))

    def category_at(self, pos):
        """The category of the span holding position pos, or None."""
        i = bisect_right(self._starts, pos) - 1
        if i >= 0 and pos < self._ends[i]:
            return self._cats[i]
        return None

    def blocking(self, start, end, allow=frozenset()):
        """True if changing text[start:end] (or inserting at start when empty)
        would alter a protected span whose category is not in allow."""
        starts, ends, cats = self._starts, self._ends, self._cats
        i = max(bisect_right(starts, start) - 1, 0)
        n = len(starts)
        while i < n:
            s = starts[i]
            if start == end:
                # An insertion alters a span only when strictly inside it.
                if s >= start:
                    return False
                if start < ends[i] and cats[i] not in allow:
                    return True
            else:
                if s >= end:
                    return False
                if ends[i] > start and cats[i] not in allow:
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
        starts, ends, cats = self._starts, self._ends, self._cats
        n = len(starts)
        out = []
        new_starts, new_ends, new_cats, dropped = [], [], [], []
        pos = 0
        delta = 0  # the shift of everything after the edits seen so far
        a = 0  # the first span not carried over yet
        # An edit moves the spans that start at or after its end.  The spans
        # that start before it (and after the one before it) move by the
        # shift of the edits before: they go over as one slice.  Of those,
        # the ones ending after the edit's start overlap it (an insertion:
        # hold it strictly inside) and are dropped.
        for e in edits:
            es, ee, new = e[0], e[1], e[2]
            out.append(text[pos:es])
            out.append(new)
            if a < n and starts[a] < ee:
                b = bisect_left(starts, ee, a)
                c = b
                while c > a and ends[c - 1] > es:
                    c -= 1
                if c > a:
                    if delta:
                        new_starts.extend(map(add, starts[a:c], repeat(delta)))
                        new_ends.extend(map(add, ends[a:c], repeat(delta)))
                    else:
                        new_starts.extend(starts[a:c])
                        new_ends.extend(ends[a:c])
                    new_cats.extend(cats[a:c])
                if c < b:
                    dropped.extend(map(Span._make, zip(starts[c:b], ends[c:b], cats[c:b])))
                a = b
            delta += len(new) - (ee - es)
            pos = ee
        out.append(text[pos:])
        if a < n:
            if delta:
                new_starts.extend(map(add, starts[a:], repeat(delta)))
                new_ends.extend(map(add, ends[a:], repeat(delta)))
            else:
                new_starts.extend(starts[a:])
                new_ends.extend(ends[a:])
            new_cats.extend(cats[a:])
        return "".join(out), Mask._of(new_starts, new_ends, new_cats), dropped
