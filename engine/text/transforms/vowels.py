"""kind: remove_vowels — drop vowels that sit between two consonants inside
long words ("abstractions" -> "abstrctns"); the first and last letters stay.

Only words of the `only` dictionary change: a word not listed there could be
a name (a package, a tool, a product), and a shortened name names nothing.
Every decision is made when the profile is compiled, over that list, so
running this level never loads a tokenizer.  With objective `tokens` a word
changes only where the tokenizer says the shorter spelling costs no more
tokens; BPE vocabularies hold most long English words whole, so this is
rare, and that is the honest result.
"""

import regex

from ..mask import Edit
from ..regexutil import scoped
from .base import Transform


def strip_vowels(word, vowels):
    kept = [word[0]]
    for i in range(1, len(word) - 1):
        c, before, after = word[i], word[i - 1], word[i + 1]
        if c in vowels and before.isalpha() and before not in vowels and after.isalpha() and after not in vowels:
            continue
        kept.append(c)
    kept.append(word[-1])
    return "".join(kept)


class RemoveVowels(Transform):
    kind = "remove_vowels"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.min_length = spec.min_length
        vowels = frozenset(spec.vowels.lower() + spec.vowels.upper())
        self.word = regex.compile(scoped(spec.word_pattern), regex.V0)
        exclude = {w.lower() for w in ctx.word_set(spec.exclude)} if spec.exclude else set()
        self.decided, self.skipped = {}, []
        for word in sorted({w.lower() for w in ctx.word_set(spec.only)}):
            if len(word) < self.min_length or word in exclude:
                continue
            new = strip_vowels(word, vowels)
            if new == word:
                continue
            if ctx.rewrite_pays(word, new):
                self.decided[word] = new
            else:
                self.skipped.append(word)

    def edits(self, text, mask, run):
        out = []
        decided = self.decided
        if not decided:
            return out
        for m in self.word.finditer(text, timeout=self.timeout(text, run.timeout_ms_per_mb)):
            new = decided.get(m.group())
            if new is None or mask.blocking(m.start(), m.end(), self.allow):
                continue
            out.append(Edit(m.start(), m.end(), new))
        return out
