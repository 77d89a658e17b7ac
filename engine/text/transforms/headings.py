"""kind: heading_labels — the deepest heading level of a file becomes a label
line ("### Tests" -> "Tests:"), one token cheaper, while every shallower
heading keeps its marks.

Heading depth is meaning (which rules a section holds), so depth is kept:
the deepest level has nothing below it, and a label under a "##" section
reads as a part of that section.  A file whose headings are all of one
level (besides a single top title) loses no hierarchy either.
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

    def edits(self, text, mask, run):
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
