"""Fires when characters of a set make up at least min_ratio of the text,
once the spans of ignore_categories and ignore_patterns are left out."""

from .base import Detector, compile_pattern


class CharRatioDetector(Detector):
    def __init__(self, name, params, ctx):
        super().__init__(name, params, ctx)
        self._chars = frozenset(params.chars)
        self._ratio = params.min_ratio
        self._min_chars = params.min_chars
        cats = params.ignore_categories
        self._scanner = ctx.scanner(cats) if cats else None
        self._ignore = [compile_pattern(p) for p in params.ignore_patterns]

    def fires(self, text, memo):
        if len(text) < self._min_chars:
            return False
        spans = list(self._scanner.spans(text, memo)) if self._scanner else []
        timeout = self._timeout(text)
        for p in self._ignore:
            spans.extend(m.span() for m in p.finditer(text, timeout=timeout))
        pieces, pos = [], 0
        for s, e in sorted(spans):
            if s > pos:
                pieces.append(text[pos:s])
            pos = max(pos, e)
        pieces.append(text[pos:])
        kept = "".join("".join(pieces).split())  # white space does not count
        special = sum(kept.count(ch) for ch in self._chars)
        return bool(kept) and special >= self._ratio * len(kept)
