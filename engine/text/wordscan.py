"""Whole-word lookup of word lists in one pass over the word runs.

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

from .regexutil import anchored, scoped

APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'"})


def normalize(word, case_sensitive=False):
    word = word.translate(APOSTROPHES)
    return word if case_sensitive else word.lower()


class WordTable:
    """Maps a first word to the phrases that start with it.

    All phrases sharing a first word are joined into one continuation
    pattern (longest first), so a run costs one dictionary lookup and at most
    one regex call.
    """

    def __init__(self):
        self._entries = ({}, {})  # (case-insensitive, case-sensitive): first word -> [(words, payload)]
        self._compiled = None

    def add(self, phrase, payload, case_sensitive=False):
        words = phrase.split()
        table = self._entries[1 if case_sensitive else 0]
        table.setdefault(normalize(words[0], case_sensitive), []).append((words, payload))
        self._compiled = None

    def __bool__(self):
        return bool(self._entries[0] or self._entries[1])

    def _compile(self):
        """One table keyed by the lower-cased first word; each entry is
        (exact first word or None, hit): case-sensitive entries name the exact
        spelling they need, so one lookup serves both kinds."""
        compiled = {}
        for cs, table in enumerate(self._entries):
            for first, items in table.items():
                items = sorted(items, key=lambda it: -len(it[0]))
                single = [payload for words, payload in items if len(words) == 1]
                multi = [(words, payload) for words, payload in items if len(words) > 1]
                cont = None
                if multi:
                    flags = regex.V0 | (0 if cs else regex.I)
                    branches = [f"(?P<p{i}>" + "".join(r"\s+" + _apostrophe_free(w) for w in words[1:]) + ")"
                                for i, (words, _) in enumerate(multi)]
                    cont = (regex.compile(anchored("|".join(branches)), flags), [(w[-1], pl) for w, pl in multi])
                hit = (cont, single[0] if single else None, bool(single))
                compiled.setdefault(first.lower(), []).append((first if cs else None, hit))
        self._compiled = compiled

    def compiled(self):
        """lower-cased first word -> [(exact spelling or None, hit)]."""
        if self._compiled is None:
            self._compile()
        return self._compiled

    @staticmethod
    def complete(text, end, hit, word_re):
        """(end, payload) of the longest entry of `hit` starting at a run that
        ends at `end`, or None."""
        cont, payload, has_single = hit
        if cont is not None:
            pattern, tails = cont
            r = pattern.match(text, end)
            if r is not None:
                last, pl = tails[int(r.lastgroup[1:])]
                e = r.end()
                tail = word_re.match(text, e - len(last))
                if tail is not None and tail.end() == e:
                    return e, pl
        if has_single:
            return end, payload
        return None

    def matches(self, text, word_re, timeout=None):
        """Yield (start, end, payload) for every listed word or phrase, left to right."""
        if not self:
            return
        last_end = -1
        for start, end, word, entries in scan(text, word_re, self.compiled(), timeout):
            if start < last_end:
                continue  # inside a phrase already found
            for exact, hit in entries:
                if exact is not None and exact != word:
                    continue
                found = self.complete(text, end, hit, word_re)
                if found is not None:
                    last_end = found[0]
                    yield start, found[0], found[1]
                    break


def scan(text, word_re, table, timeout=None):
    """Yield (start, end, word, entries) for each word run whose lower-cased
    form (apostrophes unified) is in the table; `word` is the run as written,
    apostrophes unified.  This loop is the hot spot of compression: a miss
    costs one lower() and one dictionary get()."""
    get = table.get
    for m in word_re.finditer(text, timeout=timeout):
        word = m.group()
        entries = get(word.lower())
        if entries is None:
            if word.isascii():
                continue
            word = word.translate(APOSTROPHES)
            entries = get(word.lower())
            if entries is None:
                continue
        elif not word.isascii():
            word = word.translate(APOSTROPHES)
        yield m.start(), m.end(), word, entries


def _apostrophe_free(word):
    """Escape a word for a regex; any apostrophe matches all apostrophe forms."""
    out = regex.escape(word.translate(APOSTROPHES))
    return out.replace("'", "['\u2019\u02bc]")


class GuardSet:
    """Context that keeps a word.

    - after_words / before_words: the word run right before / after it
      (only blanks between) is one of these words;
    - preceded / followed: a regular expression matching the text that ends
      right before the word / starts right after it;
    - only_before: the opposite of before_words, the word goes only when the
      word right after it is one of these ("you" only as a modal's subject).
    Word lists cost a set lookup; regexes are for what lists cannot say.
    """

    __slots__ = ("before", "after", "after_words", "before_words", "only_before")

    def __init__(self, preceded=None, followed=None, after_words=(), before_words=(), only_before=None):
        self.before = regex.compile(anchored(f"(?<=(?:{scoped(preceded)}))"), regex.V0) if preceded else None
        self.after = regex.compile(anchored(scoped(followed)), regex.V0) if followed else None
        self.after_words = frozenset(normalize(w) for w in after_words)
        self.before_words = frozenset(normalize(w) for w in before_words)
        self.only_before = frozenset(normalize(w) for w in only_before) if only_before is not None else None

    def __bool__(self):
        return bool(self.before or self.after or self.after_words or self.before_words or self.only_before is not None)

    def _next_word(self, text, end, runs):
        j, n = end, len(text)
        while j < n and text[j] in " \t":
            j += 1
        if j == end:
            return None
        m = runs.forward.match(text, j)
        return normalize(m.group()) if m is not None else None

    def blocks(self, text, start, end, runs):
        if self.before is not None and self.before.match(text, start) is not None:
            return True
        if self.after is not None and self.after.match(text, end) is not None:
            return True
        if self.after_words:
            i = start
            while i > 0 and text[i - 1] in " \t":
                i -= 1
            if i < start:
                m = runs.reverse.match(text, 0, i)
                if m is not None and normalize(m.group()) in self.after_words:
                    return True
        if self.before_words or self.only_before is not None:
            following = self._next_word(text, end, runs)
            if following is not None and following in self.before_words:
                return True
            if self.only_before is not None and following not in self.only_before:
                return True
        return False


class Runs:
    """The profile's word-run pattern, forwards and backwards."""

    __slots__ = ("forward", "reverse")

    def __init__(self, word_pattern):
        self.forward = regex.compile(word_pattern, regex.V0)
        self.reverse = regex.compile("(?r)" + anchored(scoped(word_pattern)), regex.V0)
