"""kind: words — dictionary rules applied in one pass over the word runs.

A rule names a dictionary slot and an action:
- remove: delete the word or phrase and the blanks after it;
- substitute: replace it by its entry, keeping case ("Production" -> "Prod");
  entries that would not pay under the profile's objective are dropped at
  compile time (`engine explain` lists them).
Rules are tried in order at each run and the first that matches wins, so a
phrase rewrite ("in order to" -> "to") is not then eaten by a filler rule.
Guards (regular expressions) keep a word where its context gives it meaning.
Whole-word matching uses the profile's word runs (wordscan): a word inside an
identifier, a path or a hyphenated term is never taken for a listed word.
"""

import regex

from ..mask import Edit
from ..wordscan import GuardSet, KeyScan, Runs, WordTable, normalize
from .base import Transform


def _form(s):
    if s.islower():
        return "lower"
    if s.isupper() and len(s) > 1:
        return "upper"
    if s[:1].isupper() and (s[1:].islower() or not s[1:].strip()):
        return "title"
    return "other"


def cased(replacement, form):
    if form == "upper":
        return replacement.upper()
    if form == "title":
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _trailing_blanks(text, pos):
    n = len(text)
    while pos < n and text[pos] in " \t":
        pos += 1
    return pos


def _guard(entry, lists):
    """The context guards of one dictionary word or entry (a mapping of the
    dictionary, not a spec), or None; `lists`: the named word lists of its
    dictionary (`\\L<name>` in a guard)."""
    guard = GuardSet(
        entry.get("unless_preceded_by"), entry.get("unless_followed_by"),
        entry.get("unless_after_words") or (), entry.get("unless_before_words") or (),
        entry.get("only_before_words"), entry.get("only_followed_by"), lists,
    )
    return guard or None


class _Rule:
    def __init__(self, spec, ctx, index):
        self.name = spec.name or spec.dictionary
        self.remove = spec.action == "remove"
        cs = spec.case_sensitive
        self.table = WordTable()
        self.skipped = []
        self.phrases = []  # every listed word or phrase, for WordRules.settle
        lists = ctx.lists(spec.dictionary)
        if self.remove:
            for w in ctx.word_list(spec.dictionary):
                guard = _guard(w, lists)
                self.table.add(w["word"], (None, guard), w.get("case_sensitive", cs))
                self.phrases.append((w["word"], guard))
        else:
            entries = ctx.entries(spec.dictionary)
            for full, entry in entries.items():
                # an entry is its replacement, or {to: replacement, guards...}:
                # the context where the rewrite would not say the same thing
                short, guard = (entry, None) if isinstance(entry, str) else (entry["to"], _guard(entry, lists))
                variants = {
                    "lower": (full.lower(), short),
                    "title": (full[:1].upper() + full[1:].lower(), cased(short, "title")),
                    "upper": (full.upper(), short.upper()),
                }
                forms = {form: ctx.rewrite_pays(old, new) for form, (old, new) in variants.items()}
                if any(forms.values()):
                    self.table.add(full, ((short, forms), guard), cs)
                    self.phrases.append((full, guard))
                else:
                    self.skipped.append(full)
        self.guard = GuardSet(spec.unless_preceded_by, spec.unless_followed_by)
        # A capitalised word mid-sentence is usually part of a name ("Active
        # Directory"): substitute it only where this says a sentence starts.
        cap = spec.capitalised_only_after
        self.capitalised_ok = GuardSet(preceded=cap) if cap else None

    def edit(self, text, start, end, payload, runs):
        """The edit for a hit, or None when a guard or the objective says no."""
        sub, guard = payload
        if (guard is not None and guard.blocks(text, start, end, runs)) or self.guard.blocks(text, start, end, runs):
            return None
        if self.remove:
            return Edit(start, _trailing_blanks(text, end), "", self.name)
        short, forms = sub
        form = _form(text[start:end])
        if not forms.get(form, False):
            return None
        if form != "lower" and self.capitalised_ok is not None and not self.capitalised_ok.blocks(text, start, end, runs):
            return None
        new = cased(short, form)
        return Edit(start, _trailing_blanks(text, end) if not new else end, new, self.name)


class WordRules(Transform):
    kind = "words"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.runs = Runs(ctx.word_pattern)
        self.rules = [_Rule(r, ctx, i) for i, r in enumerate(spec.rules)]
        self.skipped = sorted({s for r in self.rules for s in r.skipped})
        # one table for all rules: a run costs one lookup however many rules there are
        self.table = {}
        for rule in self.rules:
            for word, entries in rule.table.compiled().items():
                self.table.setdefault(word, []).extend((exact, rule, hit) for exact, hit in entries)
        self.keys = KeyScan(self.runs.forward, self.table)
        # for settle: which two words follow each other in a listed phrase,
        # which words are listed alone, and how far a phrase reaches
        phrases = [(r, normalize(p).split(), g) for r in self.rules for p, g in r.phrases]
        self.pairs = frozenset((a, b) for _, words, _ in phrases for a, b in zip(words, words[1:]))
        # listed words and phrases whose guard reads the next word (found by
        # their last word), or what comes before (by their first; a
        # capitalised word is rewritten only at a sentence start): an edit
        # beside a phrase changes what its guard reads as much as one beside
        # a word ("Please it is recommended to" -> "it is recommended to")
        self.reads_next = frozenset(
            words[-1] for _, words, g in phrases if g is not None and g.reads_next())
        self.reads_prev = frozenset(
            words[0] for r, words, g in phrases
            if (g is not None and (g.before or g.after_words)) or r.capitalised_ok is not None)
        # listed words whose guard reads a context after them that may run
        # past other words (only_followed_by: "is" reads past adverbs)
        self.reads_far = frozenset(
            words[0] for _, words, g in phrases if len(words) == 1 and g is not None and g.only_after is not None)
        self.runs_fast = self.keys._runs
        self.reach = max((len(" ".join(words)) for _, words, _ in phrases), default=0) + 1
        # how far back (in characters) from an edit a listed word may sit whose
        # guard reads past other words after it (reads_far, found by far_re)
        self.settle_reach_back = spec.settle_reach_back
        self.far_re = None
        if self.reads_far and self.settle_reach_back:
            alternation = "|".join(regex.escape(w) for w in sorted(self.reads_far))
            self.far_re = regex.compile(f"(?r)(?<![\\w'’-])(?:{alternation})(?![\\w'’-])", regex.I | regex.V0)

    def edits(self, text, mask, run):
        return self._scan(text, mask, self.timeout(text, run.timeout_ms_per_mb), [(0, len(text))])

    def settle(self, text, mask, run, applied):
        """Look again only around the edits just made, and only where they
        joined two words of a listed phrase ("make the sure" -> "make sure",
        over a line break too), put a listed word whose guard reads what
        follows it beside a new one, or wrote a listed word: a second pass
        would see exactly these.  Costs a few set lookups per edit."""
        windows = []
        n = len(text)
        delta = 0
        for e in applied:
            a = e.start + delta
            b = a + len(e.text)
            delta += len(e.text) - (e.end - e.start)
            lo = self._rejoined(text, a, b, e.text)
            if lo is None:
                continue
            lo, hi = max(0, min(lo, a - self.reach)), min(n, b + self.reach)
            while lo > 0 and not text[lo - 1].isspace():
                lo -= 1
            while hi < n and not text[hi].isspace():
                hi += 1
            if windows and lo <= windows[-1][1]:
                windows[-1] = (windows[-1][0], hi)
            else:
                windows.append((lo, hi))
        if not windows:
            return []
        return self._scan(text, mask, self.timeout(text, run.timeout_ms_per_mb), windows)

    def _rejoined(self, text, a, b, new):
        """Where to look again after an edit wrote `new` over a..b, or None
        when the edit changed nothing a rule reads: it joined two words of a
        listed phrase, wrote a listed word, or gave a listed word whose guard
        reads what follows it (the word right before, or up to
        `settle_reach_back` characters back for a guard that reads past
        adverbs: "is usually a missing" -> "is usually missing") a new
        neighbour."""
        j, n = b, len(text)
        while j < n and text[j].isspace():
            j += 1
        m = self.runs_fast.match(text, j) if j < n else None
        after = normalize(m.group()) if m is not None else None
        words = normalize(new).split() if new else ()
        if after in self.reads_prev or any(w in self.table for w in words) or (words and (words[-1], after) in self.pairs):
            return a
        start, before = self._word_before(text, a)
        if before is None:
            return None
        if before in self.reads_next or (before, words[0] if words else after) in self.pairs:
            return start
        # further back, on this line, only a word whose guard reads past
        # other words ("is" past adverbs): the last such word before it
        if self.far_re is None:
            return None
        line = text.rfind("\n", 0, a) + 1
        m = self.far_re.search(text, max(line, a - self.settle_reach_back), start)
        return m.start() if m is not None else None

    def _word_before(self, text, i):
        """(start, normalised word) of the word run that ends where the
        blanks before i start, or (i, None)."""
        while i > 0 and text[i - 1].isspace():
            i -= 1
        # the last blank before the word: searched back to its line's start
        # only (a search back to the text's start for a rare tab cost the
        # whole text before each edit); the same position
        line = text.rfind("\n", 0, i)
        k = max(line, text.rfind(" ", line + 1, i), text.rfind("\t", line + 1, i)) + 1
        found = None
        for m in self.runs_fast.finditer(text, k, i):
            found = m if m.end() == i else None
        return (found.start(), normalize(found.group())) if found is not None else (i, None)

    def _scan(self, text, mask, timeout, windows):
        """The edits of the word runs inside the windows ((start, end) at white space, in order)."""
        out = []
        last = 0
        runs = self.runs
        word_re = runs.forward
        complete = WordTable.complete
        blocking = mask.blocking
        scan = self.keys.scan
        for lo, hi in windows:
            for start, end, word, candidates in scan(text, timeout, lo, hi):
                if start < last:
                    continue
                for exact, rule, hit in candidates:
                    if exact is not None and exact != word:
                        continue
                    found = complete(text, end, hit, word_re)
                    if found is None:
                        continue
                    e = rule.edit(text, start, found[0], found[1], runs)
                    if e is None or blocking(e.start, e.end, self.allow):
                        break  # the first rule that knows the word decides
                    out.append(e)
                    last = e.end
                    break
        return out
