"""kind: regex — a pattern and a replacement template.

A template copies groups unchanged with \\g<name>; only the text between the
copied groups counts as changed.  So `## Title` -> `[\\g<title>]` rewrites the
`## ` and adds `]`, and a protected word inside the title does not stop it.
"""

import regex

from .. import regexutil
from ..mask import Edit
from .base import Transform

_REF = regex.compile(r"\\g<(\w+)>|\\(.)", regex.S)
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\"}


def parse_template(template):
    """[literal, group, literal, group, ..., literal] (literals may be '')."""
    pieces, pos, lit = [], 0, []
    for m in _REF.finditer(template):
        lit.append(template[pos:m.start()])
        if m.group(1) is not None:
            pieces.append("".join(lit))
            pieces.append(m.group(1))
            lit = []
        else:
            ch = m.group(2)
            if ch not in _ESCAPES:
                raise regexutil.PatternError(f"unknown escape \\{ch} in replacement; use \\n, \\t, \\\\ or \\g<name>")
            lit.append(_ESCAPES[ch])
        pos = m.end()
    lit.append(template[pos:])
    pieces.append("".join(lit))
    return pieces


def match_start(m, behind):
    """Where a match's change starts: at the match, or earlier at a group
    captured inside a look-behind (`behind`: their numbers).  A pattern may
    so open with a character the engine skips to (a line break) and still
    change the text before it (the blanks that end the line)."""
    start = m.start()
    for g in behind:
        s = m.start(g)
        if 0 <= s < start:
            start = s
    return start


def group_edits(m, pieces, keys=None, start=None):
    """Edits for one match: the gaps between copied groups get the literals.
    keys: the group of each copy as m.span() takes it (numbers, looked up
    once per pattern rather than once per match); start: where the change
    starts when not at the match (match_start)."""
    edits = []
    cursor = m.start() if start is None else start
    literal = pieces[0]
    for i in range(1, len(pieces), 2):
        g = pieces[i] if keys is None else keys[i >> 1]
        gs, ge = m.span(g if keys is not None else (int(g) if g.isdigit() else g))
        if gs < 0:  # group did not take part: copy nothing
            literal += pieces[i + 1]
            continue
        if gs < cursor:
            return None  # groups out of order: cannot be expressed as copies
        edits.append(Edit(cursor, gs, literal))
        cursor = ge
        literal = pieces[i + 1]
    edits.append(Edit(cursor, m.end(), literal))
    return edits


class RegexReplace(Transform):
    kind = "regex"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.pattern = regex.compile(regexutil.scoped(spec.pattern), regex.V0)
        self.pieces = parse_template(spec.replace)
        unknown = [g for g in self.pieces[1::2] if g not in self.pattern.groupindex and not g.isdigit()]
        if unknown:
            raise regexutil.PatternError(f"replacement names group(s) {', '.join(unknown)} that the pattern does not define")
        self.only_if_shorter = spec.only_if_shorter
        self.keys = [int(g) if g.isdigit() else self.pattern.groupindex[g] for g in self.pieces[1::2]]
        # the groups not copied: one captured in a look-behind moves the start back
        copied = set(self.keys)
        self.behind = [g for g in range(1, self.pattern.groups + 1) if g not in copied]

    def edits(self, text, mask, run):
        out = []
        pieces, keys, allow, behind = self.pieces, self.keys, self.allow, self.behind
        blocking = mask.blocking
        for m in self.pattern.finditer(text, timeout=self.timeout(text, run.timeout_ms_per_mb)):
            group = group_edits(m, pieces, keys, match_start(m, behind) if behind else None)
            if group is None:
                continue
            group = [e for e in group if text[e.start:e.end] != e.text]
            if not group:
                continue
            if self.only_if_shorter and sum(len(e.text) - (e.end - e.start) for e in group) >= 0:
                continue
            for e in group:  # admissible(), inlined: this loop runs once per match
                if blocking(e.start, e.end, allow):
                    break
            else:
                out.extend(group)
        return out
