"""Your own preserve patterns: a match keeps the message word for word.
Each pattern runs under timeout_ms (the `regex` module's timeout): a pattern
that runs away counts as no match and is reported in the stats."""

from .base import PRESERVE, Decision, Step


class PatternsStep(Step):
    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        from ..detectors.base import compile_pattern

        self.timeout = spec.timeout_ms / 1000.0
        self.patterns = []
        for i, p in enumerate(spec.patterns):
            self.patterns.append((p.label, ctx.compiled(compile_pattern, p.pattern, ctx.step + ("patterns", i, "pattern"))))

    def decide(self, v, run):
        text = run.text(v)
        for label, pattern in self.patterns:
            try:
                found = pattern.search(text, timeout=self.timeout)
            except TimeoutError:
                run.count("pattern_timeouts")
                continue
            if found:
                run.count("pattern_preserved")
                return Decision(PRESERVE, self.name, label)
        return None
