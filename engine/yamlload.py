"""Safe YAML loading that remembers where every key and value came from.

Two departures from PyYAML's defaults, both to keep word lists honest:
- only true/false are booleans (YAML 1.2); `no`, `on`, `yes`, `off` stay words;
- a key repeated in one mapping is an error, not a silent overwrite.
"""

import re
from dataclasses import dataclass, field

import yaml

from .errors import UserError


class _Loader(yaml.SafeLoader):
    pass


# Copy the resolver table so SafeLoader itself is left untouched.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


@dataclass
class Document:
    """One YAML document: plain data plus the line/column of every node."""

    file: str
    data: object
    marks: dict = field(default_factory=dict)  # path tuple -> (line, col) of the value
    key_marks: dict = field(default_factory=dict)  # path tuple ending in a key -> (line, col) of the key
    block_scalars: set = field(default_factory=set)  # paths of | and > scalars (their text starts a line below)

    def text_line(self, path, line_in_value):
        """File line of a line inside a scalar value (1-based within the value)."""
        start = self.where(path)[0]
        return start + line_in_value if tuple(path) in self.block_scalars else start + line_in_value - 1

    def where(self, path=(), key=False):
        """(line, col) for a path, falling back to the nearest parent."""
        path = tuple(path)
        table = self.key_marks if key else self.marks
        while True:
            if path in table:
                return table[path]
            if key and path in self.marks:
                return self.marks[path]
            if not path:
                return (1, 1)
            path = path[:-1]

    def error(self, message, path=(), key=False):
        line, col = self.where(path, key)
        return UserError(message, self.file, line, col)


def _mark(node):
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _build(loader, node, path, doc, file):
    doc.marks[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if isinstance(key, (list, dict)):
                line, col = _mark(key_node)
                raise UserError("a mapping key must be a plain word", file, line, col)
            if key in out:
                line, col = _mark(key_node)
                raise UserError(f"key {key!r} appears twice in this mapping; keep one", file, line, col)
            doc.key_marks[path + (key,)] = _mark(key_node)
            out[key] = _build(loader, value_node, path + (key,), doc, file)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, path + (i,), doc, file) for i, item in enumerate(node.value)]
    if getattr(node, "style", None) in ("|", ">"):
        doc.block_scalars.add(path)
    return loader.construct_object(node, deep=True)


def load_text(text, file):
    """Parse one YAML document from text; raise UserError with FILE:LINE:COL."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        doc = Document(file=file, data=None)
        if node is not None:
            doc.data = _build(loader, node, (), doc, file)
        return doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark is not None and "<stream end>" in str(exc.problem or ""):
            mark = exc.context_mark  # "got end of file": the place to fix is what was left open
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        problem = exc.problem or exc.context or "malformed YAML"
        raise UserError(f"malformed YAML: {problem}; fix the syntax here", file, line, col) from None
    except yaml.YAMLError as exc:
        raise UserError(f"malformed YAML: {exc}", file) from None
    finally:
        loader.dispose()


def load_file(path):
    """Read and parse a YAML file; unreadable or non-UTF-8 files are user errors."""
    from .textio import read_text

    return load_text(read_text(path), str(path))
