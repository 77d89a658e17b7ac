"""kind: lists — list markup that carries no structure goes, structure stays.

- A list block indented as a whole under a paragraph (" - a\\n - b") carries
  no nesting: its common indentation goes.
- A bullet goes where the line break already says "next item": on an item
  whose continuation lines (a wrapped item) are joined onto its line, whose
  parent (if nested) lost its bullet too
  (an unmarked line under a marked or numbered item would read as that
  item's continuation), and whose text would not turn into other markdown.
- One list keeps one form: the bullets of one parent's items at one
  indentation all go, or all stay.
- Numbers and checklist marks ("[ ]", "[x]") always stay.
- The result is a fixed point: a second pass changes nothing (a block keeps
  its indentation unless every mark in it goes).
Lines inside protected regions (code, frontmatter) are never touched.
"""

import regex

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
        self.item = regex.compile(scoped(spec["item_pattern"]), regex.V0)
        self.bullets = frozenset(spec["bullets"])
        self.keep_before = regex.compile(anchored(scoped(spec["keep_bullet_before"])), regex.V0)
        self.dedent = spec.get("dedent", True)
        self.regions = frozenset(spec["skip_inside"])

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
                append(None)  # code, frontmatter: not list text
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
        i, n = 0, len(lines)
        prev_para = None  # the last non-blank line before the current block
        while i < n:
            ln = lines[i]
            if ln is None or not ln.item:
                if ln is not None:
                    prev_para = ln
                i += 1
                continue
            j = i
            while j < n and lines[j] is not None:
                j += 1
            block = lines[i:j]
            out.extend(self._block(text, block, prev_para, mask))
            prev_para = block[-1]
            i = j
        return out

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


def _merge(edits):
    """Join touching deletions on one line into one edit."""
    out = []
    for e in edits:
        if out and out[-1].end == e.start and not out[-1].text and not e.text:
            out[-1] = Edit(out[-1].start, e.end, "")
        else:
            out.append(e)
    return out
