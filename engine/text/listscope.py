"""Which lists keep their markers: the lead-in a list continues, its
section's heading, checklists and nesting (kind `lists`).

A list whose lead-in holds a negation, condition, modal or scope word
("Agents MUST NOT:", "## What this agent must never do") is read through
its markers: each item finishes the lead-in's sentence.  Without them an
item reads as a free-standing order ("Hardcode secrets").  Every word,
pattern and mark comes from the level's YAML.
"""

import regex

from .regexutil import anchored, scoped
from .wordscan import fast_runs, normalize


class ListScope:
    """The lead-in test of one `lists` transform (its YAML keys lead_in_*,
    heading, sentence_end, checklist)."""

    def __init__(self, spec, ctx):
        self.words = frozenset(normalize(w) for w in ctx.word_set(spec.lead_in_words))
        self.runs = fast_runs(regex.compile(ctx.word_pattern, regex.V0))
        # matched backwards from a line's end (one try there, not a search of the line)
        self.lead_in_end = regex.compile(anchored(scoped(spec.lead_in_end)), regex.V0 | regex.REVERSE)
        self.heading = regex.compile(anchored(scoped(spec.heading)), regex.V0)
        self.sentence_end = regex.compile(scoped(spec.sentence_end), regex.V0)
        self.checklist = regex.compile(anchored(scoped(spec.checklist)), regex.V0)
        self.alone = regex.compile(anchored(scoped(spec.stands_alone)), regex.V0)
        skip = spec.stands_alone_skip
        self.alone_skip = regex.compile(anchored(scoped(skip)), regex.V0) if skip else None
        self.alone_names = frozenset(spec.stands_alone_after)

    def ends_lead_in(self, text, line):
        """True when the line ends as a lead-in does (a colon)."""
        return self.lead_in_end.match(text, line.start, line.end) is not None

    def is_heading(self, text, line):
        return self.heading.match(text, line.start, line.end) is not None

    def is_checklist(self, text, line):
        return line.item and self.checklist.match(text, line.start + line.content_at, line.end) is not None

    def stands_alone(self, text, mask, line, wrapped=()):
        """True when an item reads the same without its marker: it opens
        with a name (a protected token of `stands_alone_after`: code, a
        path, a quoted string) or is a key-value line or a label
        (`stands_alone`).  Its wrapped lines are read joined, as the item
        leaves this transform whether its marker stays or goes."""
        at = line.start + line.content_at
        if self.alone_skip is not None:  # words a level may remove ("the `x`" is "`x`" on the next pass)
            at = self.alone_skip.match(text, at, line.end).end()
        if mask.category_at(at) in self.alone_names:
            return True
        joined = text[at:line.end] + "".join(" " + text[c.start + c.indent:c.end] for c in wrapped)
        return self.alone.match(joined) is not None

    def holds_word(self, text, start, end):
        """True when a lead-in word is a word run of text[start:end]."""
        words = self.words
        return any(normalize(m.group()) in words for m in self.runs.finditer(text, start, end))

    def lead_in(self, text, lines, k):
        """(start, end) of the lead-in that line k is, or None: a heading,
        or the last sentence of the paragraph that line k ends with a colon
        (back to a blank line, a heading or the start of a list item)."""
        line = lines[k]
        if self.is_heading(text, line):
            return line.start, line.end
        if not self.ends_lead_in(text, line):
            return None
        first = k
        while first > 0 and not lines[first].item:
            above = lines[first - 1]  # None (blank) or False (code) ends the paragraph
            if not above or self.is_heading(text, above):
                break
            first -= 1
        start = lines[first].start
        for m in self.sentence_end.finditer(text, start, line.end):
            start = m.end()
        return start, line.end
