"""Finding secrets with a rule set (the `rules` of a protect category such
as protect/secrets.yaml): each rule a pattern, the keywords one of which a
text must hold for the rule to run at all, the least Shannon entropy its
secret must have, and allow-lists of what is no secret after all.  The
model is gitleaks' (its rules are imported whole into protect/secrets.yaml).

A finding is the pattern's match and, inside it, the secret: the group named
`secret` when it took part, else the whole match.  It is dropped when the
secret's entropy is at or below the rule's `entropy`, or when an allow-list
of the rule set or of the rule says so: a pattern found in the secret, the
match or the match's line (`target`), or one of its `stopwords` inside the
secret (lower-cased).

Nothing is compiled before it is needed: a rule's pattern when a text holds
one of its keywords, an allow-list when a finding is checked against it.  A
RuleSet pickles as its sources.

Rules and allow-lists come complete, the schema's defaults filled in where
the category compiles (engine/core/protectsource.py): no key is defaulted here.
"""

import math

from .literals import Literals, Positions, encoded

# A rule is tried at its starts one by one (a Python call each) while they
# are rarer than one in this many characters; denser, the `regex` module's
# own search through the text (in C) costs less.
_SPARSE = 500
# How far a finding's line is looked for around it (a line is checked only
# by a `line` allow-list; the bound keeps that linear).
_LINE_REACH = 4096


def entropy(text):
    """Shannon entropy of text, in bits per character."""
    if not text:
        return 0.0
    n = len(text)
    counts = {}
    for c in text:
        counts[c] = counts.get(c, 0) + 1
    return -sum(k / n * math.log2(k / n) for k in counts.values())


class Allow:
    """One allow-list: patterns (on the secret, the match or the line) and stopwords."""

    def __init__(self, spec):
        self.target = spec["target"]
        # rules whose id starts with one of these are not allowed by this list (gitleaks' own
        # allow-list leaves the engine's rules alone: they have their own exceptions)
        self.except_ids = tuple(spec["except_ids"])
        self._patterns = list(spec["patterns"])
        self._stopwords = [w.lower() for w in spec["stopwords"]]
        self._compiled = None

    def _rx(self):
        if self._compiled is None:
            import regex

            self._compiled = [regex.compile(p, regex.V0) for p in self._patterns]
        return self._compiled

    def allows(self, secret, match, line):
        if self._stopwords:
            low = secret.lower()
            if any(w in low for w in self._stopwords):
                return True
        if self._patterns:
            subject = match if self.target == "match" else line() if self.target == "line" else secret
            return any(rx.search(subject) for rx in self._rx())
        return False

    def __getstate__(self):
        return dict(self.__dict__, _compiled=None)


class Rule:
    """One rule, compiled on first use."""

    def __init__(self, spec):
        self.id = spec["id"]
        self.source = spec["pattern"]
        self.keywords = tuple(k.lower() for k in spec["keywords"])
        self.entropy = spec.get("entropy")
        # literals one of which every match starts with (lower case): the rule is tried only there
        self.starts = tuple(k.lower() for k in spec["starts"])
        self.allow = [Allow(a) for a in spec["allow"]]
        self._ignorecase = bool(spec.get("ignorecase"))  # a category's plain `patterns` (case_sensitive: false)
        self._compiled = self._anchored = None

    def compiled(self, at_starts=False):
        """The pattern for a search through the text, or (at_starts) for
        match() at one place: anchored, or each try would search the rest
        of the text for the pattern's literal."""
        which = "_anchored" if at_starts else "_compiled"
        if getattr(self, which) is None:
            import regex

            from .regexutil import anchored, scoped

            source = anchored(scoped(self.source)) if at_starts else scoped(self.source)
            compiled = regex.compile(source, regex.V0 | (regex.IGNORECASE if self._ignorecase else 0))
            setattr(self, which, compiled)
            self._grouped = "secret" in compiled.groupindex
        return getattr(self, which)

    def secret_span(self, m):
        if self._grouped and m.start("secret") >= 0:
            return m.span("secret")
        return m.span()

    def __getstate__(self):
        return dict(self.__dict__, _compiled=None, _anchored=None)


def _line(text, start, end):
    """The line (or the lines) a match is on, looked for at most _LINE_REACH away."""
    head = text.rfind("\n", max(0, start - _LINE_REACH), start) + 1 or max(0, start - _LINE_REACH)
    tail = text.find("\n", end, end + _LINE_REACH)
    return text[head: tail if tail >= 0 else min(len(text), end + _LINE_REACH)]


def _matches_at(rule, text, starts, timeout):
    """The rule's matches, tried only where one of its `starts` is: left to
    right, none overlapping (what finditer gives when every match starts
    at one of them)."""
    rx, end = rule.compiled(at_starts=True), 0
    for p in sorted(set().union(*starts)):
        if p < end:
            continue
        m = rx.match(text, p, timeout=timeout)
        if m is not None and m.end() > m.start():
            end = m.end()
            yield m


class RuleSet:
    """Rules and the allow-lists that apply to all of them."""

    def __init__(self, rules, allow=()):
        self.rules = [Rule(r) for r in rules]
        self.allow = [Allow(a) for a in allow]
        self._literals = None
        self._gates = None

    def _index(self):
        if self._literals is None:
            self._literals = Literals([k for r in self.rules for k in r.keywords + r.starts])
        return self._literals

    def _candidates(self, present):
        """The rules a text holding `present` may run, in their order: a rule
        with keywords needs one of them, else one of its starts, else it
        always runs.  (A look-up per literal present, not a test per rule.)"""
        if self._gates is None:
            gates, always = {}, []
            for i, rule in enumerate(self.rules):
                gate = rule.keywords or rule.starts
                if not gate:
                    always.append(i)
                for k in gate:
                    gates.setdefault(k, []).append(i)
            self._gates = (gates, always)
        gates, always = self._gates
        found = set(always)
        for k in present:
            found.update(gates.get(k, ()))
        return [self.rules[i] for i in sorted(found)]

    def findings(self, text, timeout=None):
        """(match start, match end, secret start, secret end, rule id) of
        every finding in text (str), rule by rule.  A rule with keywords
        runs only when the text holds one; a rule with `starts` is tried
        only where one is."""
        data = encoded(text)
        present = self._index().present(data)
        where = None
        for rule in self._candidates(present):
            if rule.keywords and present.isdisjoint(rule.keywords):
                continue
            if rule.starts:
                here = [k for k in rule.starts if k in present]
                if not here:
                    continue
                where = where or Positions(data, text.isascii())
                if sum(map(where.count, here)) * _SPARSE < len(text):
                    matches = _matches_at(rule, text, [where.of(k) for k in here], timeout)
                else:
                    matches = rule.compiled().finditer(text, timeout=timeout)
            else:
                matches = rule.compiled().finditer(text, timeout=timeout)
            for m in matches:
                s, e = rule.secret_span(m)
                if e > s and self._kept(rule, text, m, s, e):
                    end = m.end()
                    while end > s and text[end - 1] == "\n":  # a line break that ends a match is not its own
                        end -= 1
                    yield m.start(), max(end, e), s, e, rule.id

    def _kept(self, rule, text, m, s, e):
        secret = text[s:e]
        if rule.entropy is not None and entropy(secret) <= rule.entropy:
            return False
        lists = [a for a in self.allow if not (a.except_ids and rule.id.startswith(a.except_ids))] + rule.allow
        if not lists:
            return True
        match = m.group()
        return not any(a.allows(secret, match, lambda: _line(text, m.start(), m.end())) for a in lists)

    def __getstate__(self):
        return dict(self.__dict__, _literals=None, _gates=None)
