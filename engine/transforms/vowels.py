"""kind: remove_vowels — drop vowels that sit between two consonants inside
long words ("instruction" -> "instrction"); the first and last letters stay.

With objective `tokens` a word is changed only where the tokenizer says the
shorter spelling costs no more tokens; BPE vocabularies hold most long
English words whole, so this is rare, and that is the honest result.
"""

import regex

from ..mask import Edit
from ..regexutil import scoped
from .base import Transform


class RemoveVowels(Transform):
    kind = "remove_vowels"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.min_length = spec["min_length"]
        self.vowels = frozenset(spec["vowels"].lower() + spec["vowels"].upper())
        self.word = regex.compile(scoped(spec["word_pattern"]), regex.V0)
        self.exclude = {w.lower() for w in ctx.word_set(spec["exclude"])} if spec.get("exclude") else set()
        self.pays = ctx.rewrite_pays_at_run_time
        self._decided = {}

    def _strip(self, word):
        v = self.vowels
        kept = [word[0]]
        for i in range(1, len(word) - 1):
            c, before, after = word[i], word[i - 1], word[i + 1]
            if c in v and before.isalpha() and before not in v and after.isalpha() and after not in v:
                continue
            kept.append(c)
        kept.append(word[-1])
        return "".join(kept)

    def shorten(self, word):
        if len(word) < self.min_length or word.lower() in self.exclude:
            return None
        if word in self._decided:
            return self._decided[word]
        new = self._strip(word)
        result = new if new != word and self.pays(word, new) else None
        self._decided[word] = result
        return result

    def edits(self, text, mask, run):
        out = []
        for m in self.word.finditer(text, timeout=self.timeout(text, run.timeout_ms_per_mb)):
            new = self.shorten(m.group())
            if new is None or mask.blocking(m.start(), m.end(), self.allow):
                continue
            out.append(Edit(m.start(), m.end(), new))
        return out
