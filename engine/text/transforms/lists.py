"""kind: lists — list markup that carries no structure goes, structure stays.

- A list keeps every marker where the markers carry meaning: it continues a
  lead-in (the line before it ends with a colon, or the heading of its
  section, and that lead-in holds a negation, condition, modal or scope
  word: "Agents MUST NOT:" makes each item a prohibition), it is nested
  (without markers Markdown joins the levels into one paragraph), or it is
  a checklist ("- [ ] task").  A list continued after a blank line is one
  list: it keeps one form.
- A list block indented as a whole under a paragraph (" - a\\n - b") carries
  no nesting: its common indentation goes.
- Elsewhere a bullet goes where the line break already says "next item": on
  an item whose continuation lines (a wrapped item) are joined onto its
  line, and whose text would not turn into other markdown.
- One list keeps one form: the bullets of one parent's items at one
  indentation all go, or all stay.
- Numbers and checklist marks ("[ ]", "[x]") always stay.
- The result is a fixed point: a second pass changes nothing (a block keeps
  its indentation unless every mark in it goes; no level removes a lead-in
  word, so a second pass finds the lead-in the first found).
Lines inside protected regions (code, frontmatter) are never touched.
"""

import regex

from ..listscope import ListScope
from ..mask import Edit
from ..regexutil import anchored, scoped
from .base import Transform


class _Line:
    __slots__ = ("start", "end", "indent", "item", "bullet", "content_at")

    def __init__(self, start, end, indent, item=False, bullet=False, content_at=0):
        self.start, self.end, self.indent = start, end, indent
        self.item, self.bullet, self.content_at = item, bullet, content_at


class Lists(Transform):
    kind = "lists"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.item = regex.compile(scoped(spec.item_pattern), regex.V0)
        self.bullets = frozenset(spec.bullets)
        self.keep_before = regex.compile(anchored(scoped(spec.keep_bullet_before)), regex.V0)
        self.dedent = spec.dedent
        self.regions = frozenset(spec.skip_inside)
        # which lists keep every marker (a lead-in, a checklist, nesting); none without lead_in_words
        self.scope = ListScope(spec, ctx) if spec.lead_in_words is not None else None
        self.keep_nested = spec.keep_nested

    def _lines(self, text, mask):
        # one split (C) rather than a find and a slice per line; the blank
        # and tab tests copy nothing (this loop runs for every line of the text)
        out = []
        append, match = out.append, self.item.match
        category_at, regions, bullets = mask.category_at, self.regions, self.bullets
        pos = 0
        for line in text.split("\n"):
            end = pos + len(line)
            stripped = line.lstrip(" ")
            indent = len(line) - len(stripped)
            if not stripped or stripped.isspace() or line.find("\t", 0, indent + 1) >= 0:
                append(None)  # a blank line (or tab indentation: leave it alone)
            elif category_at(pos + indent) in regions:
                append(False)  # code, frontmatter: not list text (nor a lead-in)
            else:
                m = match(line)
                if m is not None:
                    append(_Line(pos, end, indent, True, m.group("marker") in bullets, m.start("rest")))
                else:
                    append(_Line(pos, end, indent))
            pos = end + 1
        return out

    def edits(self, text, mask, run):
        lines = self._lines(text, mask)
        out = []
        self._holds = {}  # line index -> holds a lead-in word (a heading scopes many lists)
        for group in self._groups(text, lines):
            if group.get("continued") or self.scope is not None and self._keeps_markers(text, lines, group, mask):
                # every marker stays, and so does the indentation; a wrapped
                # item's lines are joined, as they are where markers go
                out.extend(self._join_wrapped(text, lines, group, mask))
                continue
            for (a, b), _, para in group["blocks"]:
                out.extend(self._block(text, lines[a:b], lines[para] if para is not None else None, mask))
        return out

    def _groups(self, text, lines):
        """The lists of the text, in order: {"blocks": [((first, end) line
        indexes, the line before it or None, the last paragraph line before
        it or None)], "scopes": the lines that scope its section}.  A block
        is a run of non-blank lines that starts with an item; blocks with
        only blank lines between them are one list (a loose list keeps one
        form).  The line before a block is None after code: a lead-in does
        not read through it.  A section's scopes are its heading and the
        last label line after it (a paragraph of one line ending with a colon:
        what aggressive makes of a heading, so a second pass finds the scope
        the first found)."""
        groups, i, n = [], 0, len(lines)
        before = para = None
        scopes = ()
        after_block = False  # only blank lines since the last block
        while i < n:
            ln = lines[i]
            if not ln or not ln.item:
                if ln is False:
                    before, after_block = None, False
                elif ln is not None:
                    if after_block and lines[i - 1] is None and groups and _continues(lines, groups[-1], ln):
                        # a paragraph indented under the last item after a
                        # blank line continues that item: without the marker
                        # it would be an indented code block
                        # (the list goes on after it: one list, one form)
                        groups[-1]["continued"] = True
                        before = para = i
                        i += 1
                        continue
                    before = para = i
                    after_block = False
                    scopes = self._scopes(text, lines, i, scopes)
                i += 1
                continue
            j = i
            while j < n and lines[j]:
                j += 1
            block = ((i, j), before, para)
            if after_block:
                groups[-1]["blocks"].append(block)
            else:
                groups.append({"blocks": [block], "scopes": scopes})
            before = para = j - 1
            after_block = True
            i = j
        return groups

    def _scopes(self, text, lines, i, scopes):
        """The scopes of the section after paragraph line i: a heading
        starts them anew, a label line replaces the label before it."""
        scope = self.scope
        if scope is None:
            return scopes
        if scope.is_heading(text, lines[i]):
            return (i,)
        alone = (i == 0 or not lines[i - 1]) and (i + 1 == len(lines) or not lines[i + 1] or lines[i + 1].item)
        if alone and scope.ends_lead_in(text, lines[i]):
            # a label scopes what follows it up to the next label ("When
            # creating issues:" does not scope the list after "When posting
            # comments:"); the heading above both still does
            return scopes[:1] + (i,) if scopes and scope.is_heading(text, lines[scopes[0]]) else (i,)
        return scopes

    def _keeps_markers(self, text, lines, group, mask):
        """A checklist keeps every marker; so does a list that continues a
        lead-in holding a lead-in word (the line before one of its blocks,
        an item ending with a colon that the items after it continue, such
        as the parent of a nested list, its section's heading or a label line
        after it) and, with keep_nested, any nested list; unless every item
        stands alone (a name, a key-value line, a label): then no item reads
        differently without its marker."""
        scope = self.scope
        idx = [k for (a, b), _, _ in group["blocks"] for k in range(a, b) if lines[k].item]
        items = [lines[k] for k in idx]
        if any(scope.is_checklist(text, ln) for ln in items):
            return True
        nested = self.keep_nested and any(ln.indent != items[0].indent for ln in items)
        if not nested and not self._led_in(text, lines, group, idx):
            return False
        # asked last: most lists have no reason to keep their markers
        wrapped = dict(_items(lines, group))
        return not all(scope.stands_alone(text, mask, lines[k], [lines[c] for c in wrapped[k]]) for k in idx)

    def _led_in(self, text, lines, group, idx):
        """True when a lead-in of the list holds a lead-in word: the line
        before one of its blocks, the line before an item (the parent of a
        nested list, an item ending with a colon: without its marker it is a
        lead-in line), its section's heading or a label line after it."""
        scope = self.scope
        leads = [before for _, before, _ in group["blocks"] if before is not None]
        leads += [c - 1 for c in idx[1:] if lines[c - 1]]
        for k in leads:
            span = scope.lead_in(text, lines, k)
            if span is not None and scope.holds_word(text, *span):
                return True
        return any(self._holds_word(text, lines, k) for k in group["scopes"])

    def _holds_word(self, text, lines, k):
        """Whether line k (a heading, or a label: its last sentence, as for
        any lead-in) holds a lead-in word, asked once per line."""
        held = self._holds.get(k)
        if held is None:
            held = self._holds[k] = self.scope.holds_word(text, *self.scope.lead_in(text, lines, k))
        return held

    def _join_wrapped(self, text, lines, group, mask):
        """Edits joining each wrapped item's lines into one (a soft line
        break is a blank to Markdown): the continuation lines of an item,
        up to the next item or a shallower line, when all are indented under
        it (a line at the item's own indentation often closes the list: "4.
        Push it.\\nKeep these steps in mind.") and none opens with markup
        (a quote, a table row, a heading)."""
        edits = []
        for k, cont in _items(lines, group):
            if cont and all(lines[c].indent > lines[k].indent
                            and self.keep_before.match(text, lines[c].start + lines[c].indent) is None for c in cont):
                edits.extend(Edit(lines[c - 1].end, lines[c].start + lines[c].indent, " ") for c in cont)
        return [e for e in edits if not mask.blocking(e.start, e.end, self.allow)]

    def _block(self, text, block, before, mask):
        # 1. each item on its own: may its bullet go?
        parent_of, own_ok, stack, continuation = {}, {}, [], {}
        for k, b in enumerate(block):
            if not b.item:
                continue
            while stack and block[stack[-1]].indent >= b.indent:
                stack.pop()
            parent_of[k] = stack[-1] if stack else None
            # the item's own text: its line and the unmarked lines after it,
            # which markdown reads as the same paragraph
            cont = []
            for m in range(k + 1, len(block)):
                if block[m].item or block[m].indent < b.indent:
                    break
                cont.append(m)
            continuation[k] = cont
            own_ok[k] = (b.bullet and self.keep_before.match(text, b.start + b.content_at) is None
                         and all(self.keep_before.match(text, block[m].start + block[m].indent) is None for m in cont))
            stack.append(k)
        # 2. one list keeps one form: the bullets of one parent's items at one
        # indentation all go or all stay (numbered items never count)
        siblings = {}
        for k, ok in own_ok.items():
            if block[k].bullet:
                siblings.setdefault((parent_of[k], block[k].indent), []).append(k)
        list_ok = {key: all(own_ok[k] for k in ks) for key, ks in siblings.items()}
        # 3. a nested item loses its bullet only where its parent lost its mark
        # (an unmarked line under a marked item would read as its continuation)
        removed = {}
        for k in sorted(own_ok):
            p = parent_of[k]
            removed[k] = (block[k].bullet and list_ok[(p, block[k].indent)]
                          and (p is None or removed[p]))
        edits, joined = [], set()
        for k, gone in removed.items():
            if not gone:
                continue
            edits.append(Edit(block[k].start + block[k].indent, block[k].start + block[k].content_at, ""))
            # a wrapped item loses its bullet too: its lines are joined into one,
            # so the next line break still means "next item"
            for m in continuation[k]:
                edits.append(Edit(block[m - 1].end, block[m].start + block[m].indent, " "))
                joined.add(m)
        # 4. the common indentation of a block indented as a whole under a
        # paragraph goes only when no mark is left in it: a block that keeps a
        # number or a bullet would, on a second pass, be taken for a list
        # indented under the paragraph its parent became
        shift = 0
        if self.dedent and all(removed.values()) and (before is None or (not before.item and before.indent == 0)):
            shift = min(b.indent for b in block)
        if shift:
            edits.extend(Edit(b.start, b.start + shift, "") for m, b in enumerate(block) if m not in joined)
        # an edit at a line start (dedent) and the marker edit never overlap:
        # the dedent ends where the indentation of the shallowest item ends
        edits.sort()
        return [e for e in _merge(edits) if not mask.blocking(e.start, e.end, self.allow)]


def _items(lines, group):
    """(line index, range of its continuation lines) of every item of a
    group: an item's text goes on over the unmarked lines after it, up to
    the next item or a shallower line."""
    for (a, b), _, _ in group["blocks"]:
        k = a
        while k < b:
            m = k + 1
            while m < b and not lines[m].item and lines[m].indent >= lines[k].indent:
                m += 1
            if lines[k].item:
                yield k, range(k + 1, m)
            k = m


def _continues(lines, group, ln):
    """True when line ln, after a blank line, is indented at least to the
    text of the last item of the group (Markdown reads it as a paragraph of
    that item)."""
    (a, b), _, _ = group["blocks"][-1]
    last = next((lines[k] for k in range(b - 1, a - 1, -1) if lines[k].item), None)
    return last is not None and ln.indent >= last.content_at


def _merge(edits):
    """Join touching deletions on one line into one edit."""
    out = []
    for e in edits:
        if out and out[-1].end == e.start and not out[-1].text and not e.text:
            out[-1] = Edit(out[-1].start, e.end, "")
        else:
            out.append(e)
    return out

