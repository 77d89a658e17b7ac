"""kind: mermaid_edges — a mermaid flowchart becomes its edges as one line of
text ("[flowchart LR: A -> B, C; B -> C]") where that is shorter.

A diagram is often the only statement of a dependency direction, so it is
never dropped: a diagram this kind cannot read whole (another diagram type,
subgraphs, a statement it does not know) is kept exactly as written.  Node
labels are shown where a node has one (the label is what a reader sees);
styling statements (classDef, class, style, linkStyle, click) and comments
carry no relation and go.  Arrow spellings and the output templates come
from the level's YAML.
"""

import regex

from ..mask import Edit
from ..regexutil import scoped
from .base import Transform

# Mermaid's own grammar (node shapes, arrows), a fact of the input format;
# which arrows are read and how they are written out is the level's YAML.
_SHAPES = (r"\[\[.*?\]\]|\[\(.*?\)\]|\(\(\(.*?\)\)\)|\(\(.*?\)\)|\(\[.*?\]\)|\[/.*?/\]|\[\\.*?\\\]|\[/.*?\\\]|\[\\.*?/\]|"
           r"\[.*?\]|\(.*?\)|\{\{.*?\}\}|\{.*?\}|>.*?\]")
_NODE = regex.compile(r"[ \t]*(?P<id>[A-Za-z0-9_]\w*(?:[.-]\w+)*)(?P<shape>" + _SHAPES + r")?(?::::\w+)?[ \t]*")
_AMP = regex.compile(r"[ \t]*&[ \t]*")
_ARROW = regex.compile(
    r"[ \t]*(?:(?P<a1>--|==|-\.)[ \t]+(?P<t>[^\n|>]+?)[ \t]+(?P<a2><?(?:-{2,}|={2,}|\.-+|\.+-)[>ox]?)"
    r"|(?P<arrow><?(?:-{2,}|={2,}|-\.+-|~~~)[>ox]?)(?:\|(?P<label>[^|\n]*)\|)?)[ \t]*"
)


def _label(shape):
    if not shape:
        return None
    inner = regex.sub(r"^[\[\(\{>/\\]+|[\]\)\}/\\]+$", "", shape).strip()
    if len(inner) >= 2 and inner[0] == inner[-1] == '"':
        inner = inner[1:-1]
    return inner or None


class MermaidEdges(Transform):
    kind = "mermaid_edges"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.fence = regex.compile(scoped(spec.pattern), regex.V0)
        self.header = regex.compile(scoped(spec.diagram_header), regex.V0)
        self.skip = regex.compile(scoped(spec.skip_statement), regex.V0)
        self.arrows = dict(spec.arrows)
        self.edge = spec.edge
        self.labelled = spec.labelled_edge
        self.group_sep = spec.target_separator
        self.sep = spec.separator
        self.template = spec.template

    def edits(self, text, mask, run):
        out = []
        for m in self.fence.finditer(text, timeout=self.timeout(text, run.timeout_ms_per_mb)):
            # a fence whose line break before it is already inside a region
            # this transform may enter (a code fence) is content of an outer
            # fence ("````markdown" around an example diagram): an example
            # of what to write, not a diagram to read
            if m.start() > 0 and mask.category_at(m.start() - 1) in self.allow:
                continue
            body = m.group("body")
            new = self.render(body)
            if new is None or len(new) >= m.end() - m.start():
                continue
            if not mask.blocking(m.start(), m.end(), self.allow):
                out.append(Edit(m.start(), m.end(), new))
        return out

    def render(self, body):
        """The one-line form of a flowchart, or None to keep it as written."""
        lines = [ln.strip() for ln in body.split("\n")]
        lines = [ln for ln in lines if ln]
        if not lines:
            return None
        head = self.header.fullmatch(lines[0])
        if head is None:
            return None
        labels, edges = {}, []
        for statement in (s.strip() for ln in lines[1:] for s in ln.split(";")):
            if not statement or self.skip.match(statement):
                continue
            parsed = self._statement(statement, labels)
            if parsed is None:
                return None  # something this kind does not read: keep the diagram
            edges.extend(parsed)
        if not edges:
            return None

        def name(node):
            return labels.get(node) or node

        groups = []  # (source, arrow text, [targets]) in order, same source and arrow merged
        for src, arrow, label, dst in edges:
            key = (src, arrow, label)
            if groups and groups[-1][0] == key:
                groups[-1][1].append(dst)
            else:
                groups.append((key, [dst]))
        parts = []
        for (src, arrow, label), dsts in groups:
            tpl = self.labelled if label else self.edge
            parts.append(tpl.format(src=name(src), arrow=arrow, label=label or "",
                                    dst=self.group_sep.join(name(d) for d in dsts)))
        return self.template.format(header=" ".join(head.group(0).split()), edges=self.sep.join(parts))

    def _statement(self, s, labels):
        pos, n = 0, len(s)
        chain, edges = [], []
        arrow = None
        while True:
            group = []
            while True:
                m = _NODE.match(s, pos)
                if m is None:
                    return None
                node = m.group("id")
                lab = _label(m.group("shape"))
                if lab and lab != node:
                    labels[node] = lab
                group.append(node)
                pos = m.end()
                a = _AMP.match(s, pos)
                if a is None or a.end() == pos:
                    break
                pos = a.end()
            if arrow is not None:
                for src in chain:
                    for dst in group:
                        edges.append((src, arrow[0], arrow[1], dst))
            chain = group
            if pos >= n:
                return edges
            a = _ARROW.match(s, pos)
            if a is None:
                return None
            spelled = a.group("a2") if a.group("a1") else a.group("arrow")
            text_arrow = self.arrows.get(spelled)
            if text_arrow is None:
                return None
            arrow = (text_arrow, (a.group("t") or a.group("label") or "").strip().strip('"'))
            pos = a.end()
