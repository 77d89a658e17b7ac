"""The engine-wide bounds of pipelines/settings/engine.yaml (reading YAML,
the compiled-profile cache, what one hook process may cost), read once per
process.  A hook reads them with `plain()`: a JSON copy in the cache folder,
checked against the YAML file's content, so a warm hook imports no YAML.

They guard the reading of profiles themselves, so they come from this
built-in file only, read without those bounds (it ships with the engine).
"""

import os

from .paths import builtin_root_str

_FILE = ("pipelines", "settings", "engine.yaml")
_loaded = None
_plain = None  # the same without schema validation (plain())
SUFFIX = ".settings"


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


def plain():
    """The settings as plain data without importing YAML when the cache
    holds a copy of this file's current content; else read (and copy) it.
    Only the engine's own built-in file is read here: the bounds a hook
    arms before it loads anything (engine/hooks/dispatch.py)."""
    global _plain
    if _plain is not None:
        return _plain
    from . import cache

    key = ("settings", path())
    # Its own suffix: the cache keeps the newest `max_entries` of each suffix,
    # and every hook reads this one entry; compiling many profiles must
    # never evict it.
    data = cache.load_plain(key, SUFFIX)
    if isinstance(data, dict):
        _plain = data
        return data
    if _loaded is not None:
        _plain = _loaded  # read already (and checked): the copy is still written for the next hook
    else:
        # Without JSON Schema: this is the engine's own file (validated by
        # `engine validate` and the test suite), read first thing by every
        # hook on a cold cache, where each millisecond counts 40 times.
        from .textio import read_text
        from .yamlload import load_text

        _plain = load_text(read_text(path()), path(), limits=None).data
    cache.store_plain(key, _plain, [(path(), cache.file_digest(path()))], SUFFIX)
    return _plain


def hook_bounds():
    return plain()["hooks"]


def compile_limits():
    return plain()["compile"]


def glob_limits():
    return plain()["globs"]


def redis_limits():
    return plain()["redis"]
