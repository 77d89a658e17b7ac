"""Exact and fuzzy duplicates.  A message whose text comes again later
becomes a reference to the last copy, which stays in place (and goes on
through the rules).  Fuzzy: texts of at least fuzzy_min_chars whose word
shingles overlap by fuzzy_threshold (Jaccard) or more.  Candidates come from
a bottom-k sketch of each text's shingles (deterministic crc32 hashes): a
later text sharing min_sketch_shared of the sketch, among the nearest
max_candidates per sketch entry, so the work stays linear in the number of
messages.  A fuzzy pair whose spans of keep_apart_categories differ (a
negation in one text only) is no pair: the reference would say the opposite."""

import heapq
import zlib
from collections import Counter

from .base import DUPLICATE, Decision, Step


class _WordIds(dict):
    """word -> its crc32 (UTF-8, a lone surrogate kept), computed the first
    time the word is seen: a text's ids are then one map() in C."""

    def __missing__(self, word):
        h = self[word] = zlib.crc32(word.encode("utf-8", "surrogatepass"))
        return h


class DuplicatesStep(Step):
    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.threshold = spec.fuzzy_threshold
        self.min_chars = spec.fuzzy_min_chars
        self.k = spec.shingle_words
        self.sketch = spec.sketch_size
        self.max_candidates = spec.max_candidates
        self.min_shared = spec.min_sketch_shared
        names = list(spec.keep_apart_categories)
        self.apart = ctx.scanner(names, ctx.step + ("keep_apart_categories",)) if names else None

    def _shingles(self, text, ids):
        """Hashes of the word k-grams.  A word's id is its crc32; a k-gram's
        hash is the hash of the tuple of ids, which (integers only) is the
        same in every process, so decisions do not depend on PYTHONHASHSEED."""
        seq = list(map(ids.__getitem__, text.lower().split()))
        k = self.k
        if len(seq) < k:
            return {hash(tuple(seq))}
        return set(map(hash, zip(*(seq[i:] for i in range(k)))))

    def _marks(self, run, i):
        """The spans of keep_apart_categories in message i, as a sorted
        tuple of lower-cased strings (order-free)."""
        if self.apart is None:
            return ()
        v = run.views[i]
        text = run.text(v)
        return tuple(sorted(text[s:e].lower() for s, e in self.apart.spans(text, run.memo(v))))

    def prepare(self, run):
        self.target = {}
        last = {}
        index, shingles, ids, reach = {}, {}, _WordIds(), {}
        for v in reversed(run.views):
            if not v.units:
                continue
            text = run.text(v).strip()
            if text in last:
                self.target[v.index] = (last[text], 1.0, True)
                continue
            last[text] = v.index
            if len(text) < self.min_chars:
                continue
            sh = self._shingles(text, ids)
            sketch = heapq.nsmallest(self.sketch, sh)
            best = self._nearest(run, v.index, sh, self._candidates(sketch, index), shingles)
            if best is not None:
                self.target[v.index] = (*best, False)
            self._remember(v.index, sh, sketch, index, shingles, reach)
        self.target = self._resolved(run, shingles, ids)

    def _candidates(self, sketch, index):
        """The nearest later texts sharing min_shared of the sketch (only
        those get an exact Jaccard), with how many entries they share."""
        shared = Counter()
        for h in sketch:
            shared.update(index.get(h, ())[::-1])  # nearest first (appended in falling order)
        return shared

    def _nearest(self, run, i, sh, shared, shingles):
        """(j, similarity) of the most alike candidate past the threshold
        (the nearest of equals), or None."""
        best = None
        for j, c in shared.items():
            if c < self.min_shared:
                continue
            other = shingles[j]
            small, large = sorted((len(sh), len(other)))
            if small < self.threshold * large:
                continue  # Jaccard cannot reach the threshold
            common = len(sh & other)
            sim = common / (len(sh) + len(other) - common)  # the union's size, without building it
            if sim >= self.threshold and (best is None or sim > best[1] or (sim == best[1] and j < best[0])) \
                    and self._marks(run, i) == self._marks(run, j):
                best = (j, sim)
        return best

    def _remember(self, i, sh, sketch, index, shingles, reach):
        """Index message i under its sketch.  Only the last max_candidates of
        an entry are ever candidates: an older one leaves the entry, and a
        message in no entry any more lets its shingles go (a reference
        resolved later computes them again), so the memory held is bounded
        by the entries, not by the number of messages."""
        shingles[i] = sh
        reach[i] = len(sketch)
        for h in sketch:
            entries = index.setdefault(h, [])
            entries.append(i)
            if len(entries) > self.max_candidates:
                gone = entries.pop(0)
                reach[gone] -= 1
                if not reach[gone]:
                    del reach[gone], shingles[gone]

    def _resolved(self, run, shingles, ids):
        """Each reference pointed at a copy that stays, not at another
        reference.  A pair is exact only when every link is (texts alike in
        every shingle may differ in case or spacing: /App vs /app); a fuzzy
        one is measured again against the copy it now names, and kept only
        when it still passes the threshold and the keep-apart check.
        Targets are later messages: resolved from the last, each names a
        copy already resolved."""
        final = {}
        for i in sorted(self.target, reverse=True):
            j, sim, exact = self.target[i]
            if j in final:
                k, _, also_exact = final[j]
                exact = exact and also_exact
                if not exact:
                    sim = self._similarity(run, i, k, shingles, ids)
                    if sim < self.threshold or self._marks(run, i) != self._marks(run, k):
                        continue  # not alike enough to what stays: decided by the later steps
                j = k
            final[i] = (j, sim, exact)
        return final

    def _similarity(self, run, i, k, shingles, ids):
        """Jaccard of the word shingles of messages i and k."""
        def of(n):
            got = shingles.get(n)
            return got if got is not None else self._shingles(run.text(run.views[n]).strip(), ids)

        a, b = of(i), of(k)
        return len(a & b) / len(a | b)

    def decide(self, v, run):
        hit = self.target.get(v.index)
        if hit is None:
            return None
        j, sim, exact = hit
        return Decision(DUPLICATE, self.name, "exact" if exact else "fuzzy", ref=j, similarity=sim)
