"""kind: heading_labels — the deepest heading level of a file becomes a label
line ("### Tests" -> "Tests:"), one token cheaper, while every shallower
heading keeps its marks.

Heading depth is meaning (which rules a section holds), so depth is kept:
the deepest level has nothing below it, and a label under a "##" section
reads as a part of that section.  A file whose headings are all of one
level (besides a single top title) loses no hierarchy either.
A heading becomes a label only where its section is one block: a label
scopes the block right under it, and the paragraphs after a blank line
would lose their scope.
A file that already holds a label line (`unless_present`, the full-width
colon too) gets no labels: they would collide with it (a section and its
parts could no longer be told apart), and a compressed file would lose one
heading level per pass.  Nor does a file that links to its own headings
(`unless_present` again): a label has no anchor.
The label replaces the whole heading, text included, so its text is no
longer a protected heading: the word passes after this one compress it as
they compress any line, as a second pass would.
"""

from bisect import bisect_right

import regex

from ..mask import Edit
from ..regexutil import scoped
from .base import Transform, admissible


class HeadingLabels(Transform):
    kind = "heading_labels"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.pattern = regex.compile(scoped(spec.pattern), regex.V0)
        self.label = spec.label
        self.min_depth = spec.min_depth
        unless = spec.unless_present
        self.unless = regex.compile(scoped(unless), regex.V0) if unless else None
        section_end = spec.section_end
        self.section_end = regex.compile(scoped(section_end), regex.V0) if section_end else None
        block_break = spec.block_break
        self.block_break = regex.compile(scoped(block_break), regex.V0) if block_break else None

    def _label_present(self, text, mask, timeout):
        """A line that already reads as a label (a bold label whose marks went,
        or a heading labelled by an earlier pass), or a link to a heading of
        the file: new labels would collide with it, a second pass would label
        the next level, or the link would lose its anchor."""
        if self.unless is None:
            return False
        colon = "colon" in self.unless.groupindex
        for m in self.unless.finditer(text, timeout=timeout):
            # a label's colon (group `colon`) or the match itself, outside
            # protected text (a colon inside code is no label's)
            at = m.start("colon") if colon and m.start("colon") >= 0 else m.start()
            if mask.category_at(at) is None:
                return True
        return False

    def _one_block(self, text, mask, start, end, timeout):
        """True when text[start:end] (a section, after its heading line)
        holds one block: some text and no blank line between (a blank line
        inside code does not count)."""
        if self.block_break is None:
            return True
        body = text[start:end]
        if not body.strip():
            return False
        lo = start + len(body) - len(body.lstrip())
        hi = start + len(body.rstrip())
        for m in self.block_break.finditer(text, lo, hi, timeout=timeout):
            if mask.category_at(m.start()) is None:
                return False
        return True

    def _sections(self, text, mask, timeout):
        """Where each heading line starts, outside protected text: a section
        runs to the next one."""
        if self.section_end is None:
            return []
        return [m.start() for m in self.section_end.finditer(text, timeout=timeout)
                if not mask.blocking(m.start(), m.start() + 1, self.allow)]

    def edits(self, text, mask, run):
        timeout = self.timeout(text, run.timeout_ms_per_mb)
        if self._label_present(text, mask, timeout):
            return []
        found = []
        for m in self.pattern.finditer(text, timeout=timeout):
            if mask.blocking(m.start(), m.start("title"), self.allow):
                continue  # a "#" line inside code or frontmatter is no heading
            found.append(m)
        if not found:
            return []
        deepest = max(len(m.group("marks")) for m in found)
        if deepest < self.min_depth:
            return []
        starts = self._sections(text, mask, timeout)
        out = []
        for m in found:
            if len(m.group("marks")) != deepest:
                continue
            line_end = text.find("\n", m.end())
            line_end = len(text) if line_end < 0 else line_end
            k = bisect_right(starts, m.start())
            nxt = starts[k] if k < len(starts) else len(text)
            if not self._one_block(text, mask, line_end, nxt, timeout):
                continue  # the paragraphs after the first would lose their scope
            group = [Edit(m.start(), m.end(), self.label.replace("{title}", m.group("title")))]
            if text[m.start():m.end()] != group[0].text and admissible(mask, group, self.allow):
                out.extend(group)
        return out
