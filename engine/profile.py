"""Choosing and loading a profile: --profile, else $ENGINE_PROFILE, else
.engine/profile.yaml in the working directory, else the built-in `default`."""

import os

from . import cache
from .refs import is_path

DEFAULT = "default"


def choose(name=None, cwd=None):
    """(reference, base folder) of the profile to use."""
    cwd = str(cwd or os.getcwd())
    if name:
        return name, cwd
    env = os.environ.get("ENGINE_PROFILE")
    if env:
        return env, cwd
    local = os.path.join(cwd, ".engine", "profile.yaml")
    if os.path.isfile(local):
        return local, cwd
    return DEFAULT, cwd


def locate(name=None, cwd=None):
    from .documents import Library

    ref, base = choose(name, cwd)
    return Library().locate(ref, "profile", base)


def _level_ref(level, base):
    """A level given on the command line is read from the working folder."""
    if level and is_path(level):
        return os.path.abspath(os.path.join(base, os.path.expanduser(level)))
    return level


def resolve(name=None, level=None, cwd=None, lib=None):
    from .documents import Library
    from .resolve import resolve_profile

    lib = lib if lib is not None else Library()
    ref, base = choose(name, cwd)
    path = lib.locate(ref, "profile", base)
    return resolve_profile(lib, path, _level_ref(level, base)), lib


def build(name=None, level=None, cwd=None, lib=None):
    """Resolve and compile without the cache (validate uses this)."""
    from .compile import compile_profile

    resolved, lib = resolve(name, level, cwd, lib)
    profile = compile_profile(resolved, lib.files)
    profile.sources = [(f, cache.file_digest(f)) for f in lib.files]
    return profile


def _key(kind, name, level, cwd):
    ref, base = choose(name, cwd)
    # The key needs the profile's path, not its contents: contents are checked on load.
    path = ref if not is_path(ref) else os.path.abspath(os.path.join(base, os.path.expanduser(ref)))
    return (kind, str(path), _level_ref(level, base) or "")


def load_profile(name=None, level=None, cwd=None):
    """The compiled Profile, from the cache when every source file is unchanged."""
    key = _key("profile", name, level, cwd)
    profile = cache.load(key)
    if profile is None:
        failed = cache.load_failure(key)
        if failed is not None:
            raise failed  # the same error as last time, without reading YAML again
        from .documents import Library
        from .errors import UserError

        lib = Library()
        try:
            profile = build(name, level, cwd, lib)
        except UserError as exc:
            looked = dict.fromkeys(lib.looked_at)
            if looked:
                cache.store_failure(key, exc, [(f, cache.file_digest(f)) for f in looked])
            raise
        cache.store(key, profile, profile.sources)
        cache.store_plain(_key("hooks", name, None, cwd), profile.hooks, profile.sources)
    return profile


def load_hooks(name=None, cwd=None):
    """Only the profile's hooks settings (plain data): what a hook event that
    injects nothing needs, without unpickling compiled patterns."""
    hooks = cache.load_plain(_key("hooks", name, None, cwd))
    if hooks is None:
        hooks = load_profile(name, None, cwd).hooks
    return hooks
