"""Where the built-in YAML lives and where caches and state go.

The *_str variants use os.path only: the hook hot path avoids importing
pathlib (several milliseconds per process).
"""

import os

# The variables the engine reads as the user's own choices: where its cache,
# state and settings live, the profile, the Redis server, the hooks' off
# switch.  Inside an agent a project may set them too (engine/hooks/projectenv.py
# drops those); tests/test_project_env.py checks that every ENGINE_ or XDG_
# variable the engine reads is here.
USER_VARIABLES = ("ENGINE_PROFILE", "ENGINE_CACHE_DIR", "ENGINE_STATE_DIR", "ENGINE_CONTENT_CACHE",
                  "ENGINE_REDIS_URL", "ENGINE_HOOKS_PASSTHROUGH", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME")

# The `engine` package's folder (this module is engine/base/paths.py).
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def working_folder():
    """The process's folder; None when it is gone (removed under a running
    shell or agent) or cannot be read: there is no project there."""
    try:
        return os.getcwd()
    except OSError:
        return None


def inside(path, root):
    """Whether `path` is `root` or below it, by their text alone: give both
    real (os.path.realpath) to ask where a file really is.  The one
    containment test of the engine (trust, origin, the project boundary)."""
    path, root = str(path), str(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def package_root_str():
    return _PKG


def builtin_root_str():
    """Folder holding pipelines/, protect/, dictionaries/, schemas/.

    Installed wheel: engine/builtin/.  Source checkout or editable install:
    the repository root, one level above engine/.
    """
    packaged = os.path.join(_PKG, "builtin")
    if os.path.isdir(os.path.join(packaged, "schemas")):
        return packaged
    return os.path.dirname(_PKG)


def install_copy_name(stem):
    """The name of a cache file made from this install's built-in YAML (the
    engine settings' and the agents' JSON copies): one per install, so two
    installs sharing a cache folder (a plugin's venv and a pip install, an
    old venv beside a new one) never overwrite each other's copy, which
    would send both back to the YAML at every event."""
    from .digest import sha256

    where = sha256(builtin_root_str().encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{stem}-{where}.json"


def cache_dir_str():
    base = os.environ.get("ENGINE_CACHE_DIR")
    if base:
        return base
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(xdg, "rules-engine")


def config_dir_str():
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(xdg, "rules-engine")


def state_dir_str():
    base = os.environ.get("ENGINE_STATE_DIR")
    if base:
        return base
    xdg = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(xdg, "rules-engine")


def builtin_root():
    from pathlib import Path

    return Path(builtin_root_str())


def builtin_dir(kind_folder):
    return builtin_root() / kind_folder
