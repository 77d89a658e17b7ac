"""Choosing and loading a profile: --profile, else $ENGINE_PROFILE, else
.engine/profile.yaml in the working directory (the project's), else
profile.yaml in the user's config folder ($XDG_CONFIG_HOME/rules-engine or
~/.config/rules-engine), else the built-in `default`.  All but the project's
are the user's own (see engine/hooks/trust.py)."""

import os

from . import cache
from .refs import is_path

DEFAULT = "default"


def _choose(name, cwd):
    """(reference, base folder, origin): origin is "project" for a profile
    found in the working folder, else "user"."""
    cwd = str(cwd or os.getcwd())
    if name:
        return name, cwd, "user"
    env = os.environ.get("ENGINE_PROFILE")
    if env:
        return env, cwd, "user"
    local = os.path.join(cwd, ".engine", "profile.yaml")
    if os.path.isfile(local):
        return local, cwd, "project"
    return user_profile_ref(), cwd, "user"


def choose(name=None, cwd=None):
    """(reference, base folder) of the profile to use."""
    return _choose(name, cwd)[:2]


def choose_origin(name=None, cwd=None):
    return _choose(name, cwd)[2]


def user_profile_ref():
    """The user's own profile when no other is named: the config folder's
    profile.yaml, else the built-in default."""
    from .paths import config_dir_str

    mine = os.path.join(config_dir_str(), "profile.yaml")
    return mine if os.path.isfile(mine) else DEFAULT


def locate(name=None, cwd=None):
    from .documents import Library

    ref, base = choose(name, cwd)
    return Library().locate(ref, "profile", base)


def _level_ref(level, base):
    """A level given on the command line is read from the working folder."""
    if level and is_path(level):
        return os.path.abspath(os.path.join(base, os.path.expanduser(level)))
    return level


def resolve(name=None, level=None, cwd=None):
    from .documents import Library
    from .resolve import resolve_profile

    lib = Library()
    ref, base = choose(name, cwd)
    path = lib.locate(ref, "profile", base)
    return resolve_profile(lib, path, _level_ref(level, base)), lib


def build(name=None, level=None, cwd=None):
    """Resolve and compile without the cache (validate uses this)."""
    from .compile import compile_profile

    resolved, lib = resolve(name, level, cwd)
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
        profile = build(name, level, cwd)
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
