"""kind: flatten_tables — a markdown table becomes one line per row,
each cell written with the level's `pair` template ("{header}: {cell}").

Cells are copied unchanged (code, escaped pipes and protected words inside
them survive); only pipes, padding, the header row and the alignment row are
rewritten.  A table none of whose rows may open with markup
(`unless_row_opens_with`: "- x: y" would read as a list item) stays.  A table whose header row holds protected text is left as it is,
since flattening would remove that row.

With `shortest_alignment_row`, a table that stays a table has its alignment
row written in its shortest form ("|---|:---:|" -> "|-|:-:|"): one dash per
cell and its colons say all that row says.  That can only make flattening
less worth it on a second pass (the row it would remove is shorter), so a
table that stayed stays.
"""

from itertools import accumulate

import regex

from ..mask import Edit
from ..regexutil import anchored, scoped
from .base import Transform, admissible

_DELIM_CELL = regex.compile(r"^\s*:?-+:?\s*$")


def _split_cells(text, start, end, mask):
    """Cell spans of one table row: split on pipes that are not escaped and not
    inside a protected span (inline code may hold a pipe)."""
    cuts = []
    i = start
    while i < end:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "|" and not mask.blocking(i, i + 1):
            cuts.append(i)
        i += 1
    bounds = [start - 1] + cuts + [end]
    cells = [(a + 1, b) for a, b in zip(bounds, bounds[1:])]
    # a leading or trailing pipe leaves an empty edge cell: drop it
    if cells and cuts and not text[cells[0][0]:cells[0][1]].strip() and cuts[0] == _first_nonblank(text, start, end):
        cells = cells[1:]
    if cells and cuts and not text[cells[-1][0]:cells[-1][1]].strip() and cuts[-1] == _last_nonblank(text, start, end):
        cells = cells[:-1]
    return [_strip(text, a, b) for a, b in cells], bool(cuts)


def _first_nonblank(text, start, end):
    while start < end and text[start] in " \t":
        start += 1
    return start


def _last_nonblank(text, start, end):
    while end > start and text[end - 1] in " \t\r":
        end -= 1
    return end - 1


def _strip(text, a, b):
    while a < b and text[a] in " \t":
        a += 1
    while b > a and text[b - 1] in " \t\r":
        b -= 1
    return (a, b)


class FlattenTables(Transform):
    kind = "flatten_tables"

    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.pair = spec.pair
        self.separator = spec.separator
        self.only_if_shorter = spec.only_if_shorter
        self.min_pairs = spec.min_pairs
        # a flattened row must not open with markup ("- x: ..." would read as a list item)
        unless = spec.unless_row_opens_with
        self.unless_opens = regex.compile(anchored(scoped(unless)), regex.V0) if unless else None
        self.shortest_alignment = spec.shortest_alignment_row

    def edits(self, text, mask, run):
        lines, piped = _line_spans(text)
        out = []
        i = 0
        n = len(lines)
        # a table starts at a line holding a pipe (its header row): only
        # those lines are looked at, in order (the other lines' look said no)
        for k in piped:
            if k < i:
                continue  # inside the table before
            if k + 1 >= n:
                break
            i = k
            table = self._table_at(text, lines, i, mask)
            if table is None:
                i += 1
                continue
            edits, next_i = table
            if edits is not None:
                out.extend(edits)
            elif self.shortest_alignment:
                out.extend(self._short_alignment(text, lines[i + 1], mask))
            i = next_i
        return out

    def _short_alignment(self, text, line, mask):
        """The edit writing a staying table's alignment row (known to be one)
        in its shortest form: each cell one dash and its colons, its outer
        pipes kept where it has them."""
        ds, de = line
        delim, _ = _split_cells(text, ds, de, mask)
        cells = []
        for a, b in delim:
            cell = text[a:b]
            cells.append((":" if cell.startswith(":") else "") + "-" + (":" if cell.endswith(":") else ""))
        first, last = _first_nonblank(text, ds, de), _last_nonblank(text, ds, de) + 1
        short = "|".join(cells)
        if text[first] == "|":
            short = "|" + short
        if text[last - 1] == "|" and last - 1 > first:
            short += "|"
        if text[first:last] == short:
            return []
        return [Edit(first, last, short)]

    def _table_at(self, text, lines, i, mask):
        hs, he = lines[i]
        ds, de = lines[i + 1]
        if "|" not in text[hs:he] or mask.blocking(ds, de):
            return None
        delim, had_pipes = _split_cells(text, ds, de, mask)
        if not had_pipes or not delim or not all(_DELIM_CELL.match(text[a:b]) for a, b in delim):
            return None
        headers, _ = _split_cells(text, hs, he, mask)
        if len(headers) != len(delim):
            return None
        rows = []
        j = i + 2
        while j < len(lines):
            rs, re_ = lines[j]
            row = text[rs:re_]
            if not row.strip() or "|" not in row or mask.blocking(rs, rs + 1):
                break
            cells, _ = _split_cells(text, rs, re_, mask)
            rows.append((rs, re_, cells))
            j += 1
        if not rows:
            return None, j
        if any(sum(a < b for a, b in cells) < self.min_pairs for _, _, cells in rows):
            return None, j
        header_names = [text[a:b] for a, b in headers]
        edits = [Edit(hs, rows[0][0], "")]  # header + alignment rows go
        for rs, re_, cells in rows:
            cursor, first = rs, True
            for k, (a, b) in enumerate(cells):
                name = header_names[k] if k < len(header_names) else ""
                if a == b:  # empty cell: say nothing about it
                    continue
                prefix = self.pair.split("{cell}")[0].replace("{header}", name) if name else ""
                if first and self.unless_opens is not None and self.unless_opens.match(prefix + text[a:b]):
                    return None, j
                joiner = "" if first else self.separator
                edits.append(Edit(cursor, a, joiner + prefix))
                cursor, first = b, False
            suffix = self.pair.split("{cell}")[1].replace("{header}", "") if "{cell}" in self.pair else ""
            edits.append(Edit(cursor, _line_end(text, re_), suffix if not first else ""))
        edits = [e for e in edits if text[e.start:e.end] != e.text]
        if self.only_if_shorter and sum(len(e.text) - (e.end - e.start) for e in edits) >= 0:
            return None, j
        if not admissible(mask, edits, self.allow):
            return None, j
        return edits, j


def _line_spans(text):
    """(start, end) of every line, its line break left out, and the indexes
    of the lines holding a pipe (str.split and C loops: a regex match
    object per line cost more than the table pass)."""
    parts = text.split("\n")
    lengths = [len(line) + 1 for line in parts]
    starts = [0, *accumulate(lengths)]
    return [(a, a + n - 1) for a, n in zip(starts, lengths)], [k for k, line in enumerate(parts) if "|" in line]


def _line_end(text, end):
    # keep a CR that belongs to the line ending
    return end - 1 if end > 0 and text[end - 1] == "\r" else end
