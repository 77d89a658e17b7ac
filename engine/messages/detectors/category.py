"""Fires when protect categories (protect/*.yaml) find a span in the text:
a category a user adds or widens counts here too."""

from .base import Detector


class CategoryDetector(Detector):
    def __init__(self, name, params, ctx):
        super().__init__(name, params, ctx)
        self._scanner = ctx.scanner(params.categories)
        self._min = params.min_matches

    def fires(self, text, memo):
        return len(self._scanner.spans(text, memo)) >= self._min
