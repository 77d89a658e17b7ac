"""Keyword density with anchors (SQL): a strong anchor or a statement shape
alone fires; otherwise at least min_keywords distinct keywords, one of them
a weak anchor."""

import regex

from .base import Detector, compile_pattern


def _words_pattern(words, case_sensitive):
    alts = "|".join(r"\s+".join(regex.escape(p) for p in w.split()) for w in sorted(words, key=len, reverse=True))
    return regex.compile(rf"(?<![\w]){'(?:' if case_sensitive else '(?i:'}{alts})(?![\w])" if alts else r"(?!)", regex.V0)


class KeywordsDetector(Detector):
    def __init__(self, name, params, ctx):
        super().__init__(name, params, ctx)
        cs = params.case_sensitive
        self._cs = cs
        self._strong = _words_pattern(params.strong, cs)
        self._keywords = _words_pattern(params.keywords, cs)
        self._weak = {self._norm(w) for w in params.weak}
        self._min = params.min_keywords
        self._statements = [compile_pattern(p) for p in params.statement_patterns]

    def _norm(self, word):
        word = " ".join(word.split())
        return word if self._cs else word.upper()

    def fires(self, text, memo):
        timeout = self._timeout(text)
        if self._strong.search(text, timeout=timeout):
            return True
        if any(p.search(text, timeout=timeout) for p in self._statements):
            return True
        found = {self._norm(m.group()) for m in self._keywords.finditer(text, timeout=timeout)}
        return len(found) >= self._min and bool(found & self._weak)
