"""Fires when line lengths vary a lot (coefficient of variation at least
min_cv over at least min_lines non-blank lines), unless prose lines
(prose_line) make up max_prose_share of them or more: markdown prose has
uneven lines too and is not structure."""

import statistics

from .base import Detector, compile_pattern


class LineVarianceDetector(Detector):
    def __init__(self, name, params, ctx):
        super().__init__(name, params, ctx)
        self._min = params.min_lines
        self._cv = params.min_cv
        self._prose = compile_pattern(params.prose_line) if params.prose_line else None
        self._share = params.max_prose_share

    def fires(self, text, memo):
        lines = [ln for ln in text.split("\n") if ln.strip()]
        if len(lines) < self._min:
            return False
        lengths = [len(ln) for ln in lines]
        mean = statistics.fmean(lengths)
        if not mean or statistics.pstdev(lengths) / mean < self._cv:
            return False
        if self._prose is not None:
            timeout = self._timeout(text)
            prose = sum(1 for ln in lines if self._prose.search(ln, timeout=timeout))
            if prose >= self._share * len(lines):
                return False
        return True
