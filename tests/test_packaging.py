"""The wheel must hold every engine package and every YAML folder
(a non-editable `pip install .` has nothing else)."""

from pathlib import Path

import tomllib

from support import code

ROOT = Path(__file__).resolve().parent.parent


def _config():
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def test_every_engine_package_is_listed():
    listed = set(_config()["packages"])
    on_disk = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "engine").rglob("__init__.py")
        if "builtin" not in p.parts
    }
    assert on_disk - listed == set(), "add these to [tool.setuptools] packages"


def test_every_yaml_folder_ships():
    mapped = set(_config()["package-dir"].values())
    for folder in ("pipelines", "pipelines/levels", "protect", "dictionaries", "schemas"):
        assert folder in mapped
        assert any((ROOT / folder).glob("*.yaml")) or any((ROOT / folder).glob("*.json"))


def test_every_folder_holding_yaml_ships():
    """A folder added later (pipelines/settings) must ship too: mapped to a
    package, and that package listed (setuptools ships only what
    `packages` lists, whatever the map says)."""
    config = _config()
    package_of = {folder: package for package, folder in config["package-dir"].items()}
    for top in ("pipelines", "protect", "dictionaries", "schemas"):
        for f in list((ROOT / top).rglob("*.yaml")) + list((ROOT / top).rglob("*.json")):
            folder = f.parent.relative_to(ROOT).as_posix()
            assert folder in package_of, f"map {folder} in [tool.setuptools.package-dir] and list its package"
            assert package_of[folder] in config["packages"], f"list {package_of[folder]} in [tool.setuptools] packages"


def _imports(path):
    import ast

    for node in code.nodes(path):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0]


def _dist_names(specs):
    import re

    return {re.split(r"[<>=!~\[; ]", s, maxsplit=1)[0].strip().lower() for s in specs}


def test_redis_py_is_a_test_dependency_only():
    """The hooks speak RESP themselves (engine/hooks/resp.py); no engine module
    imports redis-py, so installing the engine must not pull it in."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    users = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "engine").rglob("*.py") if "redis" in set(_imports(p)))
    assert users == [], "an engine module imports redis-py; use engine/hooks/resp.py"
    assert "redis" not in _dist_names(project["dependencies"])
    test_users = [p for p in (ROOT / "tests").rglob("*.py") if "redis" in set(_imports(p))]
    assert test_users, "no test imports redis-py any more: drop it from the test extra too"
    assert "redis" in _dist_names(project["optional-dependencies"]["test"])
