"""kind: heading_labels — the deepest heading level of a file becomes a label
line ("### Tests" -> "Tests:"), one token cheaper, while every shallower
heading keeps its marks.

Heading depth is meaning (which rules a section holds), so depth is kept:
the deepest level has nothing below it, and a label under a "##" section
reads as a part of that section.  A file whose headings are all of one
level (besides a single top title) loses no hierarchy either.
A file that already holds a label line (`unless_present`) gets no labels:
they would collide with it (a section and its parts could no longer be told
apart), and a compressed file would lose one heading level per pass.
"""

import regex

from ..mask import Edit
from ..regexutil import scoped
from .base import Transform, admissible


class HeadingLabels(Transform):
    kind = "heading_labels"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.pattern = regex.compile(scoped(spec["pattern"]), regex.V0)
        self.label = spec["label"]
        self.min_depth = spec.get("min_depth", 1)
        unless = spec.get("unless_present")
        self.unless = regex.compile(scoped(unless), regex.V0) if unless else None

    def _label_present(self, text, mask, timeout):
        """A line that already reads as a label (a bold label whose marks went,
        or a heading labelled by an earlier pass): new labels would collide
        with it, and a second pass would label the next level."""
        if self.unless is None:
            return False
        for m in self.unless.finditer(text, timeout=timeout):
            # the line's last ":" is the label's own, not one inside code
            # (a numbered label, "1. Setup:", starts with a protected number)
            colon = text.rfind(":", m.start(), m.end())
            if colon >= 0 and mask.category_at(colon) is None:
                return True
        return False

    def edits(self, text, mask, run):
        if self._label_present(text, mask, self.timeout(text, run.timeout_ms_per_mb)):
            return []
        found = []
        for m in self.pattern.finditer(text, timeout=self.timeout(text, run.timeout_ms_per_mb)):
            if mask.blocking(m.start(), m.start("title"), self.allow):
                continue  # a "#" line inside code or frontmatter is no heading
            found.append(m)
        if not found:
            return []
        deepest = max(len(m.group("marks")) for m in found)
        if deepest < self.min_depth:
            return []
        out = []
        for m in found:
            if len(m.group("marks")) != deepest:
                continue
            before, _, after = self.label.partition("{title}")
            group = [Edit(m.start(), m.start("title"), before),
                     Edit(m.end("title"), m.end(), after)]
            group = [e for e in group if text[e.start:e.end] != e.text]
            if group and admissible(mask, group, self.allow):
                out.extend(group)
        return out
