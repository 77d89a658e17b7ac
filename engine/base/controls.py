"""Control characters in what the engine prints: every one taken from data is
escaped; only the engine's own (its colours, a progress bar's carriage
return) reach a terminal, and only through a mark no data can forge.

Escaped: C0 (but tab and newline), DEL, C1, the Unicode bidirectional
embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069: they
reorder what a terminal shows, "Trojan Source"), and lone surrogates (not
encodable: printing one would fail).  Each becomes its JSON escape `\\uXXXX`,
so a JSON document printed through `escape` stays valid JSON with the same
value: JSON writers escape C0 themselves and the rest only ever sits inside
a string.  A lone ESC is C0 and so escaped with the rest.

The engine's own sequences are made by `own` (or `paint`) as marks: a
private-use character, a random nonce drawn per process, an index.  The
writer (engine/cli/output.py) escapes everything, then turns marks back
into their sequences (`finish`): a transcript cannot know the nonce, so it
cannot make a mark.  Imports `re` only when a text needs escaping.
"""

import os

# C0 but tab (09) and newline (0a), DEL and C1, bidi controls, surrogates.
_PATTERN = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
_NONCE = os.urandom(8).hex()
_OPEN, _CLOSE = "\ue000", "\ue001"
_own: list[str] = []
_compiled: dict = {}


def _rx(name):
    rx = _compiled.get(name)
    if rx is None:
        import re

        pattern = _PATTERN if name == "escape" else f"{_OPEN}{_NONCE}(\\d+){_CLOSE}"
        rx = _compiled[name] = re.compile(pattern)
    return rx


def _as_json_escape(match):
    return f"\\u{ord(match.group()):04x}"


def escape(text):
    """`text` with every control character above as `\\uXXXX`."""
    if text.isascii() and text.isprintable():
        return text  # the common line: nothing to look for
    rx = _rx("escape")
    return rx.sub(_as_json_escape, text) if rx.search(text) else text


def one_line(text):
    """A name taken from data (a file's) as one line of the engine's output:
    a newline, carriage return or tab in it escaped, and then its
    backslashes too, so that it reads back.  The writer lets newlines and
    tabs through (the engine's own lines need them): a file whose name
    holds a newline then "   SKIPPED b.md" would print a line of its own
    making.  A name without them is returned as it is."""
    text = str(text)
    if "\n" not in text and "\r" not in text and "\t" not in text:
        return text
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")


def own(sequence):
    """A mark standing for one of the engine's own control sequences."""
    if sequence not in _own:
        _own.append(sequence)
    return f"{_OPEN}{_NONCE}{_own.index(sequence)}{_CLOSE}"


def paint(code, text):
    """`text` in the SGR colour `code` (for example 31, or 1;32)."""
    return f"{own(f'{chr(27)}[{code}m')}{text}{own(chr(27) + '[0m')}"


def resolve(text):
    """The engine's own sequences in place of their marks."""
    if _OPEN not in text:
        return text
    return _rx("mark").sub(lambda m: _own[int(m.group(1))], text)


def finish(text):
    """What reaches the terminal: data escaped, then the engine's marks."""
    return resolve(escape(text))


class BytesEscaper:
    """Escapes a byte stream for a terminal, chunk by chunk: UTF-8 decoded
    incrementally (a character split between chunks is joined; an invalid
    byte shows as U+FFFD: a terminal shows text, not bytes), then `escape`."""

    def __init__(self, raw):
        import codecs

        self.raw = raw
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def write(self, data):
        text = self.decoder.decode(bytes(data))
        self.raw.write(escape(text).encode("utf-8"))
        return len(data)

    def flush(self):
        tail = self.decoder.decode(b"", final=True)
        if tail:
            self.raw.write(escape(tail).encode("utf-8"))
        self.raw.flush()

    def __getattr__(self, name):
        return getattr(self.raw, name)
