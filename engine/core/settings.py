"""The engine-wide bounds of pipelines/settings/engine.yaml (reading YAML,
the compiled-profile cache, what one hook process may cost), read once per
process.

They guard the reading of profiles themselves, so they come from this
built-in file only, read without those bounds (it ships with the engine;
`engine validate` and the test suite check it against its schema).  A hook
arms its deadline from them before it loads anything, so they are read from
a JSON copy in the cache folder, checked against the YAML file's size and
time and the engine's version: a warm hook imports no YAML.  The copy is a
file of its own, never evicted by compiled profiles.
"""

import os

from engine.base.paths import builtin_root_str, cache_dir_str, install_copy_name

_FILE = ("pipelines", "settings", "engine.yaml")
_plain = None


def path():
    return os.path.join(builtin_root_str(), *_FILE)


def _copy_path():
    return os.path.join(cache_dir_str(), install_copy_name("engine-settings"))


def plain():
    """The settings as plain data: the cache folder's copy when it matches
    the YAML file, else the YAML file (and a new copy)."""
    global _plain
    if _plain is not None:
        return _plain
    from engine.base.files import folder_is_private
    from engine.base.version import __version__

    src = path()
    st = os.stat(src)
    stamp = [__version__, st.st_size, st.st_mtime_ns]
    copy = _copy_path()
    if folder_is_private(os.path.dirname(copy)):
        try:
            from engine.base.fastjson import loads

            with open(copy, encoding="utf-8") as fh:
                entry = loads(fh.read())
            if isinstance(entry, dict) and entry.get("stamp") == stamp and isinstance(entry.get("value"), dict):
                _plain = entry["value"]
                return _plain
        except (OSError, ValueError):
            pass
    import yaml

    with open(src, encoding="utf-8") as fh:
        _plain = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    if folder_is_private(os.path.dirname(copy), create=True):
        import json

        from engine.base.files import replace_atomic

        try:
            replace_atomic(copy, json.dumps({"stamp": stamp, "value": _plain}).encode("utf-8"))
        except OSError:
            pass  # the next hook reads the YAML again
    return _plain


get = plain  # the settings document as plain data


def yaml_limits():
    return plain()["yaml"]


def cache_limits():
    return plain()["cache"]


def hook_bounds():
    return plain()["hooks"]


def failure_head_chars():
    """How much of a failed tool call's text is kept and searched for its error line."""
    return plain()["failures"]["head_chars"]


def compile_limits():
    return plain()["compile"]


def glob_limits():
    return plain()["globs"]


def settings_file_bytes():
    """The largest agent settings file install, uninstall and doctor read."""
    return plain()["install"]["max_settings_bytes"]


def folder_hook_limits():
    """(files of each pattern, bytes of each file) of a project's own hook
    files install and doctor read (install.folder_runs of an agent's YAML)."""
    conf = plain()["install"]
    return conf["max_folder_hook_files"], conf["max_folder_hook_bytes"]


def engine_records():
    """(the RECORD files of an install of this engine, as patterns from a
    script's folder; the most bytes of a RECORD or a script read) for
    telling an older hook command's program from another of its name."""
    conf = plain()["install"]
    return conf["engine_records"], conf["max_record_bytes"]


def redis_limits():
    return plain()["redis"]


def transcript_bounds():
    return plain()["transcripts"]


def agent_facts():
    return plain()["agent"]
