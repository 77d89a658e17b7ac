"""Deterministic, extractive summaries with their references kept.

Sentences are scored (first sentence, constraints, references, questions:
weights in YAML) and picked best first while they fit a budget that scales
with the prose length; picked sentences keep their order.  Sentences holding
a negation (must_keep_categories) are picked before any other, every one,
even past the budget and max_share (a summary no shorter than its text is
not used: the text stays whole).
Every reference (inline code, URL, path, identifier, number...) of the text
that the picked sentences do not already hold goes into the entity suffix,
so nothing a later turn may point at is lost from view.
"""

from bisect import bisect_left

import regex

from engine.text import regexutil

_SPACE = regex.compile(r"\s+")


class _Within:
    """Counts the spans lying inside [s, e), by bisection on their starts."""

    def __init__(self, spans):
        self.spans = sorted(spans)
        self.starts = [a for a, _ in self.spans]

    def count(self, s, e):
        lo, hi = bisect_left(self.starts, s), bisect_left(self.starts, e)
        return sum(1 for a, b in self.spans[lo:hi] if b <= e)


class Summarizer:
    def __init__(self, cfg, ctx, path=("summary",)):
        self.budget = cfg["budget"]
        self.split = ctx.compiled(lambda s: regex.compile(regexutil.scoped(s), regex.V0), cfg["sentence_split"],
                                  path + ("sentence_split",), check=regexutil.check)
        self.keep = ctx.scanner(cfg["keep_categories"], path + ("keep_categories",))
        self.must = ctx.scanner(cfg["must_keep_categories"], path + ("must_keep_categories",))
        self.max_share = cfg["budget"]["max_share"]
        self.entities = ctx.scanner(cfg["entity_categories"], path + ("entity_categories",))
        self.w = cfg["weights"]
        self.max_sentence = cfg["max_sentence_chars"]
        self.joiner = cfg["joiner"]
        self._timeout = ctx.timeout_for

    def sentences(self, text):
        """[(start, end)] of the non-blank sentences."""
        out, pos = [], 0
        for m in self.split.finditer(text, timeout=self._timeout(text)):
            if m.start() > pos:
                out.append((pos, m.start()))
            pos = max(pos, m.end())
        out.append((pos, len(text)))
        spans = []
        for s, e in out:
            chunk = text[s:e]
            lead = len(chunk) - len(chunk.lstrip())
            trail = len(chunk.rstrip())
            if trail > lead:
                spans.append((s + lead, s + trail))
        return spans

    def limit(self, length):
        b = self.budget
        return int(min(b["max_chars"], max(b["min_chars"], length * b["ratio"]), length * b["max_share"]))

    def references(self, text, memo=None):
        """Distinct reference strings of the text, in order; a span inside a
        longer one (a number inside a path) is not a reference of its own."""
        spans = sorted(self.entities.spans(text, memo), key=lambda se: (se[0], -se[1]))
        out, end = {}, -1
        for s, e in spans:
            if e <= end:
                continue
            end = max(end, e)
            ref = text[s:e].strip()
            if ref:
                out.setdefault(ref, None)
        return list(out)

    def summarize(self, text, memo=None):
        """(summary, references left out of it)."""
        sents = self.sentences(text)
        keep_spans = _Within(self.keep.spans(text, memo))
        must_spans = _Within(self.must.spans(text, memo))
        ent_spans = _Within(self.entities.spans(text, memo))
        w = self.w
        scored = []
        for n, (s, e) in enumerate(sents):
            score = w["first_sentence"] if n == 0 else 0.0
            if keep_spans.count(s, e):
                score += w["keep"]
            ents = ent_spans.count(s, e)
            score += min(w["max_entity_bonus"], ents * w["entity"])
            if text[e - 1:e] == "?":
                score += w["question"]
            scored.append((-score, n))
        budget = self.limit(len(text))
        chosen, used, seen = [], 0, set()
        # negations first, every one, past the budget and max_share if need be: a summary
        # without one would turn a constraint around (a marker no shorter than its text
        # leaves the text whole: engine/messages/run.py)
        for n, (s, e) in enumerate(sents):
            size = e - s + (len(self.joiner) if chosen else 0)
            if must_spans.count(s, e) and text[s:e] not in seen:
                seen.add(text[s:e])
                chosen.append(n)
                used += size
        for _, n in sorted(scored):
            s, e = sents[n]
            size = e - s + (len(self.joiner) if chosen else 0)
            if e - s > self.max_sentence or used + size > budget or text[s:e] in seen:
                continue  # too long, over the budget, or said already
            seen.add(text[s:e])
            chosen.append(n)
            used += size
        if not chosen and sents:  # every sentence too long: the start of the first, cut at a word
            s, e = sents[0]
            cut = text[s:min(e, s + budget)]
            if e - s > budget and " " in cut:
                cut = cut[:cut.rindex(" ")]
            summary = _SPACE.sub(" ", cut).strip() + "…"
        else:
            summary = self.joiner.join(_SPACE.sub(" ", text[sents[n][0]:sents[n][1]]) for n in sorted(chosen))
        refs = [r for r in self.references(text, memo) if r not in summary]
        return summary, refs
