"""JSON with comments, as Gemini CLI reads its settings.json and
trustedFolders.json and Copilot CLI its config.json (strip-json-comments:
`//` to the line's end and `/* */`, never inside a string; an unclosed
`/*` runs to the end; no trailing commas).

`blank_comments` puts blanks where the comments were, keeping every line
end, so the text keeps its length: a JSON reader's line and column of an
error are the file's own.  One pass, jumping from quote or slash to the
next (str.find): linear in the text, whatever it holds."""

def comment_spans(text):
    """[(start, end)] of the comments of `text`, in order."""
    spans, i, n = [], 0, len(text)
    nxt = {'"': -1, "/": -1, "\n": -1}  # the next of each, found again only once passed
    while True:
        i = _next_opener(text, i, nxt)
        if i >= n:
            return spans
        if text[i] == '"':
            i = _string_end(text, i, _next(text, i, nxt, "\n"))
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            spans.append((i, end))
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            spans.append((i, end))
            i = end
        else:
            i += 1  # a lone slash: no comment (the JSON reader refuses it)


def _next_opener(text, i, nxt):
    """The index of the next quote or slash at or after i, else len(text);
    `nxt` keeps where each was found, so each is searched past once."""
    return min(_next(text, i, nxt, '"'), _next(text, i, nxt, "/"))


def _next(text, i, nxt, c):
    """The index of the next `c` at or after i, else len(text), kept in `nxt`."""
    if nxt[c] < i:
        found = text.find(c, i)
        nxt[c] = len(text) if found < 0 else found
    return nxt[c]


def _string_end(text, i, line_end):
    """The index after the string opening at i (its closing quote's next),
    a backslash escaping the character after it; its line's end when it is
    not closed on its line (JSON refuses a line end in a string)."""
    j = i + 1
    while True:
        quote = text.find('"', j, line_end)
        if quote < 0:
            return line_end
        k = quote
        while k > j and text[k - 1] == "\\":
            k -= 1
        if (quote - k) % 2 == 0:  # an even run of backslashes escapes none of the quote
            return quote + 1
        j = quote + 1


def blank_comments(text):
    """`text` with each comment's characters blanks, its line ends kept."""
    spans = comment_spans(text)
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out.append(text[last:start])
        out.append("".join(c if c in "\r\n" else " " for c in text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


def has_comments(text):
    return bool(comment_spans(text))
