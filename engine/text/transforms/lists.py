"""kind: lists — list markup that carries no structure goes, structure stays.

- A list block indented as a whole under a paragraph (" - a\\n - b") carries
  no nesting: its common indentation goes.
- A bullet goes where the line break already says "next item": on an item
  with no continuation line (a wrapped item keeps it, or its continuation
  would read as a nested item), whose parent (if nested) lost its bullet too
  (an unmarked line under a marked or numbered item would read as that
  item's continuation), and whose text would not turn into other markdown.
- Numbers and checklist marks ("[ ]", "[x]") always stay.
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
        pos, n = 0, len(text)
        out = []
        while pos <= n:
            end = text.find("\n", pos)
            end = n if end < 0 else end
            line = text[pos:end]
            stripped = line.lstrip(" ")
            indent = len(line) - len(stripped)
            if not stripped.strip() or "\t" in line[:indent + 1]:
                out.append(None)  # a blank line (or tab indentation: leave it alone)
            elif mask.category_at(pos + indent) in self.regions:
                out.append(None)  # code, frontmatter: not list text
            else:
                m = self.item.match(line)
                if m is not None:
                    out.append(_Line(pos, end, indent, True, m.group("marker") in self.bullets, m.start("rest")))
                else:
                    out.append(_Line(pos, end, indent))
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
        shift = 0
        if self.dedent and (before is None or (not before.item and before.indent == 0)):
            shift = min(b.indent for b in block)
        edits = []
        parents = []  # stack of (indent, marker removed)
        for k, b in enumerate(block):
            if shift:
                edits.append(Edit(b.start, b.start + shift, ""))
            if not b.item:
                continue
            while parents and parents[-1][0] >= b.indent:
                parents.pop()
            nxt = block[k + 1] if k + 1 < len(block) else None
            continued = nxt is not None and not nxt.item and nxt.indent > b.indent - 1
            removable = (
                b.bullet and not continued
                and (not parents or parents[-1][1])
                and self.keep_before.match(text, b.start + b.content_at) is None
            )
            if removable:
                edits.append(Edit(b.start + b.indent, b.start + b.content_at, ""))
            parents.append((b.indent, removable))
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
