"""Run a compiled Profile over a text: mask first, then each transform in order."""

from dataclasses import dataclass, field

from engine.base.errors import UserError


@dataclass
class Change:
    transform: str
    line: int  # line in the text as that transform saw it
    before: str
    after: str


@dataclass
class Result:
    text: str
    level: str
    chars_before: int
    chars_after: int
    protected: list  # [(category, text)] found in the input, in order
    replaced_by_design: list = field(default_factory=list)  # spans a transform was allowed to replace
    changes: list = field(default_factory=list)  # filled when explain=True
    spans: list = field(default_factory=list)  # input spans (start, end, category) when explain=True
    tokens_before: dict = field(default_factory=dict)
    tokens_after: dict = field(default_factory=dict)

    def figures(self):
        out = {
            "level": self.level,
            "chars_before": self.chars_before,
            "chars_after": self.chars_after,
            "protected_spans": len(self.protected),
            "replaced_by_design": len(self.replaced_by_design),
        }
        for name in self.tokens_before:
            out[f"tokens_before_{name}"] = self.tokens_before[name]
            out[f"tokens_after_{name}"] = self.tokens_after[name]
        return out


def split_line_endings(text):
    """Work on LF text; remember CRLF (only when every newline is CRLF) and a BOM."""
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    return text, (bom, crlf)


def join_line_endings(text, how):
    bom, crlf = how
    if crlf:
        text = text.replace("\n", "\r\n")
    return ("\ufeff" + text) if bom else text


def compress(profile, text, *, explain=False, tokenizers=()):
    from .sizes import check_input

    check_input(profile, text)
    work, how = split_line_endings(text)
    stage = "the protect categories"
    try:
        mask = profile.protector.mask(work)
        protected = mask.texts(work)
        spans = list(mask.spans) if explain else []
        changes, replaced = [], []
        for t in profile.transforms:
            stage = f"transform {t.name!r}"
            edits = t.edits(work, mask, profile)
            # a transform may look again where its own edits joined words
            # (settle); only a round that shortened the text may ask for
            # another, so this ends whatever the edits are
            while edits:
                if explain:
                    changes.extend(_describe(t.name, work, edits))
                before = len(work)
                work, mask, dropped = mask.apply(work, edits)
                if dropped:
                    replaced.extend((s.category, t.name) for s in dropped)
                    mask = _protect_written(profile.protector, work, mask, edits)
                edits = t.settle(work, mask, profile, edits) if len(work) < before else ()
    except TimeoutError as exc:
        from .protect import WordPatternTimeout

        if isinstance(exc, WordPatternTimeout):
            stage = "the word_pattern"
        raise UserError(
            f"{stage} of profile {profile.name!r} ran past the time budget of "
            f"{profile.timeout_ms_per_mb} ms per MB (pattern_timeout_ms); run `engine validate` "
            f"on the profile to find the runaway pattern, or raise pattern_timeout_ms"
        ) from None
    out = join_line_endings(work, how)
    result = Result(
        text=out, level=profile.level, chars_before=len(text), chars_after=len(out),
        protected=protected, replaced_by_design=replaced, changes=changes, spans=spans,
    )
    if tokenizers:
        from .tokens import count

        for name in tokenizers:
            result.tokens_before[name] = count(text, name)
            result.tokens_after[name] = count(out, name)
    return result


def _written_ranges(edits):
    """Where each edit's new text stands in the text after the edits (they
    are sorted and disjoint)."""
    out, delta = [], 0
    for e in edits:
        start = e[0] + delta
        out.append((start, start + len(e[2])))
        delta += len(e[2]) - (e[1] - e[0])
    return out


def _protect_written(protector, text, mask, edits):
    """The mask with the protected tokens of the text the edits wrote: a
    transform allowed to replace a protected span (a heading made a label,
    a link made its text) writes text that no span covers any longer, and
    the code, quoted text or paths inside it must stay as a second pass,
    which masks them, would leave them.  Each line holding written text is
    scanned once, whole, so a token is read in its context (a line with
    many edits costs one scan, not one per edit)."""
    ranges = [(s, e) for s, e in _written_ranges(edits) if e > s]
    starts = [start for start, _ in ranges]
    found, i = [], 0
    while i < len(ranges):
        first, last, i = _line_group(text, ranges, i)
        tokens = [(s + first, e + first, cat) for s, e, cat in protector.scan(text[first:last])]
        found += _within(tokens, ranges, starts)
    if not found:
        return mask
    return mask.with_matches(found)


def _line_group(text, ranges, i):
    """(start, end) of the lines holding ranges[i] and every later range on
    them, and the index of the first range past them."""
    first = text.rfind("\n", 0, ranges[i][0]) + 1
    last = -1
    while i < len(ranges) and (last < 0 or ranges[i][0] <= last):
        end = text.find("\n", ranges[i][1])
        last = max(last, len(text) if end < 0 else end)
        i += 1
    return first, last, i


def _within(tokens, ranges, starts):
    """The tokens that lie wholly inside one of the ranges (sorted,
    disjoint; `starts` their starts): the range starting last at or before
    each token's start."""
    from bisect import bisect_right

    out = []
    for s, e, cat in tokens:
        r = bisect_right(starts, s) - 1
        if r >= 0 and e <= ranges[r][1]:
            out.append((s, e, cat))
    return out


def _describe(name, text, edits):
    out = []
    line, pos = 1, 0
    for e in edits:
        line += text.count("\n", pos, e.start)
        pos = e.start
        out.append(Change(f"{name}/{e.label}" if e.label else name, line, text[e.start:e.end], e.text))
    return out
