"""Fires when lines of a shape (line_pattern) are at least min_lines and
min_share of the non-blank lines; with consecutive, min_lines of them must
follow each other."""

from .base import Detector, compile_pattern


class LinesDetector(Detector):
    def __init__(self, name, params, ctx):
        super().__init__(name, params, ctx)
        self._line = compile_pattern(params.line_pattern)
        self._min = params.min_lines
        self._share = params.min_share
        self._consecutive = params.consecutive

    def fires(self, text, memo):
        lines = [ln for ln in text.split("\n") if ln.strip()]
        if len(lines) < self._min:
            return False
        timeout = self._timeout(text)
        hits, run, best = 0, 0, 0
        for ln in lines:
            if self._line.search(ln, timeout=timeout):
                hits += 1
                run += 1
                best = max(best, run)
            else:
                run = 0
        if hits < self._min or hits < self._share * len(lines):
            return False
        return best >= self._min if self._consecutive else True
