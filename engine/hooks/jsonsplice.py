"""Rewriting a settings file by editing its text only where its data
changed: the layout of what did not change, and every comment, stay as the
user wrote them (Gemini CLI reads its settings.json with comments, and
keeps them when it writes the file itself).

Install adds hook groups and keys, uninstall takes them out, so:
- an object keeps its members; a changed member's value is edited in
  place, a removed member goes (its comma with it), new members come at
  its end;
- a list of as many elements changes each in place, unless more of its
  elements stay whole by keeping those it still holds, in order, with the
  new ones at its end, which is what a list of another length does;
- any other change writes the new value anew at the old one's place.
A removed member or element goes with its line when it stood alone on it;
a comment is never removed, unless it was inside what was removed.

The text is parsed for where each value is after its comments were
blanked (base/jsonc.py): same length, so its places are the file's."""

import json
import re

from engine.base.jsonc import blank_comments, comment_spans

_BLANKS = re.compile(r"[ \t\r\n]*")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null")


class Node:
    """A value's place: [start, end) of its text; for an object or a list,
    its items [(key or None, the item's start, value Node)] and the index
    of the comma after each (None after the last)."""

    __slots__ = ("start", "end", "items", "commas")

    def __init__(self, start, end, items=None, commas=None):
        self.start, self.end, self.items, self.commas = start, end, items, commas


def parse(blank):
    """The Node of the one value of `blank` (JSON already read once, so
    well formed)."""
    node, _ = _value(blank, _skip(blank, 0))
    return node


def _skip(blank, i):
    return _BLANKS.match(blank, i).end()


def _value(blank, i):
    if blank[i] in "{[":
        return _container(blank, i)
    end = (_STRING if blank[i] == '"' else _SCALAR).match(blank, i).end()
    return Node(i, end), end


def _container(blank, i):
    close = "}" if blank[i] == "{" else "]"
    items, commas = [], []
    j = _skip(blank, i + 1)
    while blank[j] != close:
        start, key = j, None
        if close == "}":
            match = _STRING.match(blank, j)
            key = json.loads(match.group())
            j = _skip(blank, _skip(blank, match.end()) + 1)  # past the colon
        node, j = _value(blank, j)
        items.append((key, start, node))
        j = _skip(blank, j)
        commas.append(j if blank[j] == "," else None)
        if blank[j] == ",":
            j = _skip(blank, j + 1)
    return Node(i, j + 1, items, commas), j + 1


class Layout:
    """How new text is written: `unit` the indent step (None: one line),
    `eol` the line end."""

    def __init__(self, unit, eol):
        self.unit, self.eol = unit, eol

    def dumps(self, value, indent):
        """`value` as JSON, its lines after the first indented by `indent`."""
        text = json.dumps(value, indent=self.unit, ensure_ascii=False, allow_nan=False)
        return text.replace("\n", self.eol + indent)


def splice(text, old, new, unit, eol):
    """`text` (which reads as `old`) edited to read as `new`."""
    blank = blank_comments(text)
    edits = []
    _change(text, parse(blank), old, new, edits, Layout(unit, eol))
    for start, end, replacement in sorted(edits, key=lambda e: (e[0], e[1] > e[0]), reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _change(text, node, old, new, edits, layout):
    if _same(old, new):
        return
    if node.items is not None and isinstance(old, dict) and isinstance(new, dict) and text[node.start] == "{":
        _change_object(text, node, old, new, edits, layout)
    elif node.items is not None and isinstance(old, list) and isinstance(new, list):
        _change_list(text, node, old, new, edits, layout)
    else:
        edits.append((node.start, node.end, layout.dumps(new, _indent_of(text, node.start))))


def _same(a, b):
    """Equal as JSON: true is not 1, 1.0 is not 1."""
    return type(a) is type(b) and a == b and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _change_object(text, node, old, new, edits, layout):
    kept = []
    for idx, (key, _start, value) in enumerate(node.items):
        if key in new:
            kept.append(idx)
            _change(text, value, old[key], new[key], edits, layout)
    added = [(key, new[key]) for key in new if key not in old]
    _rebuild(text, node, kept, added, edits, layout)


def _change_list(text, node, old, new, edits, layout):
    kept, j = [], 0
    for idx, element in enumerate(old):
        if j < len(new) and _same(element, new[j]):
            kept.append(idx)
            j += 1
    in_place = sum(_same(was, now) for was, now in zip(old, new))
    # Elements changed in place (a group that lost one of its hooks) unless
    # more of the old ones stay whole by moving: [ours, theirs] becoming
    # [theirs, ours] keeps the user's text, and rewrites only ours.
    if len(old) == len(new) and in_place >= len(kept):
        for (_key, _start, value), was, now in zip(node.items, old, new):
            _change(text, value, was, now, edits, layout)
        return
    _rebuild(text, node, kept, [(None, v) for v in new[j:]], edits, layout)


def _rebuild(text, node, kept, added, edits, layout):
    """The edits that take out the items not `kept` and add `added` at the
    end.  A kept item keeps its comma while a kept item follows it."""
    kept_set = set(kept)
    for idx, (_key, start, value) in enumerate(node.items):
        comma = node.commas[idx]
        if idx not in kept_set:
            _take_out(text, start, value.end, comma, edits)
        elif comma is not None and idx == kept[-1]:
            edits.append((comma, _blanks_to_next(text, node, idx, comma + 1, kept_set), ""))
    if added:
        _add(text, node, kept, added, edits, layout)


def _blanks_to_next(text, node, idx, end, kept_set):
    """Where the last kept item's comma ends when it goes: past the blanks
    after it too when the next item, taken out, stands on the same line
    (`[A, B]` without B is `[A]`, not `[A ]`)."""
    if idx + 1 < len(node.items) and idx + 1 not in kept_set:
        start = node.items[idx + 1][1]
        if not text[end:start].strip() and "\n" not in text[end:start]:
            return start
    return end


def _take_out(text, start, end, comma, edits):
    """Remove an item's text, its comma when one follows it, and its line
    when nothing else stands on it."""
    if comma is not None and not text[end:comma].strip():
        end = comma + 1  # the comma right after it, blanks between
        while end < len(text) and text[end] in " \t":
            end += 1  # and the blanks after it ([A, B] less A is [B])
    elif comma is not None:
        edits.append((comma, comma + 1, ""))
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if not text[line_start:start].strip() and not text[end:line_end].strip():
        start, end = line_start, min(line_end + 1, len(text))
    edits.append((start, end, ""))


def _add(text, node, kept, added, edits, layout):
    """Write `added` items at the end of the container."""
    inside = text[node.start + 1:node.end - 1]
    own = _indent_of(text, node.start)
    multi = layout.unit is not None and ("\n" in inside or not node.items)
    if not multi:  # a container written on one line gets its new items so too
        layout = Layout(None, layout.eol)
    indent = _item_indent(text, node, own, layout) if multi else ""
    sep = ("," + layout.eol + indent) if multi else ", "
    body = sep.join(_item_text(key, value, layout, indent) for key, value in added)
    if kept:
        last = node.items[kept[-1]][2].end
        at = _line_end_after(text, last) if multi else last
        lead = (layout.eol + indent) if multi else " "
        if at == last:
            edits.append((last, last, "," + lead + body))
        else:  # the comma after the value, the items after its line's comment
            edits.append((last, last, ","))
            edits.append((at, at, lead + body))
    elif multi:
        tail = "" if "\n" in inside else layout.eol + own
        edits.append((node.start + 1, node.start + 1, layout.eol + indent + body + tail))
    else:
        edits.append((node.start + 1, node.start + 1, body))


def _item_text(key, value, layout, indent):
    text = layout.dumps(value, indent)
    return text if key is None else json.dumps(key, ensure_ascii=False) + ": " + text


def _item_indent(text, node, own, layout):
    """The indent of the container's first item on a line of its own, else
    one step more than the container's line."""
    for _key, start, _value in node.items:
        line_start = text.rfind("\n", 0, start) + 1
        if line_start > node.start and not text[line_start:start].strip():
            return text[line_start:start]
    step = layout.unit if isinstance(layout.unit, str) else " " * layout.unit
    return own + step


def _indent_of(text, pos):
    """The blanks that open the line `pos` is on."""
    line_start = text.rfind("\n", 0, pos) + 1
    line = text[line_start:pos]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _line_end_after(text, pos):
    """Where new lines go after the value ending at `pos`, the last one
    kept: the end of its line when only blanks and comments closed on it
    follow it there, its comma too (the comments stay with their line),
    else `pos`."""
    line_end = text.find("\n", pos)
    line_end = len(text) if line_end < 0 else line_end
    if line_end > pos and text[line_end - 1] == "\r":
        line_end -= 1
    rest = text[pos:line_end].strip().removeprefix(",")  # a comma there goes (_rebuild)
    spans = comment_spans(rest)
    if blank_comments(rest).strip():
        return pos  # a value or a bracket follows on the line
    unclosed = spans and rest[spans[-1][0]:].startswith("/*") and not rest[spans[-1][0] + 2:].endswith("*/")
    return pos if unclosed else line_end
