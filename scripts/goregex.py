"""Go (RE2) regular expressions, as gitleaks writes them, read into a small
tree and written back for Python's `regex` module (scripts/import_gitleaks.py).

What changes on the way, and why:
- RE2 is linear by construction; a backtracking engine is not.  Every
  unbounded repetition (`*`, `+`, `{n,}`) gets an upper bound, so each start
  position costs a bounded amount of work (linear in the text).
- A flag group `(?i)` in the middle of a group sets the flag for the rest of
  that group in RE2; here it becomes a scoped `(?i:...)` around that rest.
- The secret: gitleaks takes the first capture group that matched (or the
  rule's `secretGroup`).  Here that group is named `secret`; a later group
  that is an alternative to it is named `secret` too (the `regex` module
  lets two groups share a name); every other group stops capturing.  A group
  under a repetition captures only its last turn: it never is the secret.
- The leading `[\\w.-]{0,50}?` of gitleaks' assignment rules (it only widens
  the match to the variable's name) is dropped: an unanchored search finds
  the same secrets without trying 50 characters at every position.
- `\\z` is `\\Z`; a POSIX class `[:alnum:]` is spelled out (RE2's is ASCII).
- The end gitleaks asks of a secret (a quote, a blank, `;`, an escaped line
  break or the end of the text) may also be `,`, `)`, `]`, `}`, `>`, `<`,
  `|` or `&`: a token in parentheses, a list, a tag or a query string ends
  there too (gitleaks misses `(dop_v1_...)` in an error message).
"""

from dataclasses import dataclass, field

POSIX = {"[:alnum:]": "0-9A-Za-z", "[:alpha:]": "A-Za-z", "[:digit:]": "0-9", "[:xdigit:]": "0-9A-Fa-f",
         "[:lower:]": "a-z", "[:upper:]": "A-Z", "[:space:]": "\\t\\n\\v\\f\\r ", "[:word:]": "0-9A-Za-z_"}


@dataclass
class Node:
    kind: str  # seq alt group setflags rep char class esc any anchor
    text: str = ""  # char/class/esc/anchor: as written; setflags/group: the flags
    items: list = field(default_factory=list)  # seq: items; alt: seqs; group/rep: [body]
    group: str = ""  # group: cap, nocap, named, scoped
    lo: int = 0
    hi: object = None  # rep: None = unbounded
    lazy: bool = False
    number: int = 0  # capture groups, in order from 1


class GoRegexError(ValueError):
    pass


class _Parser:
    def __init__(self, source):
        self.s, self.i, self.groups = source, 0, 0

    def peek(self, n=1):
        return self.s[self.i:self.i + n]

    def alt(self):
        seqs = [self.seq()]
        while self.peek() == "|":
            self.i += 1
            seqs.append(self.seq())
        return seqs[0] if len(seqs) == 1 else Node("alt", items=seqs)

    def seq(self):
        items = []
        while self.i < len(self.s) and self.peek() not in ("|", ")"):
            atom = self.atom()
            items.append(self.quantified(atom) if atom.kind != "setflags" else atom)
        return Node("seq", items=items)

    def atom(self):
        c = self.peek()
        if c == "(":
            return self.group()
        if c == "[":
            return self.char_class()
        if c == "\\":
            return self.escape()
        self.i += 1
        if c == ".":
            return Node("any", ".")
        if c in "^$":
            return Node("anchor", c)
        return Node("char", c)

    def group(self):
        s = self.s
        self.i += 1
        node = Node("group", group="cap")
        if s.startswith("?:", self.i):
            node.group, self.i = "nocap", self.i + 2
        elif s.startswith("?P<", self.i):
            end = s.index(">", self.i)
            node.group, node.text, self.i = "named", s[self.i + 3:end], end + 1
        elif s.startswith("?", self.i):
            j = self.i + 1
            while s[j] in "imsU-":
                j += 1
            flags = s[self.i + 1:j]
            if s[j] == ")":
                self.i = j + 1
                return Node("setflags", flags)
            if s[j] != ":":
                raise GoRegexError(f"unknown group syntax at {self.i}: {s[self.i:self.i + 8]!r}")
            node.group, node.text, self.i = "scoped", flags, j + 1
        if node.group in ("cap", "named"):
            self.groups += 1
            node.number = self.groups
        node.items = [self.alt()]
        if self.peek() != ")":
            raise GoRegexError(f"unclosed group at {self.i}")
        self.i += 1
        return node

    def char_class(self):
        s, j = self.s, self.i + 1
        if s[j] == "^":
            j += 1
        if s[j] == "]":
            j += 1
        while s[j] != "]":
            if s[j] == "\\":
                j += 2
            elif s.startswith("[:", j):
                j = s.index(":]", j) + 2
            else:
                j += 1
        text, self.i = s[self.i:j + 1], j + 1
        for name, spelled in POSIX.items():
            text = text.replace(name, spelled)
        return Node("class", text)

    def escape(self):
        s = self.s
        if s.startswith("\\x{", self.i):
            end = s.index("}", self.i)
            text, self.i = s[self.i:end + 1], end + 1
        elif s.startswith("\\x", self.i):
            text, self.i = s[self.i:self.i + 4], self.i + 4
        elif s[self.i + 1] in "pP":
            n = s.index("}", self.i) + 1 if s[self.i + 2] == "{" else self.i + 3
            text, self.i = s[self.i:n], n
        else:
            text, self.i = s[self.i:self.i + 2], self.i + 2
        if text in ("\\b", "\\B", "\\A", "\\z"):
            return Node("anchor", text)
        return Node("esc", text)

    def quantified(self, atom):
        s = self.s
        c = self.peek()
        if c and c in "*+?":
            self.i += 1
            lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        elif c == "{" and self._counted():
            end = s.index("}", self.i)
            body = s[self.i + 1:end]
            self.i = end + 1
            lo_text, _, hi_text = body.partition(",")
            lo = int(lo_text)
            hi = lo if "," not in body else (int(hi_text) if hi_text else None)
        else:
            return atom
        lazy = self.peek() == "?"
        self.i += lazy
        return self.quantified(Node("rep", items=[atom], lo=lo, hi=hi, lazy=lazy))

    def _counted(self):
        end = self.s.find("}", self.i)
        body = self.s[self.i + 1:end] if end > 0 else ""
        lo, comma, hi = body.partition(",")
        return lo.isdigit() and (not comma or not hi or hi.isdigit())


def parse(source):
    p = _Parser(source)
    tree = p.alt()
    if p.i != len(source):
        raise GoRegexError(f"unexpected {source[p.i]!r} at {p.i}")
    return tree


def _captures(node, under_rep=False, outer=()):
    """(number, under a repetition, numbers of the capture groups around it)."""
    if node.kind == "group" and node.group in ("cap", "named"):
        yield node.number, under_rep, outer
        outer = outer + (node.number,)
    if node.kind == "rep" and node.hi != 1:
        under_rep = True
    for item in node.items:
        yield from _captures(item, under_rep, outer)


def secret_groups(tree, secret_group=0):
    """The capture groups named `secret` (see the module's docstring)."""
    if secret_group:
        return {secret_group}
    chosen = set()
    for number, under_rep, outer in _captures(tree):
        named = _group(tree, number).group == "named"
        if not under_rep and not named and not chosen.intersection(outer):
            chosen.add(number)
    return chosen


def _group(node, number):
    if node.kind == "group" and node.number == number:
        return node
    for item in node.items:
        found = _group(item, number)
        if found is not None:
            return found
    return None


def _is_name_prefix(node):
    """gitleaks' `[\\w.-]{0,50}?` before an assignment rule's keyword."""
    return (node.kind == "rep" and node.lazy and node.lo == 0 and node.hi == 50
            and node.items[0].kind == "class" and node.items[0].text == "[\\w.-]")


def _drop_prefix(seq):
    """Drop the name prefix at the start of seq, and at the start of a
    non-capturing group that opens it (gitleaks nests one in the other)."""
    items = seq.items
    at = 1 if items and items[0].kind == "setflags" else 0
    if len(items) > at and _is_name_prefix(items[at]):
        del items[at]
    if len(items) > at and items[at].kind == "group" and items[at].group in ("scoped", "nocap"):
        body = items[at].items[0]
        if body.kind == "seq":
            _drop_prefix(body)


def drop_name_prefix(tree):
    for seq in tree.items if tree.kind == "alt" else [tree]:
        _drop_prefix(seq)
    return tree


class _Emitter:
    def __init__(self, secrets, bound):
        self.secrets, self.bound = secrets, bound

    def emit(self, node):
        kind = node.kind
        if kind == "seq":
            return self.seq(node.items)
        if kind == "alt":
            return self.alt(node.items)
        if kind == "group":
            body = self.emit(node.items[0])
            if node.group == "scoped":
                return f"(?{node.text}:{body})"
            if node.number in self.secrets:
                return f"(?P<secret>{body})"
            return f"(?:{body})"
        if kind == "rep":
            return self.emit(node.items[0]) + self.quantifier(node)
        if kind == "anchor" and node.text == "\\z":
            return "\\Z"
        return node.text

    def quantifier(self, node):
        lo = node.lo
        hi = node.hi if node.hi is not None else max(lo, self.bound)
        q = "?" if (lo, hi) == (0, 1) else f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
        return q + ("?" if node.lazy else "")

    def seq(self, items, flags=""):
        """Items in order; a flag group sets its flags for the rest (RE2)."""
        out = []
        for i, item in enumerate(items):
            if item.kind == "setflags":
                rest = self.seq(items[i + 1:])
                out.append(f"(?{item.text}:{rest})" if rest else "")
                break
            out.append(self.emit(item))
        text = "".join(out)
        return f"(?{flags}:{text})" if flags and text else text

    def alt(self, seqs):
        """Alternatives; flags set in one hold in the alternatives after it (RE2: to the group's end)."""
        out, flags = [], ""
        for seq in seqs:
            out.append(self.seq(seq.items, flags))
            flags += "".join(i.text for i in seq.items if i.kind == "setflags")
        return "|".join(out)


# gitleaks' end of a secret, and the wider one used here (see the docstring).
GITLEAKS_END = "(?:[\\x60'\"\\s;]|\\\\[nr]|$)"
WIDER_END = "(?:[\\x60'\"\\s;,)\\]}><|&]|\\\\[nr]|$)"


def to_python(source, secret_group=0, bound=4096, captures=True):
    """The Python `regex` spelling of a gitleaks rule's Go regex (without
    `captures`, an allow-list's: no group captures)."""
    tree = drop_name_prefix(parse(source))
    secrets = secret_groups(tree, secret_group) if captures else set()
    first = (tree.items[0] if tree.kind == "alt" else tree).items
    lead = ""
    if first and first[0].kind == "setflags" and tree.kind == "seq":
        lead = f"(?{first.pop(0).text})"  # a leading (?i) stays global: it reads as gitleaks wrote it
    return (lead + _Emitter(secrets, bound).emit(tree)).replace(GITLEAKS_END, WIDER_END)


_LIMIT = 64  # literal strings followed at most (beyond: not a literal start)


def _class_char(text):
    """The one lower-case character a class like [Aa] stands for, or None."""
    import regex

    rx = regex.compile(text, regex.V0)
    chars = {chr(c).lower() for c in range(32, 127) if rx.fullmatch(chr(c))}
    return chars.pop() if len(chars) == 1 else None


def _literals(node):
    """(lower-case strings a match of node starts with, whether node matches exactly them); None: unknown."""
    kind = node.kind
    if kind == "char":
        return {node.text.lower()}, True
    if kind == "esc" and len(node.text) == 2 and not node.text[1].isalnum():
        return {node.text[1].lower()}, True
    if kind == "esc" and node.text.lower() == "\\x60":
        return {"`"}, True
    if kind == "class":
        c = _class_char(node.text)
        return ({c}, True) if c else None
    if kind == "anchor" or kind == "setflags":
        return {""}, True
    if kind == "group":
        return _literals(node.items[0])
    if kind == "alt":
        parts = [_literals(s) for s in node.items]
        if any(p is None for p in parts):
            return None
        return set().union(*(p[0] for p in parts)), all(p[1] for p in parts)
    if kind == "rep" and node.hi == 1:
        inner = _literals(node.items[0])
        return ({""} | inner[0], inner[1]) if inner else None
    if kind == "seq":
        return _seq_literals(node.items)
    return None


def _seq_literals(items):
    out = {""}
    for item in items:
        part = _literals(item)
        if part is None:
            return out, False
        out = {a + b for a in out for b in part[0]}
        if len(out) > _LIMIT:
            return None
        if not part[1]:
            return out, False
    return out, True


def leading_literals(source, shortest=2):
    """The lower-case literals one of which every match of the gitleaks
    regex starts with, or None when that cannot be told (or one is shorter
    than `shortest`): the engine then tries the rule only where one occurs."""
    found = _literals(drop_name_prefix(parse(source)))
    if not found or any(len(s) < shortest for s in found[0]):
        return None
    return sorted(found[0])
