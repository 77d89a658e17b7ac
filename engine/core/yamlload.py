"""Safe YAML loading that remembers where every key and value came from.

Two departures from PyYAML's defaults, both to keep word lists honest:
- only true/false are booleans (YAML 1.2); `no`, `on`, `yes`, `off` stay words;
- a key repeated in one mapping is an error, not a silent overwrite.

And bounds, so that no file can make loading slow or large
(pipelines/settings/engine.yaml): file size, aliases, nodes once aliases are
expanded (an alias bomb), nesting depth (a file of 100,000 `[`).
"""

import marshal
import os
import re
from dataclasses import dataclass, field

import yaml

from engine.base.errors import UserError


class _Loader(yaml.SafeLoader):
    """Counts aliases and nesting depth while composing, before anything is
    expanded: a bomb stops at its first alias too many."""

    def __init__(self, stream, file="<yaml>", limits=None):
        super().__init__(stream)
        self._file = file
        self._limits = limits
        self._aliases = 0
        self._depth = 0

    def _refuse(self, message):
        mark = self.peek_event().start_mark
        raise UserError(message, self._file, mark.line + 1, mark.column + 1)

    def compose_node(self, parent, index):
        lim = self._limits
        if lim is None:
            return super().compose_node(parent, index)
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > lim["max_aliases"]:
                self._refuse(f"more than {lim['max_aliases']} aliases (*name) in one file; write the values out "
                             f"(max_aliases in {_settings_name()})")
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > lim["max_depth"]:
            self._refuse(f"lists and mappings nested more than {lim['max_depth']} deep; flatten the document "
                         f"(max_depth in {_settings_name()})")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _settings_name():
    return "pipelines/settings/engine.yaml"


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


# libyaml's loader where PyYAML was built with it, else the pure-Python one
_FastLoader: type = getattr(yaml, "CSafeLoader", _Loader)


class _BuiltinLoader(_FastLoader):
    """The engine's own files, parsed by libyaml when PyYAML has it (twenty
    times faster than the pure-Python parser: protect/secrets.yaml holds a
    whole rule set).  They are trusted, so the bounds that guard a user's
    or a project's file are not counted while composing."""

    def __init__(self, stream, file="<yaml>", limits=None):
        super().__init__(stream)


_BuiltinLoader.yaml_implicit_resolvers = _Loader.yaml_implicit_resolvers


@dataclass
class Document:
    """One YAML document: plain data plus the line/column of every node."""

    file: str
    data: object
    marks: dict = field(default_factory=dict)  # path tuple -> (line, col) of the value
    key_marks: dict = field(default_factory=dict)  # path tuple ending in a key -> (line, col) of the key
    block_scalars: set = field(default_factory=set)  # paths of | and > scalars (their text starts a line below)
    source: tuple | None = None  # (path, text) of the file it was read from, as read

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


def _construct(loader, node, file):
    try:
        value = loader.construct_object(node, deep=True)
    except yaml.YAMLError:
        raise
    except (ValueError, OverflowError, RecursionError) as exc:  # e.g. an integer of 100,000 digits
        line, col = _mark(node)
        reason = "a number too long to read" if isinstance(exc, ValueError) and "digits" in str(exc) else "a value that cannot be read"
        raise UserError(f"{reason}; shorten it", file, line, col) from None
    if isinstance(value, str) and "\0" in value:
        # "\0" in a double-quoted string: no name, path, word or template
        # holds one, and every file call raises ValueError on it.
        line, col = _mark(node)
        raise UserError("this string holds a NUL character (\\0 or \\x00); remove it", file, line, col)
    return value


def _build(loader, node, path, doc, file, limits=None):
    if limits is not None:
        if len(doc.marks) >= limits["max_nodes"]:
            line, col = _mark(node)
            raise UserError(f"this file expands to more than {limits['max_nodes']} values (aliases inside aliases?); "
                            f"write it without nested aliases (max_nodes in {_settings_name()})", file, line, col)
        if len(path) > limits["max_depth"]:  # an alias that contains itself
            line, col = _mark(node)
            raise UserError(f"lists and mappings nested more than {limits['max_depth']} deep (an alias inside itself?); "
                            f"flatten the document (max_depth in {_settings_name()})", file, line, col)
    doc.marks[path] = _mark(node)
    if isinstance(node, yaml.MappingNode):
        out = {}
        for key_node, value_node in node.value:
            key = _construct(loader, key_node, file)
            if isinstance(key, (list, dict)):
                line, col = _mark(key_node)
                raise UserError("a mapping key must be a plain word", file, line, col)
            if key in out:
                line, col = _mark(key_node)
                raise UserError(f"key {key!r} appears twice in this mapping; keep one", file, line, col)
            doc.key_marks[path + (key,)] = _mark(key_node)
            out[key] = _build(loader, value_node, path + (key,), doc, file, limits)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, path + (i,), doc, file, limits) for i, item in enumerate(node.value)]
    if getattr(node, "style", None) in ("|", ">"):
        doc.block_scalars.add(path)
    return _construct(loader, node, file)


_DEFAULT = object()


class MalformedYAML(UserError):
    """The text is not YAML at all (a syntax error), as opposed to YAML that
    breaks a bound: `engine validate` tells a Markdown file by it."""


def load_text(text, file, limits=_DEFAULT, builtin=False):
    """Parse one YAML document from text; raise UserError with FILE:LINE:COL.
    limits: the bounds of engine.core.settings (the default), or None for the
    engine's own settings file; `builtin`: one of the engine's own files."""
    if limits is _DEFAULT:
        from .settings import yaml_limits

        limits = yaml_limits()
    try:
        loader = (_BuiltinLoader if builtin else _Loader)(text, file, limits)
    except yaml.reader.ReaderError as exc:  # the reader checks every character before it parses
        raise _unprintable(text, exc, file) from None
    try:
        node = loader.get_single_node()
        doc = Document(file=file, data=None)
        if node is not None:
            doc.data = _build(loader, node, (), doc, file, limits)
        return doc
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        if exc.context_mark is not None and "<stream end>" in str(exc.problem or ""):
            mark = exc.context_mark  # "got end of file": the place to fix is what was left open
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        problem = exc.problem or exc.context or "malformed YAML"
        raise MalformedYAML(f"malformed YAML: {problem}; fix the syntax here", file, line, col) from None
    except yaml.YAMLError as exc:
        raise MalformedYAML(f"malformed YAML: {exc}", file) from None
    except RecursionError:  # a bound above was not enough for this Python's stack
        raise UserError("nested too deep to read; flatten the document", file) from None
    finally:
        loader.dispose()


def _unprintable(text, exc, file):
    """The UserError for a character YAML does not allow (a control
    character, U+FFFE...), at its line and column, named escaped."""
    where = exc.position if isinstance(exc.position, int) and 0 <= exc.position <= len(text) else None
    line = col = None
    if where is not None:
        line = text.count("\n", 0, where) + 1
        col = where - (text.rfind("\n", 0, where) + 1) + 1
    char = exc.character if isinstance(exc.character, int) else ord(exc.character) if exc.character else 0
    return MalformedYAML(f"malformed YAML: the character U+{char:04X} may not appear in YAML; remove it, or write it "
                         f"as \\u{char:04X} in a double-quoted string", file, line, col)


# Parsed files of this process, by path and text: `engine validate` resolves
# a dozen profiles that share most of their files, and the pure-Python
# parser (kept for its line numbers) is its main cost.  Reading a file again
# is cheap; keying on its text (not its mtime, which can miss an edit in the
# same clock tick) means a changed file is always parsed again.
_PARSED: dict = {}


def load_file(path):
    """Read and parse a YAML file; unreadable, oversized or non-UTF-8 files
    are user errors (the size is checked before anything is read).  A file
    read before with the same text is not parsed again; the caller gets its
    own copy of the data, free to change."""
    from engine.base.paths import builtin_root_str
    from engine.base.textio import read_text

    from .settings import yaml_limits

    limits = yaml_limits()
    text = read_text(path, limits["max_file_bytes"], f"max_file_bytes in {_settings_name()}")
    key = (str(path), text)
    doc = _PARSED.get(key)
    if doc is None:
        builtin = os.path.realpath(str(path)).startswith(os.path.realpath(builtin_root_str()) + os.sep)
        doc = _PARSED[key] = load_text(text, str(path), limits, builtin)
    return Document(file=doc.file, data=_copy(doc.data), marks=doc.marks,
                    key_marks=doc.key_marks, block_scalars=doc.block_scalars, source=key)


def _copy(data):
    try:
        return marshal.loads(marshal.dumps(data))  # plain YAML data: far cheaper than deepcopy
    except ValueError:
        import copy

        return copy.deepcopy(data)
