"""Fires when patterns match at least min_matches times; with min_entropy,
only matches of that many bits per character count (random keys, not words)."""

import math
from collections import Counter

from .base import Detector, compile_pattern


def entropy(s):
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


class PatternDetector(Detector):
    def __init__(self, name, params, ctx):
        super().__init__(name, params, ctx)
        self._patterns = [compile_pattern(p) for p in params.patterns]
        self._min = params.min_matches
        self._entropy = params.min_entropy

    def fires(self, text, memo):
        found = 0
        timeout = self._timeout(text)
        for p in self._patterns:
            for m in p.finditer(text, timeout=timeout):
                if self._entropy is None or entropy(m.group()) >= self._entropy:
                    found += 1
                    if found >= self._min:
                        return True
        return False
