"""The house: packages by layer, imports pointing one way only (down).

Read from the code itself (every `import` and `from ... import`, at module
level or inside a function, resolved to the engine module it names), so a
new module is checked the day it is written:

- no import circle between modules;
- no import from a lower layer up to a higher one (LAYERS, lowest first; a
  package imports its own modules freely);
- nothing outside engine.cli imports engine.cli;
- bench/ never imports tests/ (or tests/support), tests never import bench/;
  the one exception is tests/testdata.py, where the recorded data lives (bench
  reads the same data).

The one exception is the package `engine` itself, whose __init__ is the
public API (load_profile, compress, validate): it may import any layer but
the CLI, and no module imports it.
"""

import ast
import functools
from pathlib import Path

from support import code

REPO = Path(__file__).resolve().parent.parent
ENGINE = REPO / "engine"

# Lowest first.  Subsystems sit side by side above the core, in the order
# their imports need: the content cache summarizes with the message
# pipeline and finds transcripts as the session report does; the tool memory
# knows the cache's wrapper command; the hooks compose them all; replay
# drives the hooks; the CLI is a thin layer on top.
LAYERS = [
    "engine.base",
    "engine.text",
    "engine.core",
    "engine.agents",
    "engine.session",
    "engine.messages",
    "engine.ccm",
    "engine.memory",
    "engine.hooks",
    "engine.replay",
    "engine.cli",
]


def module_name(path):
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def engine_modules():
    return {module_name(p): p for p in ENGINE.rglob("*.py") if "builtin" not in p.parts}


def imports_of(path, name, known):
    """Engine modules `path` imports (a `from pkg import sub` counts as sub)."""
    is_pkg = path.name == "__init__.py"
    out = set()
    for node in code.nodes(path):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        elif _by_name(node):  # __import__("engine.x") or import_module("engine.x"): an import all the same
            targets = [node.args[0].value]
        else:
            continue
        for t in targets:
            if t == "engine" or t.startswith("engine."):
                while t not in known and "." in t:
                    t = t.rsplit(".", 1)[0]
                out.add(t)
    return out


def _by_name(node):
    """Whether `node` imports a module named by a constant string (a name
    computed at run time, as the registries do, is theirs to answer for)."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    first = node.args[0]
    return func in ("__import__", "import_module") and isinstance(first, ast.Constant) and isinstance(first.value, str)


def layer_of(mod):
    for i, prefix in enumerate(LAYERS):
        if mod == prefix or mod.startswith(prefix + "."):
            return i
    return None


def graph():
    """{module: the engine modules it imports}, of the tree at ENGINE (read
    once per tree: six tests ask; the self-test swaps ENGINE for its own)."""
    return _graph_of(ENGINE)


@functools.lru_cache(maxsize=None)
def _graph_of(root):
    mods = engine_modules()
    return {m: frozenset(imports_of(p, m, mods) - {m}) for m, p in mods.items()}


def test_every_engine_module_has_a_layer():
    loose = sorted(m for m in engine_modules() if m != "engine" and layer_of(m) is None)
    assert loose == [], f"modules outside every layer package: {loose}; move them into one (LAYERS)"


def test_imports_point_down():
    upward = []
    for mod, targets in sorted(graph().items()):
        if mod == "engine":
            continue  # the public API on top
        for t in sorted(targets):
            if t == "engine" or layer_of(t) > layer_of(mod):
                upward.append(f"{mod} -> {t}")
    assert upward == [], "imports from a lower layer up to a higher one:\n  " + "\n  ".join(upward)


def test_no_import_circles():
    g = graph()
    index, low, stack, on, circles = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in g:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    for v in sorted(g):
        if v not in index:
            visit(v)
    assert circles == [], f"import circles: {circles}"


def test_the_public_api_imports_no_cli():
    assert not any(t.startswith("engine.cli") for t in graph()["engine"])


def test_only_the_cli_imports_the_cli():
    bad = sorted(f"{m} -> {t}" for m, ts in graph().items() for t in ts
                 if t.startswith("engine.cli") and not m.startswith("engine.cli"))
    assert bad == [], bad


def _top_imports(path):
    out = set()
    for node in code.nodes(path):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.add(node.module.split(".")[0])
    return out


def test_bench_and_tests_do_not_import_each_other():
    test_modules = {p.stem for p in (REPO / "tests").rglob("*.py")} | {"tests", "support"}
    bench_modules = {p.stem for p in (REPO / "bench").glob("*.py")} | {"bench"}
    own_bench = bench_modules - {"common"}  # bench's own helpers, by their names
    bad = []
    for p in (REPO / "bench").glob("*.py"):
        bad += [f"bench/{p.name} -> {m}" for m in _top_imports(p) & (test_modules - {"testdata"})]
    for p in (REPO / "tests").rglob("*.py"):
        bad += [f"{p.relative_to(REPO)} -> {m}" for m in _top_imports(p) & (own_bench | {"bench", "common"})]
    assert bad == [], bad


def test_the_contract_can_fail(tmp_path):
    """The checks see a circle and an upward import when there is one."""
    global REPO, ENGINE
    saved = REPO, ENGINE
    try:
        REPO = tmp_path
        ENGINE = tmp_path / "engine"
        for pkg in ("base", "core"):
            (ENGINE / pkg).mkdir(parents=True)
            (ENGINE / pkg / "__init__.py").write_text("")
        (ENGINE / "__init__.py").write_text("")
        (ENGINE / "base" / "a.py").write_text("from engine.core import b\n")
        (ENGINE / "core" / "b.py").write_text("def f():\n    from ..base import a\n")
        g = graph()
        assert g["engine.base.a"] == {"engine.core.b"} and g["engine.core.b"] == {"engine.base.a"}
        try:
            test_imports_point_down()
        except AssertionError as exc:
            assert "engine.base.a -> engine.core.b" in str(exc)
        else:
            raise AssertionError("the upward import was not seen")
        try:
            test_no_import_circles()
        except AssertionError as exc:
            assert "engine.base.a" in str(exc) and "engine.core.b" in str(exc)
        else:
            raise AssertionError("the circle was not seen")
    finally:
        REPO, ENGINE = saved
