"""Choosing and loading a profile: --profile, else $ENGINE_PROFILE, else the
first .engine/profile.yaml found walking up from the working folder to the
repository root (the folder holding .git) (the project's), else
~/.engine/profile.yaml, else profile.yaml in the user's config folder
($XDG_CONFIG_HOME/rules-engine or ~/.config/rules-engine), else the built-in
`default`.  All but the project's are the user's own (see
engine/hooks/trust.py)."""

import os

from . import cache
from .refs import is_path

DEFAULT = "default"


LOCAL = os.path.join(".engine", "profile.yaml")


def _choose(name, cwd):
    """(reference, base folder, why, origin): origin is "project" for a
    profile found in the project's folders, else "user"."""
    cwd = str(cwd or os.getcwd())
    if name:
        return name, cwd, "given with --profile", "user"
    env = os.environ.get("ENGINE_PROFILE")
    if env:
        from .errors import given

        given(env)  # messages name it as the user wrote it
        return env, cwd, "named by $ENGINE_PROFILE", "user"
    found = discover(cwd)
    if found:
        return found
    mine = user_profile_ref()
    if mine != DEFAULT:
        return mine, cwd, "your own profile in the config folder (no .engine/profile.yaml found)", "user"
    return DEFAULT, cwd, f"the built-in default: no {LOCAL} from {cwd} up to the repository root, nor in the home or config folder", "user"


def choose(name=None, cwd=None):
    """(reference, base folder) of the profile to use."""
    return _choose(name, cwd)[:2]


def choose_why(name=None, cwd=None):
    """(reference, base folder, why) of the profile to use."""
    return _choose(name, cwd)[:3]


def choose_origin(name=None, cwd=None):
    return _choose(name, cwd)[3]


def user_profile_ref():
    """The user's own profile when no other is named: the config folder's
    profile.yaml, else the built-in default."""
    from .paths import config_dir_str

    mine = os.path.join(config_dir_str(), "profile.yaml")
    return mine if os.path.isfile(mine) else DEFAULT


def discover(cwd):
    """(path, base, why, origin) of the nearest .engine/profile.yaml, walking
    up from cwd and stopping at the repository root (a folder holding .git);
    then the home folder's (the user's own).  None when there is none."""
    folder = os.path.abspath(cwd)
    while True:
        candidate = os.path.join(folder, LOCAL)
        if os.path.isfile(candidate):
            here = "the working folder" if folder == os.path.abspath(cwd) else f"{folder}, walking up from {cwd}"
            return candidate, cwd, f"found {LOCAL} in {here}", "project"
        if os.path.exists(os.path.join(folder, ".git")):
            break  # the repository root: a profile above it belongs to another project
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    home = os.path.join(os.path.expanduser("~"), LOCAL)
    if os.path.isfile(home):
        return home, cwd, f"found {LOCAL} in the home folder (none from {cwd} up to the repository root)", "user"
    return None


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


def load_profile(name=None, level=None, cwd=None, wait_until=None):
    """The compiled Profile, from the cache when every source file is unchanged.
    On a miss one process compiles (in a box: engine/compilebox.py) while
    the others wait for it (cache.compile_once), until `wait_until`."""
    key = _key("profile", name, level, cwd)
    profile = cache.load(key)
    if profile is None:
        failed = cache.load_failure(key)
        if failed is not None:
            raise failed  # the same error as last time, without reading YAML again
        from . import compilebox
        from .settings import hook_bounds

        what = key[1] if is_path(key[1]) else None
        profile = cache.compile_once(key, lambda: compilebox.run(lambda: _compile(name, level, cwd, key), what),
                                     wait_until, hook_bounds()["compile_poll_ms"])
    return profile


def _compile(name, level, cwd, key):
    """Compile and cache (runs in the compile box); a failure is cached too,
    a compile past the memory cap included."""
    from .documents import Library
    from .errors import UserError

    lib = Library()
    try:
        try:
            profile = build(name, level, cwd, lib)
        except MemoryError:
            from .compilebox import memory_message
            from .settings import compile_limits

            raise UserError(memory_message(compile_limits()["memory_mb"]), key[1] if is_path(key[1]) else None) from None
    except UserError as exc:
        looked = dict.fromkeys(lib.looked_at)
        if looked:
            cache.store_failure(key, exc, [(f, cache.file_digest(f)) for f in looked])
        raise
    cache.store(key, profile, profile.sources)
    cache.store_plain(_key("hooks", name, None, cwd), profile.hooks, profile.sources)
    store_meta(profile, name, level, cwd)
    return profile


def store_meta(profile, name=None, level=None, cwd=None):
    cache.store_plain(_key("meta", name, level, cwd), meta_of(profile), profile.sources)


def meta_of(profile):
    """What a cached result needs to know of a compiled profile, as plain data.
    `id` names the compiled profile: the engine's code, every source file's
    content and the level; compressed text is cached under it."""
    import json

    ident = cache.sha256(json.dumps([cache.code_fingerprint(), [list(s) for s in profile.sources], profile.level],
                                    ensure_ascii=False).encode("utf-8")).hexdigest()
    return {"id": ident, "name": profile.name, "level": profile.level, "tokenizer": profile.tokenizer,
            "objective": profile.objective, "cache": profile.cache,
            "max_input_bytes": profile.max_input_bytes, "fit_factor": profile.fit_factor}


def load_meta(name=None, level=None, cwd=None):
    """meta_of the profile, from the cache without unpickling compiled patterns
    (or importing `regex`); None when the profile must be built or loaded."""
    return cache.load_plain(_key("meta", name, level, cwd))


def cached_hooks(name=None, cwd=None):
    """The hooks settings from the cache only (no YAML, no compile); None on a miss."""
    return cache.load_plain(_key("hooks", name, None, cwd))


def load_hooks(name=None, cwd=None, wait_until=None):
    """Only the profile's hooks settings (plain data): what a hook event that
    injects nothing needs, without unpickling compiled patterns."""
    hooks = cache.load_plain(_key("hooks", name, None, cwd))
    if hooks is None:
        profile = load_profile(name, None, cwd, wait_until)
        hooks = profile.hooks
        # compiled before this entry existed (or it went stale): the next event needs it
        cache.store_plain(_key("hooks", name, None, cwd), hooks, profile.sources)
    return hooks
