"""What every detector kind shares: its name (the reason it reports) and the
time budget its patterns run under."""

import regex

from engine.text import regexutil


class Detector:
    def __init__(self, name, params, ctx):
        self.name = name
        self.params = params
        self._timeout = ctx.timeout_for

    def fires(self, text, memo):
        """True when the text shows this structure.  memo: a dict shared by
        the detectors looking at one text (protect scans are done once)."""
        raise NotImplementedError


def compile_pattern(source, flags=0):
    """A user pattern compiled as the interpreter compiles all of them
    (leading flags scoped, numbered back-references refused)."""
    regexutil.check(source)
    return regex.compile(regexutil.scoped(source), regex.V0 | flags)
