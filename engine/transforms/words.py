"""kind: remove_words and kind: substitute — dictionary-driven word transforms.

Both look their whole dictionary up in one pass over the word runs of the
text (wordscan), so a word inside an identifier, a path or a hyphenated term
("on-call", "a/b", "the_thing") is never taken for a listed word.
"""

from ..mask import Edit
from ..wordscan import GuardSet, WordTable
from .base import Transform


def _form(s):
    if s.islower():
        return "lower"
    if s.isupper() and len(s) > 1:
        return "upper"
    if s[:1].isupper() and (s[1:].islower() or not s[1:].strip()):
        return "title"
    return "other"


def cased(replacement, form):
    if form == "upper":
        return replacement.upper()
    if form == "title":
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _trailing_blanks(text, pos):
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    return pos


class RemoveWords(Transform):
    """Delete listed words (and the blanks after them), honouring context guards."""

    kind = "remove_words"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        cs = spec.get("case_sensitive", False)
        self.table = WordTable(ctx.word_pattern)
        for w in ctx.word_list(spec["dictionary"]):
            guard = None
            if "unless_preceded_by" in w or "unless_followed_by" in w:
                guard = GuardSet(w.get("unless_preceded_by"), w.get("unless_followed_by"))
            self.table.add(w["word"], guard, cs)
        self.guard = GuardSet(spec.get("unless_preceded_by"), spec.get("unless_followed_by"))

    def edits(self, text, mask, run):
        out = []
        last = 0
        for start, end, guard in self.table.matches(text, timeout=self.timeout(text, run.timeout_ms_per_mb)):
            if start < last:
                continue
            if (guard is not None and guard.blocks(text, start, end)) or self.guard.blocks(text, start, end):
                continue
            end = _trailing_blanks(text, end)
            if mask.blocking(start, end, self.allow):
                continue
            out.append(Edit(start, end, ""))
            last = end
        return out


class Substitute(Transform):
    """Replace listed words or phrases; case follows the original
    ("Production" -> "Prod").  Entries that would cost tokens (objective
    `tokens`) or characters (objective `chars`) are left out at compile time."""

    kind = "substitute"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        cs = spec.get("case_sensitive", False)
        self.table = WordTable(ctx.word_pattern)
        kept = set()
        entries = ctx.entries(spec["dictionary"])
        for full, short in entries.items():
            variants = {
                "lower": (full.lower(), short),
                "title": (full[:1].upper() + full[1:].lower(), cased(short, "title")),
                "upper": (full.upper(), short.upper()),
            }
            forms = {form: ctx.rewrite_pays(old, new) for form, (old, new) in variants.items()}
            if any(forms.values()):
                self.table.add(full, (short, forms), cs)
                kept.add(full)
        self.skipped = sorted(set(entries) - kept)
        self.guard = GuardSet(spec.get("unless_preceded_by"), spec.get("unless_followed_by"))

    def edits(self, text, mask, run):
        out = []
        for start, end, (short, forms) in self.table.matches(text, timeout=self.timeout(text, run.timeout_ms_per_mb)):
            form = _form(text[start:end])
            if not forms.get(form, False) or self.guard.blocks(text, start, end):
                continue
            new = cased(short, form)
            if not new:
                end = _trailing_blanks(text, end)
            if mask.blocking(start, end, self.allow):
                continue
            if out and start < out[-1].end:
                continue
            out.append(Edit(start, end, new))
        return out
