"""Which of a fixed set of literals a text holds, and where, case-
insensitively (ASCII): the cheap tests that decide which secret rules run
and where (engine/text/secretrules.py).

A search costs a pass over the whole text, and a rule set has hundreds of
literals.  So whether they occur is asked of a much shorter text first: the
text's distinct words.  Its UTF-8 bytes are lower-cased, every separator
(blank, quote, bracket, comma...) turned into a blank in one
`bytes.translate`, split, and the distinct words joined.  A literal without
a separator can only occur inside one word, so it occurs in the text exactly
when it occurs in that join.  A literal holding a separator (`<add key=`)
is looked for in the lower-cased text itself.  A short text (most chat
messages) is not worth reducing: once a few have been searched, a trie of
all the literals finds in one pass the longest literal at each position, and
with it the literals that are its prefixes.  Where a literal occurs is
then searched only for the literals that occur, in the lower-cased bytes;
a byte offset becomes a character offset by counting the bytes that start
a character (all of them in an ASCII text).
"""

_SEPARATORS = b"\t\n\r\x0b\x0c \"'`,;()[]{}<>\\|&*!?#$%^"
_UPPER = bytes(range(65, 91))
_LOWER_AND_SPLIT = bytes.maketrans(_SEPARATORS + _UPPER, b" " * len(_SEPARATORS) + bytes(range(97, 123)))
_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that do not start a character
_SHORT = 4096  # below this many bytes the text is searched as it is: reducing it costs more
_BLOCK = 1024  # bytes per step of the byte-to-character table
# Short texts searched one literal at a time before the trie of all of them
# is compiled: compiling it costs what about 20 such searches cost, which a
# process that looks at a text or two (a hook) should not pay.
_TRIE_AFTER = 32


def encoded(text):
    """The UTF-8 bytes of text, any lone surrogate kept (one character, three bytes)."""
    return text.encode("utf-8", "surrogatepass")


class Literals:
    """A fixed set of lower-case ASCII literals."""

    def __init__(self, literals):
        self._in_words, self._whole = [], []
        for k in sorted({k.lower() for k in literals if k}):
            raw = k.encode("ascii")
            # it holds a separator when deleting the separators shortens it (one C call)
            (self._in_words if len(raw.translate(None, _SEPARATORS)) == len(raw) else self._whole).append((k, raw))
        self._trie = None  # (finder, prefixes): compiled once _TRIE_AFTER short texts were searched
        self._short_texts = 0

    def present(self, data):
        """The literals that occur in data (UTF-8 bytes)."""
        if len(data) <= _SHORT:
            low = bytes(data).lower()
            if self._trie is None and self._short_texts < _TRIE_AFTER:
                self._short_texts += 1
                return {k for k, raw in self._in_words + self._whole if raw in low}
            return self._in_short(low)
        words = b" ".join(set(data.translate(_LOWER_AND_SPLIT).split()))
        found = {k for k, raw in self._in_words if raw in words}
        if self._whole:
            low = bytes(data).lower()
            found.update(k for k, raw in self._whole if raw in low)
        return found

    def _in_short(self, low):
        """The literals in a short lower-cased text, in one pass: at each
        position the trie of all of them gives the longest literal starting
        there, and every literal that is a prefix of it starts there too.
        (One `in` per literal, hundreds of them, cost ten times more.)"""
        if self._trie is None:
            raws = [raw for _, raw in self._in_words + self._whole]
            self._trie = _compiled_trie(raws) if raws else (None, {})
        finder, prefixes = self._trie
        if finder is None:
            return set()
        found = set()
        for longest in set(finder.findall(low)):
            found.update(prefixes[longest])
        return found

    def __getstate__(self):
        return dict(self.__dict__, _trie=None, _short_texts=0)


def _compiled_trie(raws):
    """(a `re` pattern whose findall gives, at every position, the longest
    of raws starting there; {raw: the literals (str) that are prefixes of
    it, itself included})."""
    import re

    from .regexutil import trie_source

    finder = re.compile(b"(?=(" + trie_source(raws) + b"))")
    known = set(raws)
    prefixes = {raw: {raw[:i].decode("ascii") for i in range(1, len(raw) + 1) if raw[:i] in known} for raw in raws}
    return finder, prefixes


class Positions:
    """Where literals start in one text: character offsets, found in its
    lower-cased UTF-8 bytes (`data`, from `encoded`)."""

    def __init__(self, data, ascii_text):
        self._low = bytes(data).lower()
        self._ascii = ascii_text
        self._blocks = None
        self._at = {}

    def count(self, literal):
        """How many times literal occurs (one pass in C, no list)."""
        return self._low.count(literal.encode("ascii"))

    def of(self, literal):
        found = self._at.get(literal)
        if found is None:
            raw, low, found = literal.encode("ascii"), self._low, []
            i = low.find(raw)
            while i >= 0:
                found.append(i)
                i = low.find(raw, i + 1)
            if not self._ascii:
                found = [self._char(b) for b in found]
            self._at[literal] = found
        return found

    def _char(self, b):
        if self._blocks is None:
            low, counts, total = self._low, [0], 0
            for i in range(0, len(low), _BLOCK):
                total += len(low[i:i + _BLOCK].translate(None, _CONTINUATION))
                counts.append(total)
            self._blocks = counts
        start = b - b % _BLOCK
        return self._blocks[b // _BLOCK] + len(self._low[start:b].translate(None, _CONTINUATION))
