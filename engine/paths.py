"""Where the built-in YAML lives and where caches and state go."""

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def builtin_root() -> Path:
    """Folder holding pipelines/, protect/, dictionaries/, schemas/.

    Installed wheel: engine/builtin/.  Source checkout or editable install:
    the repository root, one level above engine/.
    """
    packaged = _PKG / "builtin"
    if (packaged / "schemas").is_dir():
        return packaged
    return _PKG.parent


def builtin_dir(kind_folder: str) -> Path:
    return builtin_root() / kind_folder


def cache_dir() -> Path:
    base = os.environ.get("ENGINE_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "rules-engine"


def state_dir() -> Path:
    base = os.environ.get("ENGINE_STATE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(xdg) / "rules-engine"
