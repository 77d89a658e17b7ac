"""The wheel must hold every engine package and every YAML folder
(a non-editable `pip install .` has nothing else)."""

import tomllib
from pathlib import Path

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
    """A folder added later (pipelines/settings) must ship too."""
    mapped = set(_config()["package-dir"].values())
    for top in ("pipelines", "protect", "dictionaries", "schemas"):
        for f in list((ROOT / top).rglob("*.yaml")) + list((ROOT / top).rglob("*.json")):
            folder = f.parent.relative_to(ROOT).as_posix()
            assert folder in mapped, f"map {folder} in [tool.setuptools.package-dir] and list its package"
