"""Small functions: no function or method under engine/ is longer than 60 lines.

A function's length runs from its `def` line to its last line (decorators
left out), as `ast` reports them.  A long function is split into named steps
that each do one job; the failure lists every one over the limit, with its
file:line and length, so one run shows all that are left.
"""
import ast
from pathlib import Path

from support import code

ENGINE = Path(__file__).resolve().parent.parent / "engine"
LIMIT = 60


def _long_functions(root: Path, limit: int) -> list[tuple[str, int, str, int]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in code.nodes(path):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append((str(path.relative_to(root.parent)), node.lineno, node.name, length))
    return found


def test_no_function_over_sixty_lines():
    long = _long_functions(ENGINE, LIMIT)
    listing = "\n".join(f"{path}:{line} {name} ({length} lines)" for path, line, name, length in long)
    assert not long, f"functions over {LIMIT} lines:\n{listing}"


def test_checker_counts_from_def_without_decorators(tmp_path):
    pkg = tmp_path / "engine"
    pkg.mkdir()
    body = "\n".join(f"    x{i} = {i}" for i in range(3))
    (pkg / "m.py").write_text(f"@staticmethod\n@staticmethod\ndef f():\n{body}\n", encoding="utf-8")
    assert _long_functions(pkg, 4) == []
    assert _long_functions(pkg, 3) == [("engine/m.py", 3, "f", 4)]
