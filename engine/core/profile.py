"""Choosing and loading a profile, and where trust is decided.

The profile used: --profile, else $ENGINE_PROFILE, else the project's
.engine/profile.yaml (found walking up from the working folder, see
`discover`) if the user approved it (`engine trust`, engine/core/trust_store.py),
else the user's own profile: ~/.engine/profile.yaml, else profile.yaml in
the user's config folder ($XDG_CONFIG_HOME/rules-engine or
~/.config/rules-engine), else the built-in `default`.

Every choice carries its origin: "user" (named in the hook command or
$ENGINE_PROFILE, or the user's own files) or "project".  A project profile
that is not approved is used by nothing: the hook and every command go on
with the user's own profile, as if it were absent, and say why
(`approval_notes`).  An approved one is resolved with the trust boundary
(engine/core/boundary.py): every machine-level key comes from the user's own
profile.
"""

import os

from . import cache
from engine.base.refs import is_path

from .discovery import LOCAL, discover, level_ref as _level_ref, project_root

DEFAULT = "default"


# cwd -> (profile path, why it is not used, the command that approves it or
# None): what the last choice for that folder left out; the hook logs it
# once per session (engine/hooks/trust.py note_unapproved).
NOTES: dict = {}


def _choose(name, cwd):
    """(reference, base folder, why, origin): origin is "project" for an
    approved profile found in the project's folders, else "user"."""
    cwd = str(cwd or os.getcwd())
    if name:
        return name, cwd, "given with --profile", "user"
    env = os.environ.get("ENGINE_PROFILE")
    if env:
        from engine.base.errors import given

        given(env)  # messages name it as the user wrote it
        return env, cwd, "named by $ENGINE_PROFILE", "user"
    notes = []
    found = discover(cwd, notes)
    if found:
        from .trust_store import check

        path, why = found
        reason = check(path)
        if reason is None:
            NOTES.pop(os.path.abspath(cwd), None)
            return path, cwd, f"{why} (approved with engine trust)", "project"
        notes.append((path, f"{reason}; your own profile is used instead", f"engine trust {path}"))
    if notes:
        NOTES[os.path.abspath(cwd)] = notes[0]
    else:
        NOTES.pop(os.path.abspath(cwd), None)
    ref, why = user_choice(cwd)
    return ref, cwd, why, "user"


def user_choice(cwd=None):
    """(reference, why) of the user's own profile: ~/.engine/profile.yaml, the
    config folder's profile.yaml, else the built-in default."""
    home = os.path.join(os.path.expanduser("~"), LOCAL)
    if os.path.isfile(home):
        return home, f"found {LOCAL} in the home folder (your own; none from {cwd or os.getcwd()} up to the repository root)"
    from engine.base.paths import config_dir_str

    mine = os.path.join(config_dir_str(), "profile.yaml")
    if os.path.isfile(mine):
        return mine, f"your own profile in the config folder (no {LOCAL} used)"
    return DEFAULT, (f"the built-in default: no {LOCAL} used from {cwd or os.getcwd()} up to the repository root, "
                     "nor in the home or config folder")


def choose(name=None, cwd=None):
    """(reference, base folder) of the profile to use."""
    return _choose(name, cwd)[:2]


def choose_why(name=None, cwd=None):
    """(reference, base folder, why) of the profile to use."""
    return _choose(name, cwd)[:3]


def choose_origin(name=None, cwd=None):
    return _choose(name, cwd)[3]


def choose_to_check(name=None, cwd=None):
    """(reference, base folder) of the profile `engine validate` checks: the
    project's own, approved or not (checking it is how one reviews it)."""
    if not name and not os.environ.get("ENGINE_PROFILE"):
        found = discover(str(cwd or os.getcwd()))
        if found:
            return found[0], str(cwd or os.getcwd())
    return choose(name, cwd)


def approval_notes(name=None, cwd=None):
    """Lines that say which project profile is not used, why, and the command
    that approves it; [] when none was left out."""
    if name or os.environ.get("ENGINE_PROFILE"):
        return []
    _choose(name, cwd)
    note = NOTES.get(os.path.abspath(str(cwd or os.getcwd())))
    if not note:
        return []
    path, reason, command = note
    lines = [f"the project profile {path} is not used: {reason}"]
    if command:
        lines.append(f"review it, then approve it with: {command}")
    return lines


def user_profile_ref():
    """The user's own profile when no other is named (see user_choice)."""
    return user_choice()[0]


def locate(name=None, cwd=None):
    from .documents import Library

    ref, base = choose(name, cwd)
    return Library().locate(ref, "profile", base)


def resolve(name=None, level=None, cwd=None, lib=None):
    """(Resolved, Library) of the profile to use.  The trust boundary is
    here: a project profile (approved, or resolve would not be given it) is
    resolved inside its project, and its machine-level keys are replaced by
    those of the user's own profile (engine/core/boundary.py)."""
    from .documents import Library
    from .resolve import resolve_profile

    lib = lib if lib is not None else Library()
    ref, base, _why, origin = _choose(name, cwd)
    if origin != "project":
        path = lib.locate(ref, "profile", base)
        return resolve_profile(lib, path, _level_ref(level, base)), lib
    return _resolve_project(lib, ref, base, level), lib


def _resolve_project(lib, ref, base, level):
    from .boundary import bound
    from .documents import Library
    from engine.base.errors import UserError
    from .resolve import resolve_profile
    from .trust_store import covers

    lib.set_project(project_root(ref))
    path = lib.locate(ref, "profile", base)
    resolved = resolve_profile(lib, path, _level_ref(level, base))
    unapproved = covers(path, [f for f in lib.files if lib.origin_of(f) == "project"])
    if unapproved:
        raise UserError(f"{', '.join(unapproved)} is not part of the approval of this project profile; "
                        f"review it, then run: engine trust {path}", str(path))
    own_lib = Library()
    own_ref = user_profile_ref()
    own = resolve_profile(own_lib, own_lib.locate(own_ref, "profile", base))
    # the user's files are sources of the compiled profile too: an edit of theirs recompiles it
    lib.files.extend([f for f in own_lib.files if f not in lib.files])
    lib.looked_at.extend(own_lib.looked_at)
    # which of the user's profiles is theirs can change too (one created later): its absence is a source
    from engine.base.paths import config_dir_str

    lib.watch = [os.path.join(os.path.expanduser("~"), LOCAL), os.path.join(config_dir_str(), "profile.yaml")]
    ignored = bound(resolved, own, lib.project_docs("profile"), lib.project_root)
    resolved.ignored = ignored
    return resolved


def build(name=None, level=None, cwd=None, lib=None):
    """Resolve and compile without the cache (validate uses this)."""
    from .compile import compile_profile

    resolved, lib = resolve(name, level, cwd, lib)
    if resolved.ignored:  # said once per compile (the compiled profile is cached)
        from .log import Log

        Log()(f"project profile {resolved.file}: machine-level keys ignored, yours are used: {', '.join(resolved.ignored)}")
    profile = compile_profile(resolved, lib.files)
    watched = [f for f in getattr(lib, "watch", ()) if f not in lib.files]
    profile.sources = [(f, cache.file_digest(f)) for f in [*lib.files, *watched]]
    return profile


def _key(kind, name, level, cwd):
    ref, base = choose(name, cwd)
    # The key needs the profile's path, not its contents: contents are checked on load.
    path = ref if not is_path(ref) else os.path.abspath(os.path.join(base, os.path.expanduser(ref)))
    return (kind, str(path), _level_ref(level, base) or "")


def load_profile(name=None, level=None, cwd=None, wait_until=None):
    """The compiled Profile, from the cache when every source file is unchanged.
    On a miss one process compiles (in a box: engine/core/compilebox.py) while
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
    from engine.base.errors import UserError

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
