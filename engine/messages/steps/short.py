"""Messages under max_chars stay: a summary would save nothing."""

from .base import PRESERVE, Decision, Step


class ShortStep(Step):
    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.max_chars = spec.max_chars

    def decide(self, v, run):
        if len(run.text(v)) < self.max_chars:
            return Decision(PRESERVE, self.name)
        return None
