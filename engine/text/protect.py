"""Protected-token categories (protect/*.yaml) compiled into scanners.

- Opaque categories (code fences, inline code, frontmatter...) are joined into
  one alternation and scanned left to right, so a fence found first hides the
  backticks inside it, as in markdown.
- Word lists of all token categories share one word-run pass (wordscan).
- Each token pattern category is one more regex pass.
- A category with `rules` (secrets) is a rule set (secretrules.RuleSet):
  each rule runs only where its keywords say it can match.
- An opaque pattern that matches only where a line starts and may start
  with any character (`from_line_break`) would make the alternation tried
  at every position; it is found from the line break before instead, and
  the categories are matched there as written (same spans).
- Token passes never look inside an opaque region: it is protected whole
  already, and code is where adversarial runs of dots, slashes and stars live.
The mask is the union of all spans found.  Every pass, built-in or not, runs
under the profile's time budget (pattern_timeout_ms per MB).
"""

import itertools
import time
from dataclasses import dataclass, field

import regex

from . import regexutil
from .mask import Mask
from .secretrules import RuleSet
from .wordscan import WordTable


@dataclass
class CategorySource:
    """A protect document reduced to what the scanners need."""

    name: str
    stage: str
    patterns: list  # regex sources, scoped and prefixed
    words: list = field(default_factory=list)
    case_sensitive: bool = False
    rules: list = field(default_factory=list)  # secret rules (secretrules.Rule specs)
    allow: list = field(default_factory=list)  # allow-lists of all its rules
    from_line_break: list = field(default_factory=list)  # indexes of patterns found from the line break before


def category_source(data, prefix, rules, allow):
    """`rules`, `allow`: the document's secret rules and allow-lists as a rule
    set reads them, their schema's defaults filled in (engine/core/protectsource.py)."""
    raw = list(data.get("patterns", ()))
    pats = [regexutil.prefixed(regexutil.scoped(p), f"{prefix}{i}_") for i, p in enumerate(raw)]
    # (engine validate names an index that is no such pattern)
    line_break = sorted({i for i in data.get("from_line_break", ()) if i < len(raw) and regexutil.only_at_line_start(raw[i])})
    return CategorySource(
        name=data["name"], stage=data.get("stage", "token"), patterns=pats,
        words=list(data.get("words", ())), case_sensitive=data.get("case_sensitive", False),
        rules=list(rules), allow=list(allow), from_line_break=line_break,
    )


def span_of(m):
    """The protected span of a match: from the earliest start of any of its
    groups to the latest end.  A group captured inside a look-behind thus
    extends the span backwards, so a pattern can start at a rare character
    (`_`, `.`, `@`, `/`), which the regex module finds fast, and still
    protect the whole identifier, file name or address before it."""
    start, end = m.span()
    for s, e in m.regs[1:]:
        if s >= 0:
            if s < start:
                start = s
            if e > end:
                end = e
    return start, end


def pass_timeout(ms_per_mb, text):
    """Seconds one pattern pass over text may take: the budget per MB, at
    least one MB's worth (a short text gets the whole budget)."""
    return ms_per_mb / 1000.0 * max(1.0, len(text) / 1_000_000)


def blank_out(text, spans):
    """The text with every span's characters turned into spaces, line breaks
    kept: positions and lines stay where they were, and nothing inside the
    spans can start or continue a token."""
    out, pos = [], 0
    for start, end, _ in sorted(spans):
        if end <= pos:
            continue
        start = max(start, pos)
        out.append(text[pos:start])
        # one string of spaces per line of the span, its line breaks kept
        # (str methods: a regex substitution per span cost more than the
        # opaque scan that found them)
        chunk = text[start:end]
        if "\n" in chunk:
            out.append("\n".join([" " * len(line) for line in chunk.split("\n")]))
        else:
            out.append(" " * len(chunk))
        pos = end
    out.append(text[pos:])
    return "".join(out)


# The group of a pattern found from the line break before its line (see
# Protector._from_line_breaks); no category's group name starts with "_".
_LINE_BREAK = "_lb"


def _line_break_branch(pattern):
    """The branch that stands for a pattern matching only where a line
    starts: the line break before such a line, where the pattern matches
    after it.  It starts with a line break, so the joined alternation keeps
    a narrow first character."""
    return f"(?P<{_LINE_BREAK}>\n)(?=(?:{pattern}))"


class Protector:
    def __init__(self, categories, word_pattern, timeout_ms_per_mb):
        self.categories = [c.name for c in categories]
        self._timeout_ms_per_mb = timeout_ms_per_mb
        opaque = [c for c in categories if c.stage == "opaque"]
        self._opaque_groups = {}
        branches, later, fast = [], [], []
        for i, c in enumerate(opaque):
            if c.patterns:
                g = f"o{i}"
                self._opaque_groups[g] = c.name
                branch = f"(?P<{g}>" + "|".join(f"(?:{p})" for p in c.patterns) + ")"
                branches.append(branch)
                if not all(map(regexutil.only_at_text_start, c.patterns)):
                    later.append(branch)
                    fast.append(f"(?P<{g}>" + "|".join(
                        _line_break_branch(p) if j in c.from_line_break else f"(?:{p})"
                        for j, p in enumerate(c.patterns)) + ")")
        self._opaque = regex.compile("|".join(branches), regex.V0) if branches else None
        # The scan past position 0 leaves out the categories that can match
        # only at the start of the text (frontmatter): every branch is tried
        # at every position, and even a failing \A costs that (5 ms per MB).
        if len(later) == len(branches):
            self._opaque_later = self._opaque
        else:
            self._opaque_later = regex.compile("|".join(later), regex.V0) if later else None
        # ...and finds the patterns of `from_line_break` from the line break
        # before their line (the same matches: see _from_line_breaks)
        self._opaque_fast = regex.compile("|".join(fast), regex.V0) if fast != later else None
        # One compiled regex per pattern, not per category: the regex module
        # skips ahead fast only when a pattern's first character is narrow,
        # and an alternation of branches loses that.
        self._token = [
            (c.name, regex.compile(p, regex.V0))
            for c in categories if c.stage != "opaque" for p in c.patterns
        ]
        # The literal every match of each starts with, when it says one: a
        # text without it is passed over by a byte search (see scan).
        self._prefixes = [regexutil.required_prefix(p.pattern) for _, p in self._token]
        self._literals = {lit: lit.encode("utf-8", "surrogatepass") for lit in self._prefixes if lit}
        self._rule_sets = [(c.name, RuleSet(c.rules, c.allow)) for c in categories if c.stage != "opaque" and c.rules]
        self._word_re = regex.compile(word_pattern, regex.V0)
        self._words = WordTable()
        for c in categories:
            for w in c.words:
                self._words.add(w, c.name, c.case_sensitive)

    def timeout_for(self, text):
        return pass_timeout(self._timeout_ms_per_mb, text)

    def _opaque_matches(self, text, timeout):
        """The matches of the opaque alternation, left to right: what the
        whole alternation finds at position 0, then the branches that can
        match past it (the same matches: a branch left out cannot match there)."""
        full, later = self._opaque, self._opaque_later
        if later is full and self._opaque_fast is None:
            return full.finditer(text, timeout=timeout)
        first = full.match(text, 0, timeout=timeout)
        if first is not None and first.end() == 0:
            return full.finditer(text, timeout=timeout)  # an empty match: finditer's own stepping
        out = [] if first is None else [first]
        if later is not None:
            start = 0 if first is None else first.end()
            if self._opaque_fast is None:
                out.append(later.finditer(text, start, timeout=timeout))
            else:
                out.append(self._from_line_breaks(text, start, timeout))
            return itertools.chain(out[:-1], out[-1])
        return out

    def _from_line_breaks(self, text, pos, timeout):
        """The matches of the alternation past position 0 from pos on, as its
        finditer gives them, found by the alternation whose `from_line_break`
        patterns stand at the line break before their line.  Where that
        break is found, the alternation as written is matched at it and,
        failing that, where the line starts: what finditer would find there.
        A match that ends with a line break hides the break before the next
        line, so the alternation is matched where that line starts first."""
        later, fast = self._opaque_later, self._opaque_fast
        deadline = None if timeout is None else time.monotonic() + timeout

        def left():  # what is left of the one timeout the whole scan has (None: no bound)
            return None if deadline is None else max(deadline - time.monotonic(), 1e-6)

        while True:
            if pos > 0 and text[pos - 1] == "\n":
                m = later.match(text, pos, timeout=left())
                if m is not None and m.end() > pos:
                    yield m
                    pos = m.end()
                    continue
            for m in fast.finditer(text, pos, timeout=left()):
                at = m.start(_LINE_BREAK)
                if at >= 0:
                    m = later.match(text, at, timeout=left()) or later.match(text, at + 1, timeout=left())
                    if m is None or m.end() == m.start():  # never for the built-in patterns
                        yield from later.finditer(text, at, timeout=left())
                        return
                yield m
                pos = m.end()
                if at >= 0 or (pos > 0 and text[pos - 1] == "\n"):
                    break
            else:
                return

    def scan(self, text):
        """All (start, end, category) found, opaque regions first."""
        timeout = self.timeout_for(text)
        found = []
        if self._opaque is not None:
            groups = self._opaque_groups
            for m in self._opaque_matches(text, timeout):
                if m.end() > m.start():
                    found.append((m.start(), m.end(), groups[m.lastgroup]))
        tokens_text = blank_out(text, found) if found else text
        # Which required literals the text holds.  A regex pass that finds no
        # literal costs what a `str` search costs on a text with a character
        # above U+FFFF (one emoji is enough), but the same search over the
        # UTF-8 bytes is memchr fast and means the same (UTF-8 never matches
        # across a character boundary): most secret formats (`glpat-`,
        # `whsec_`, `-----BEGIN`) are in almost no text.
        if tokens_text.isascii():
            present = {lit for lit in self._literals if lit in tokens_text}
        else:
            data = tokens_text.encode("utf-8", "surrogatepass")
            present = {lit for lit, raw in self._literals.items() if raw in data}
            del data
        for (name, pattern), literal in zip(self._token, self._prefixes):
            if literal and literal not in present:
                continue  # no match can start anywhere
            for m in pattern.finditer(tokens_text, timeout=timeout):
                start, end = span_of(m)
                if end > start:
                    found.append((start, end, name))
        for name, rules in self._rule_sets:
            for start, end, _, _, _ in rules.findings(tokens_text, timeout=timeout):
                found.append((start, end, name))
        try:
            found.extend(self._words.matches(tokens_text, self._word_re, timeout=timeout))
        except TimeoutError:
            raise WordPatternTimeout from None  # the message blames word_pattern, not a category
        return found

    def mask(self, text):
        return Mask.from_matches(self.scan(text))


class WordPatternTimeout(TimeoutError):
    """The word runs (the profile's word_pattern) ran past the time budget."""


def category_matcher(source, word_pattern):
    """A Protector for one category alone (self-tests in `engine validate`)."""
    return Protector([source], word_pattern, 1000)
