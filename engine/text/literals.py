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
is looked for in the lower-cased text itself.  Where a literal occurs is
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

    def present(self, data):
        """The literals that occur in data (UTF-8 bytes)."""
        if len(data) <= _SHORT:
            low = bytes(data).lower()
            return {k for k, raw in self._in_words + self._whole if raw in low}
        words = b" ".join(set(data.translate(_LOWER_AND_SPLIT).split()))
        found = {k for k, raw in self._in_words if raw in words}
        if self._whole:
            low = bytes(data).lower()
            found.update(k for k, raw in self._whole if raw in low)
        return found


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
