"""A text a pattern matches, made from its tree (scripts/goregex.py): the
self-test example of an imported secret rule.

Each repetition takes `length` turns when it may (at least its minimum, at
most its maximum), or its minimum; an alternation takes an end-of-text
branch when it has one (the example ends there), else its first; a
character class gives a random letter or digit when it has one (a secret
looks random), else a blank, a quote or its first character.  The caller
checks the example against the rule and tries other seeds and lengths.
"""

import random

import regex

_PRINTABLE = [chr(c) for c in range(32, 127)] + ["\t", "\n", "\r"]
_ENDS = ("$", "\\z", "^")
_PLAIN = (" ", '"', "=", ":")


def _flags_after(flags, change):
    on = set(flags)
    sign = True
    for c in change:
        if c == "-":
            sign = False
        elif sign:
            on.add(c)
        else:
            on.discard(c)
    return "".join(sorted(on))


class Example:
    def __init__(self, seed, length):
        self.rnd = random.Random(seed)
        self.length = length
        self._memo = {}

    def text(self, node, flags=""):
        kind = node.kind
        if kind == "seq":
            out = []
            for item in node.items:
                if item.kind == "setflags":
                    flags = _flags_after(flags, item.text)
                else:
                    out.append(self.text(item, flags))
            return "".join(out)
        if kind == "alt":
            ends = [s for s in node.items
                    if len(s.items) == 1 and s.items[0].kind == "anchor" and s.items[0].text in _ENDS]
            return self.text(ends[0] if ends else node.items[0], flags)
        if kind == "group":
            return self.text(node.items[0], _flags_after(flags, node.text) if node.group == "scoped" else flags)
        if kind == "rep":
            hi = node.hi if node.hi is not None else max(node.lo, self.length)
            turns = min(max(node.lo, self.length), hi) if node.lo > 3 or (node.lo and hi > 3) else node.lo
            return "".join(self.text(node.items[0], flags) for _ in range(turns))
        if kind == "char":
            return node.text
        if kind == "anchor":
            return ""
        return self.pick(node, flags)

    def pick(self, node, flags):
        key = (node.text, flags)
        if key not in self._memo:
            rx = regex.compile(f"(?{flags}:{node.text})" if flags else node.text, regex.V0)
            self._memo[key] = [c for c in _PRINTABLE if rx.fullmatch(c)]
        chars = self._memo[key]
        alnum = [c for c in chars if c.isalnum()]
        if alnum:
            return self.rnd.choice(alnum)
        plain = [c for c in _PLAIN if c in chars]
        return plain[0] if plain else chars[0]
