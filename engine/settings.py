"""The engine-wide bounds of pipelines/settings/engine.yaml (reading YAML,
the compiled-profile cache), read once per process.

They guard the reading of profiles themselves, so they come from this
built-in file only, read without those bounds (it ships with the engine).
"""

import os

from .paths import builtin_root_str

_FILE = ("pipelines", "settings", "engine.yaml")
_loaded = None


def path():
    return os.path.join(builtin_root_str(), *_FILE)


def get():
    """The settings document as plain data (schema-checked)."""
    global _loaded
    if _loaded is None:
        from . import schema
        from .textio import read_text
        from .yamlload import load_text

        doc = load_text(read_text(path()), path(), limits=None)
        schema.require_valid(doc, "settings")
        _loaded = doc.data
    return _loaded


def yaml_limits():
    return get()["yaml"]


def cache_limits():
    return get()["cache"]
