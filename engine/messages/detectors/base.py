"""What every detector kind shares: its name (the reason it reports) and the
time budget its patterns run under."""

from __future__ import annotations

import regex

from engine.text import regexutil


class Detector:
    def __init__(self, name: str, params, ctx) -> None:
        """params: the frozen spec of the detector's `params` (engine/core/specs.py),
        its schema's defaults filled in."""
        self.name = name
        self.params = params
        self._timeout = ctx.timeout_for

    def fires(self, text: str, memo: dict) -> bool:
        """True when the text shows this structure.  memo: a dict shared by
        the detectors looking at one text (protect scans are done once)."""
        raise NotImplementedError


def compile_pattern(source: str, flags: int = 0) -> regex.Pattern:
    """A user pattern compiled as the interpreter compiles all of them
    (leading flags scoped, numbered back-references refused)."""
    regexutil.check(source)
    return regex.compile(regexutil.scoped(source), regex.V0 | flags)
