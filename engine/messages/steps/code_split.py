"""Messages with code fences: the fences stay verbatim and the prose around
them is summarized when there is at least min_prose_chars of it; with less,
the whole message stays."""

from .base import CODE_SPLIT, PRESERVE, Decision, Step


class CodeSplitStep(Step):
    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.scanner = ctx.scanner([spec.category], ctx.step + ("category",))
        self.min_prose = spec.min_prose_chars

    def fences(self, text, memo):
        return self.scanner.spans(text, memo)

    def decide(self, v, run):
        text, memo = run.text(v), run.memo(v)
        spans = self.fences(text, memo)
        if not spans:
            return None
        prose, pos = 0, 0
        for s, e in spans:
            prose += len(text[pos:s].strip())
            pos = e
        prose += len(text[pos:].strip())
        if prose >= self.min_prose:
            return Decision(CODE_SPLIT, self.name)
        return Decision(PRESERVE, self.name, "little prose")
