"""The last `window` messages stay.  The runner applies this step after the
others (deferred) so that one pass over the messages serves every window
size a token budget tries; a message is protected by it only when no
earlier step decided it."""

from .base import PRESERVE, Decision, Step


class RecencyStep(Step):
    deferred = True

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.window = spec.window

    def decision(self):
        return Decision(PRESERVE, self.name)
