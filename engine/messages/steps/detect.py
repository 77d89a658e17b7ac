"""Messages on which one of the named detectors fires stay; the reason is
the detector's name."""

from .base import PRESERVE, Decision, Step


class DetectStep(Step):
    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.detectors = [ctx.detector(name, ctx.step + ("detectors", i))
                          for i, name in enumerate(spec.detectors)]

    def decide(self, v, run):
        text, memo = run.text(v), run.memo(v)
        for d in self.detectors:
            if d.fires(text, memo):
                return Decision(PRESERVE, self.name, d.name)
        return None
