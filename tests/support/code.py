"""The project's own Python modules, parsed once per test process.

The structural tests (tests/test_layers.py, test_agents_seam.py,
test_specs.py, test_function_size.py, test_packaging.py,
test_command_mentions.py, test_agent_reports.py) each read every module of
engine/ (and some of tests/ and bench/): parsing was most of their time,
about 1.6 s of CPU for one pass over the 400 files, done once per test.
What they get is shared, so they must only read it.
"""

import ast
import functools
from pathlib import Path


def nodes(path):
    """Every node of the module at `path`, in `ast.walk` order (its first is
    the module itself)."""
    path = Path(path)
    stat = path.stat()
    return _nodes(str(path), stat.st_mtime_ns, stat.st_size)


def strings(path, docstrings=False):
    """(line, text) of each string constant of the module at `path`; a
    module's, class's or function's docstring only when `docstrings`."""
    found = nodes(path)
    skip = set() if docstrings else _docstrings(found)
    return [(n.lineno, n.value) for n in found
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


def _docstrings(found):
    docs = set()
    for node in found:
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return docs


@functools.lru_cache(maxsize=None)
def _nodes(path, _mtime_ns, _size):
    """Keyed by the file's stat too: a test that edits a module it reads
    (a copy in its own folder) gets the edit."""
    return tuple(ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)))
