"""Whole-word lookup of word lists in one pass over the word runs.

The profile's `word_pattern` cuts the text into word runs ("don't",
"non-blocking", "v1.2", "a/b" are each one run).  A listed word matches a run
that equals it, so "never" is found in "Never." but not in "nevermind" or
"never_again".  A phrase ("must not", "in order to") starts at a run equal to
its first word and continues with white space and its other words; its last
word must end a run too.

One mechanism finds the runs that start an entry (KeyScan), for the protect
categories, the `words` transforms and the message pipelines alike: it cuts
the text into runs and looks each one up in the table of first words (one
lower() and one dictionary get per run).  A compiled alternation of the
keys was measured 3-5x slower.  When the word pattern is made only of
character lists, groups and quantifiers (the built-in ones are), the runs
are cut by the standard library's `re`, the lists spelled out character by
character so that both modules read them alike (fast_runs); any other word
pattern is used as it is.  Both give the same runs.
"""

import regex

from .regexutil import anchored, scoped, trie_source

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
        self._keys = None

    def add(self, phrase, payload, case_sensitive=False):
        words = phrase.split()
        table = self._entries[1 if case_sensitive else 0]
        table.setdefault(normalize(words[0], case_sensitive), []).append((words, payload))
        self._compiled = self._keys = None

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
        keys = self._keys
        if keys is None or keys.word_re is not word_re:
            keys = self._keys = KeyScan(word_re, self.compiled())
        last_end = -1
        for start, end, word, entries in keys.scan(text, timeout):
            if start < last_end:
                continue  # inside a phrase already found
            found = self.first_entry(text, end, word, entries, word_re)
            if found is not None:
                last_end = found[0]
                yield start, found[0], found[1]

    @classmethod
    def first_entry(cls, text, end, word, entries, word_re):
        """(end, payload) of the first of a run's entries (spelling checked)
        that completes there, or None."""
        for exact, hit in entries:
            if exact is not None and exact != word:
                continue
            found = cls.complete(text, end, hit, word_re)
            if found is not None:
                return found
        return None


class WordTables:
    """Several word tables found in one pass over the word runs: what each
    table's own `matches` gives (a phrase of one table does not hide a word
    of another), for one run of the word pattern and one lookup per run
    instead of one per table."""

    def __init__(self, tables):
        self.tables = list(tables)
        self._keys = None

    def _merged(self):
        """lower-cased first word -> [(table index, that table's entries)]"""
        merged = {}
        for i, table in enumerate(self.tables):
            for key, entries in table.compiled().items():
                merged.setdefault(key, []).append((i, entries))
        return merged

    def matches(self, text, word_re, timeout=None):
        """[[(start, end, payload)] per table], each left to right."""
        keys = self._keys
        if keys is None or keys.word_re is not word_re:
            keys = self._keys = KeyScan(word_re, self._merged())
        found = [[] for _ in self.tables]
        last_end = [-1] * len(self.tables)
        first_entry = WordTable.first_entry
        for start, end, word, hits in keys.scan(text, timeout):
            for i, entries in hits:
                if start < last_end[i]:
                    continue  # inside a phrase of this table already found
                got = first_entry(text, end, word, entries, word_re)
                if got is not None:
                    last_end[i] = got[0]
                    found[i].append((start, got[0], got[1]))
        return found


_CLASS_ITEM = regex.compile(r"\\(?P<esc>.)|(?P<lit>.)", regex.V0 | regex.S)


def _class_chars(body):
    """The characters a class body lists, `\\s` spelled out as the `regex`
    module reads it; None when the body says more than single characters
    and \\s (a range, a property, a set operation)."""
    out = set()
    for m in _CLASS_ITEM.finditer(body):
        ch = m.group("esc")
        if ch is None:
            ch = m.group("lit")
            if ch in "-[&~|":
                return None
            out.add(ch)
        elif ch == "s":
            out.update(_white_space())
        elif ch.isalnum() or ch == "_":
            return None  # \w, \d, \p...: not a plain list
        else:
            out.add(ch)
    return out


_WHITE_SPACE: list[frozenset] = []


def _white_space():
    """What `regex`'s \\s matches (Unicode White_Space, all of it below
    U+3001), found once per process."""
    if not _WHITE_SPACE:
        _WHITE_SPACE.append(frozenset(regex.findall(r"\s", "".join(map(chr, range(0x3001))))))
    return _WHITE_SPACE[0]


def _class(chars):
    return "".join(f"\\U{ord(c):08x}" for c in sorted(chars))


def _as_re(pattern):
    """The pattern for the standard library's `re`, when it is made only of
    character classes listing single characters (and \\s), non-capturing
    groups and the quantifiers ? * + (possessive or not): each class spelled
    out character by character means the same to both modules.  None for
    anything else."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "[":
            j = i + 1
            neg = pattern.startswith("^", j)
            j += neg
            k = j
            while k < n and pattern[k] != "]":
                k += 2 if pattern[k] == "\\" else 1
            if k >= n or k == j:
                return None
            chars = _class_chars(pattern[j:k])
            if chars is None:
                return None
            out.append(f"[{'^' if neg else ''}{_class(chars)}]")
            i = k + 1
        elif pattern.startswith("(?:", i):
            out.append("(?:")
            i += 3
        elif c in ")?*+":
            out.append(c)
            i += 1
        else:
            return None
    return "".join(out)


def _apostrophes_alike(pattern):
    """True when every character list of a pattern of lists (see _as_re)
    holds the three apostrophes (' \u2019 \u02bc) or none of them."""
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] != "[":
            i += 1
            continue
        j = i + 1 + pattern.startswith("^", i + 1)
        k = j
        while k < n and pattern[k] != "]":
            k += 2 if pattern[k] == "\\" else 1
        chars = _class_chars(pattern[j:k])
        if chars is None or len({c in chars for c in "'\u2019\u02bc"}) > 1:
            return False
        i = k + 1
    return True


def fast_runs(word_re):
    """The same word runs, found by the standard library's `re`: about twice
    as fast as `regex` at this, and this loop is the hot spot of compression.
    Only for a pattern of character lists, groups and quantifiers (the
    built-in word patterns are): spelled with the characters listed one by
    one, it means the same to both modules.  Any other pattern: the pattern
    itself."""
    import re

    if word_re.flags & ~(regex.V0 | regex.U):
        return word_re
    spelled = _as_re(word_re.pattern)
    if spelled is None:
        return word_re
    try:
        return re.compile(spelled)
    except re.error:
        return word_re


class KeyScan:
    """The word runs of a text whose lower-cased form (apostrophes unified)
    is a key of a table: the first words of a word list.

    One dictionary lookup per run.  A compiled alternation of the keys (one
    regex per word list, as the message pipeline had) is slower: both regex
    modules try every branch at every word start, about 3x the time of this
    loop for the 86 first words of a `words` transform, 5x for the 161 of
    the protect categories (1 MB of the shared corpus)."""

    __slots__ = ("word_re", "table", "_runs", "_unify", "_keys")

    def __init__(self, word_re, table):
        self.word_re = word_re
        self.table = table
        self._runs = fast_runs(word_re)
        # Apostrophes unified in the whole text at once (two str.replace, no
        # per-run test) when the runs cannot tell them apart: a pattern of
        # character lists each holding all three or none.
        self._unify = self._runs is not word_re and _apostrophes_alike(word_re.pattern)
        self._keys = ascii_keys_finder(word_re, table)

    def scan(self, text, timeout=None, pos=0, endpos=None):
        """Yield (start, end, word, entries) for each word run whose
        lower-cased form (apostrophes unified) is in the table; `word` is
        the run as written, apostrophes unified.  A miss costs one lower()
        and one dictionary get().  pos and endpos bound the part looked at
        (they must fall between runs, at white space)."""
        get = self.table.get
        if not self.table:
            return
        runs = self._runs
        if endpos is None:
            endpos = len(text)
        ascii_text = text.isascii()
        if ascii_text and self._keys is not None and pos == 0 and endpos == len(text):
            # only the runs that are keys, found by one trie search (in C)
            # instead of every run looked up in turn
            for m in self._keys.finditer(text):
                word = m.group()
                yield m.start(), m.end(), word, get(word.lower())
            return
        if not ascii_text and self._unify and pos == 0 and endpos == len(text):
            # same length, same runs: the runs come out unified, as below
            # (a whole text only: a window would cost a copy of all of it)
            text = text.replace("\u2019", "'").replace("\u02bc", "'")
            ascii_text = True
        found = (runs.finditer(text, pos, endpos) if runs is not self.word_re
                 else runs.finditer(text, pos, endpos, timeout=timeout))
        if ascii_text:
            # no apostrophe to unify (or all unified): one lower() and one
            # get() per run, the least this loop can do (it runs for every
            # word of the text)
            for m in found:
                word = m.group()
                entries = get(word.lower())
                if entries is not None:
                    yield m.start(), m.end(), word, entries
            return
        for m in found:
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


def one_list_repeated(pattern):
    """True when a word pattern is one character list repeated, `[...]+` or
    `[...]++`: its runs are then the longest stretches of the list's
    characters, whatever the list holds."""
    if not pattern.startswith("["):
        return False
    k = start = 1 + pattern.startswith("^", 1)
    while k < len(pattern) and pattern[k] != "]":
        k += 2 if pattern[k] == "\\" else 1
    return k > start and pattern[k + 1:] in ("+", "++")


def ascii_keys_finder(word_re, table):
    """For an ASCII text: a `re` pattern finding exactly the word runs whose
    lower-cased form is a key of the table, when the word pattern is one
    character list repeated (else None).  Which ASCII characters the list
    holds is asked of the word pattern itself, one character at a time, so
    both modules read it alike.  Each character of a key stands for the
    characters of the list that lower-case to it (a key with one that none
    does is no run's, and is left out); a match starts where no character of
    the list is before it and ends where none follows: a whole run."""
    import re

    if not one_list_repeated(word_re.pattern):
        return None
    members = sorted(c for c in map(chr, range(128)) if word_re.fullmatch(c))
    spellings = {}
    for c in members:
        spellings.setdefault(c.lower(), []).append(re.escape(c))
    keys = sorted(k for k in table if k and all(ch in spellings for ch in k))
    if not keys:
        return None
    chars = "[" + "".join(map(re.escape, members)) + "]"
    spell = lambda ch: spellings[ch][0] if len(spellings[ch]) == 1 else "[" + "".join(spellings[ch]) + "]"
    return re.compile(f"(?<!{chars})(?:{trie_source(keys, spell)})(?!{chars})")


def _apostrophe_free(word):
    """Escape a word for a regex; any apostrophe matches all apostrophe forms."""
    out = regex.escape(word.translate(APOSTROPHES))
    return out.replace("'", "['\u2019\u02bc]")


def guard_pattern(pattern, lists=None, behind=False):
    """A guard's regular expression, compiled to be tried at one position:
    after a word (or, behind=True, ending where it starts).  `\\L<name>` in
    it stands for the named word list `lists[name]` (a dictionary's
    `lists:`), so a guard can name a class of words ("a determiner") that
    the YAML lists word by word, with the reason beside each."""
    body = f"(?<=(?:{scoped(pattern)}))" if behind else scoped(pattern)
    return regex.compile(anchored(body), regex.V0, ignore_unused=True, **(lists or {}))


class GuardSet:
    """Context that keeps a word.

    - after_words / before_words: the word run right before / after it
      (only blanks between) is one of these words;
    - preceded / followed: a regular expression matching the text that ends
      right before the word / starts right after it;
    - only_before: the opposite of before_words, the word goes only when the
      word right after it is one of these ("you" only as a modal's subject);
    - only_followed: the opposite of followed, the word goes only where this
      regular expression matches the text right after it ("is" only before
      a complement: "the build is broken", never "the factory is the path").
    Word lists cost a set lookup; regexes are for what lists cannot say.
    """

    __slots__ = ("before", "after", "after_words", "before_words", "only_before", "only_after")

    def __init__(self, preceded=None, followed=None, after_words=(), before_words=(), only_before=None,
                 only_followed=None, lists=None):
        self.before = guard_pattern(preceded, lists, behind=True) if preceded else None
        self.after = guard_pattern(followed, lists) if followed else None
        self.only_after = guard_pattern(only_followed, lists) if only_followed else None
        self.after_words = frozenset(normalize(w) for w in after_words)
        self.before_words = frozenset(normalize(w) for w in before_words)
        self.only_before = frozenset(normalize(w) for w in only_before) if only_before is not None else None

    def __bool__(self):
        return bool(self.before or self.after or self.only_after or self.after_words or self.before_words
                    or self.only_before is not None)

    def reads_next(self):
        """True when what follows the word decides (settle looks again
        where an edit changed what follows a listed word)."""
        return bool(self.after or self.only_after or self.before_words or self.only_before is not None)

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
        if self.only_after is not None and self.only_after.match(text, end) is None:
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
