"""Whole-word lookup of word lists in one pass.

The profile's `word_pattern` cuts the text into word runs ("don't",
"non-blocking", "v1.2", "a/b" are each one run).  A listed word matches a run
that equals it, so "never" is found in "Never." but not in "nevermind" or
"never_again".  A phrase ("must not", "in order to") starts at a run equal to
its first word and continues with white space and its other words; its last
word must end a run too.  One dictionary lookup per run replaces a regex
alternation with look-arounds tried at every position (several times faster
with the `regex` module).
"""

import regex

APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'"})


def normalize(word, case_sensitive=False):
    word = word.translate(APOSTROPHES)
    return word if case_sensitive else word.lower()


class WordTable:
    """Maps a first word to the phrases that start with it (longest first)."""

    def __init__(self, word_pattern):
        self.word_re = regex.compile(word_pattern, regex.V0)
        self._ci = {}  # lower-cased first word -> entries
        self._cs = {}  # exact first word -> entries (case-sensitive lists)

    def add(self, phrase, payload, case_sensitive=False):
        words = phrase.split()
        rest = None
        if len(words) > 1:
            flags = 0 if case_sensitive else regex.I
            rest = regex.compile("".join(r"\s+" + _apostrophe_free(w) for w in words[1:]), flags | regex.V0)
        table = self._cs if case_sensitive else self._ci
        bucket = table.setdefault(normalize(words[0], case_sensitive), [])
        bucket.append((len(words), rest, words[-1], payload))
        bucket.sort(key=lambda e: -e[0])

    def __bool__(self):
        return bool(self._ci or self._cs)

    def matches(self, text, timeout=None):
        """Yield (start, end, payload) for every listed word or phrase, left to right."""
        ci, cs = self._ci, self._cs
        if not (ci or cs):
            return
        last_end = -1
        for m in self.word_re.finditer(text, timeout=timeout):
            s = m.start()
            if s < last_end:
                continue
            norm = m.group().translate(APOSTROPHES)
            bucket = ci.get(norm.lower())
            if cs:
                extra = cs.get(norm)
                if extra:
                    bucket = sorted((bucket or []) + extra, key=lambda e: -e[0])
            if not bucket:
                continue
            for _n, rest, last, payload in bucket:
                if rest is None:
                    last_end = m.end()
                    yield s, last_end, payload
                    break
                r = rest.match(text, m.end())
                if r is None:
                    continue
                e = r.end()
                tail = self.word_re.match(text, e - len(last))
                if tail is None or tail.end() != e:
                    continue
                last_end = e
                yield s, e, payload
                break


def _apostrophe_free(word):
    """Escape a word for a regex; any apostrophe matches all apostrophe forms."""
    out = regex.escape(word.translate(APOSTROPHES))
    return out.replace("'", "['\u2019\u02bc]")


class GuardSet:
    """Context guards: `unless_preceded_by` must match the text ending right
    before the word, `unless_followed_by` the text starting right after it."""

    __slots__ = ("before", "after")

    def __init__(self, preceded=None, followed=None):
        from .regexutil import scoped

        self.before = regex.compile(f"(?<=(?:{scoped(preceded)}))", regex.V0) if preceded else None
        self.after = regex.compile(scoped(followed), regex.V0) if followed else None

    def blocks(self, text, start, end):
        if self.before is not None and self.before.match(text, start) is not None:
            return True
        if self.after is not None and self.after.match(text, end) is not None:
            return True
        return False
