"""Choosing and loading a profile, and where trust is decided.

The profile used: --profile, else $ENGINE_PROFILE, else the project's
.engine/profile.yaml (found walking up from the working folder, see
`discover`) if the user approved it (`engine trust`, engine/core/trust_store.py),
else the user's own profile: ~/.engine/profile.yaml, else profile.yaml in
the user's config folder ($XDG_CONFIG_HOME/rules-engine or
~/.config/rules-engine), else the built-in `default`.

Every choice (a Choice) carries its origin: "user" (named in the hook command or
$ENGINE_PROFILE, or the user's own files) or "project".  A project profile
that is not approved is used by nothing: the hook and every command go on
with the user's own profile, as if it were absent, and say why
(`approval_notes`).  An approved one is resolved with the trust boundary
(engine/core/boundary.py): every machine-level key comes from the user's own
profile.

Loading goes in one pass, each step a function: choose the profile
(`choice`: which file, its origin, what it left out), key it (`Choice.key`),
then take it from the cache or compile and store it (`profile_of`,
`hooks_of`, `cached_hooks`, `cached_meta`; `store`).  The Choice made first
is the one compiled: a hook event chooses once, and hands its Choice to the
handlers (engine/hooks/handlers/context.py).
"""

import os

from engine.base.refs import is_path

from . import cache
from .discovery import LOCAL, discover, project_root
from .discovery import level_ref as _level_ref

DEFAULT = "default"


class Choice:
    """The profile to use, chosen once per event or command (`choice`):
    its reference and the folder it is read from, why it was chosen, its
    origin ("user" or "project") and the project profile it left out
    ((path, why, the command that approves it), or None).  Plain slots, not
    a dataclass: a hook builds one on every event."""

    __slots__ = ("ref", "base", "why", "origin", "left_out")

    def __init__(self, ref, base, why, origin="user", left_out=None):
        self.ref, self.base, self.why, self.origin, self.left_out = ref, base, why, origin, left_out

    def key(self, kind, level=None):
        """The cache key of this profile's `kind` entry ("profile", "hooks",
        "meta") at `level`: its path, not its contents (contents are checked
        on load)."""
        ref, base = self.ref, self.base
        path = ref if not is_path(ref) else os.path.abspath(os.path.join(base, os.path.expanduser(ref)))
        return (kind, str(path), _level_ref(level, base) or "")

    def notes(self):
        """Lines that say which project profile is not used, why, and the
        command that approves it; [] when none was left out."""
        if not self.left_out:
            return []
        path, reason, command = self.left_out
        lines = [f"the project profile {path} is not used: {reason}"]
        if command:
            lines.append(f"review it, then approve it with: {command}")
        return lines


def choice(name=None, cwd=None):
    """The Choice of the profile to use from `cwd`: `name` (--profile), else
    $ENGINE_PROFILE, else the project's approved profile, else the user's own
    (see the module's docstring).  The one place trust is decided."""
    cwd = str(cwd or os.getcwd())
    if name:
        return Choice(name, cwd, "given with --profile")
    env = os.environ.get("ENGINE_PROFILE")
    if env:
        from engine.base.errors import given

        given(env)  # messages name it as the user wrote it
        return Choice(env, cwd, "named by $ENGINE_PROFILE")
    return _project_or_own(cwd)


def _project_or_own(cwd):
    """The project's profile found from `cwd` when it is approved, else the
    user's own with the project's left out (and why)."""
    notes = []
    found = discover(cwd, notes)
    if found:
        from .trust_store import check

        path, why = found
        reason = check(path)
        if reason is None:
            return Choice(path, cwd, f"{why} (approved with engine trust)", "project")
        notes.append((path, f"{reason}; your own profile is used instead", f"engine trust {path}"))
    ref, why = user_choice(cwd)
    return Choice(ref, cwd, why, "user", notes[0] if notes else None)


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
    chosen = choice(name, cwd)
    return chosen.ref, chosen.base


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
    return choice(name, cwd).notes()


def user_profile_ref():
    """The user's own profile when no other is named (see user_choice)."""
    return user_choice()[0]


def locate(name=None, cwd=None):
    from .documents import Library

    chosen = choice(name, cwd)
    return Library().locate(chosen.ref, "profile", chosen.base)


def resolve(name=None, level=None, cwd=None, lib=None, chosen=None):
    """(Resolved, Library) of the profile to use (`chosen`, else chosen from
    `name` and `cwd`).  The trust boundary is here: a project profile
    (approved, or it would not be chosen) is resolved inside its project,
    and its machine-level keys are replaced by those of the user's own
    profile (engine/core/boundary.py)."""
    from .documents import Library
    from .resolve import resolve_profile

    chosen = chosen if chosen is not None else choice(name, cwd)
    lib = lib if lib is not None else Library()
    if chosen.origin != "project":
        path = lib.locate(chosen.ref, "profile", chosen.base)
        return resolve_profile(lib, path, _level_ref(level, chosen.base)), lib
    return _resolve_project(lib, chosen.ref, chosen.base, level), lib


def _resolve_project(lib, ref, base, level):
    from .boundary import bound
    from .resolve import resolve_profile

    lib.set_project(project_root(ref))
    path = lib.locate(ref, "profile", base)
    resolved = resolve_profile(lib, path, _level_ref(level, base))
    _still_approved(lib, path)
    own = _own_profile(lib, base)
    resolved.ignored = bound(resolved, own, lib.project_docs("profile"), lib.project_root)
    return resolved


def _still_approved(lib, path):
    """Raise unless the approval of project profile `path` still holds for
    every project file just read: none changed since it was chosen, and none
    left out of the approval."""
    from engine.base.errors import UserError

    from .trust_store import check, covers

    reason = check(path)
    if reason is not None:
        raise UserError(f"the project profile is no longer approved: {reason}; review it, then run: engine trust {path}",
                        str(path))
    unapproved = covers(path, [f for f in lib.files if lib.origin_of(f) == "project"])
    if unapproved:
        raise UserError(f"{', '.join(unapproved)} is not part of the approval of this project profile; "
                        f"review it, then run: engine trust {path}", str(path))


def _own_profile(lib, base):
    """The user's own profile, resolved, whose files become sources of the
    project's compiled profile too (an edit of theirs recompiles it), and so
    does the absence of the user's profiles not there yet (one created later
    becomes theirs)."""
    from engine.base.paths import config_dir_str

    from .documents import Library
    from .resolve import resolve_profile

    own_lib = Library()
    own = resolve_profile(own_lib, own_lib.locate(user_profile_ref(), "profile", base))
    lib.files.extend([f for f in own_lib.files if f not in lib.files])
    lib.looked_at.extend(own_lib.looked_at)
    lib.watch = [os.path.join(os.path.expanduser("~"), LOCAL), os.path.join(config_dir_str(), "profile.yaml")]
    return own


def build(name=None, level=None, cwd=None, lib=None, chosen=None):
    """Resolve and compile without the cache (validate uses this)."""
    from .compile import compile_profile

    resolved, lib = resolve(name, level, cwd, lib, chosen)
    if resolved.ignored:  # said once per compile (the compiled profile is cached)
        from .log import Log

        Log()(f"project profile {resolved.file}: machine-level keys ignored, yours are used: {', '.join(resolved.ignored)}")
    profile = compile_profile(resolved, lib.files)
    watched = [f for f in lib.watch if f not in lib.files]
    profile.sources = [(f, cache.file_digest(f)) for f in [*lib.files, *watched]]
    return profile


# Loading, in one pass: choose the profile (choice), key it (Choice.key),
# then take it from the cache or compile and store it.

def load_profile(name=None, level=None, cwd=None, wait_until=None):
    """The compiled Profile of the profile chosen from `name` and `cwd`
    (profile_of)."""
    return profile_of(choice(name, cwd), level, wait_until)


def profile_of(chosen, level=None, wait_until=None):
    """The compiled Profile of `chosen` at `level`, from the cache when every
    source file is unchanged.  On a miss one process compiles (in a box:
    engine/core/compilebox.py) while the others wait for it
    (cache.compile_once), until `wait_until`."""
    key = chosen.key("profile", level)
    profile = cache.load(key)
    if profile is None:
        profile = _compile_once(chosen, level, key, wait_until)
    return profile


def _compile_once(chosen, level, key, wait_until):
    """Compile and store `chosen` (in one process at a time), or raise the
    error it failed with last time while none of its files changed (no YAML
    read again)."""
    failed = cache.load_failure(key)
    if failed is not None:
        raise failed
    from . import compilebox
    from .settings import hook_bounds

    what = key[1] if is_path(key[1]) else None

    def boxed():
        _warm_if_asked()
        return compilebox.run(lambda: _compile(chosen, level, key), what)

    return cache.compile_once(key, boxed, wait_until, hook_bounds()["compile_poll_ms"])


# Whether this process compiles many profiles (warm_compiles), and has warmed.
_WARM = {"asked": False, "done": False}


def warm_compiles():
    """Say this process will compile several profiles (`engine validate`
    compiles the built-in profiles, then the active one at every level).
    Each compile runs in a box forked from this process, which otherwise
    loads again what every compile needs (the tokenizer's table, the
    schemas' validators, the built-in patterns): about 1.4 s a box.  The
    first compile that misses the cache first compiles the built-in default
    here, kept nowhere, and every box forked after it inherits that.  Only
    the engine's own documents compile outside a box; nothing is warmed
    when every compile is a cache hit."""
    _WARM["asked"] = True


def _warm_if_asked():
    from engine.base.errors import UserError

    if not _WARM["asked"] or _WARM["done"]:
        return
    _WARM["done"] = True
    try:
        build(chosen=Choice(DEFAULT, os.getcwd(), "built-in, compiled to warm this process"))
    except UserError:
        pass  # a broken setting: the compile that follows reports it


def _compile(chosen, level, key):
    """Compile and store (runs in the compile box); a failure is stored too,
    a compile past the memory cap included."""
    from engine.base.errors import UserError

    from .documents import Library

    lib = Library()
    try:
        profile = _build_capped(chosen, level, lib, key)
    except UserError as exc:
        looked = dict.fromkeys(lib.looked_at)
        if looked:
            cache.store_failure(key, exc, [(f, cache.file_digest(f)) for f in looked])
        raise
    store(chosen, level, profile)
    return profile


def _build_capped(chosen, level, lib, key):
    """build(), with a compile past the memory cap as the profile's error."""
    try:
        return build(level=level, lib=lib, chosen=chosen)
    except MemoryError:
        from .compilebox import at_document, memory_message
        from .settings import compile_limits

        raise at_document(memory_message(compile_limits()["memory_mb"]), key[1] if is_path(key[1]) else None) from None


def store(chosen, level, profile):
    """Keep a compiled profile in the cache: the profile, its hooks settings
    and its meta (plain data, read without unpickling compiled patterns)."""
    for lv in _levels_kept(level, profile):
        cache.store(chosen.key("profile", lv), profile, profile.sources)
        store_meta(chosen, lv, profile)
    cache.store_plain(chosen.key("hooks"), profile.hooks, profile.sources)


def _levels_kept(level, profile):
    """The levels a compiled profile is kept under: the one asked for, and,
    when that was the profile's own level (None) and it names a built-in
    level, that name too.  Compiled either way it is the same profile, and a
    hook's first event asks for both (the dispatcher for the profile's own
    level, the refresh for its level by name): it compiles once, not twice."""
    if level is None and isinstance(profile.level, str) and not is_path(profile.level):
        return [None, profile.level]
    return [level]


def store_meta(chosen, level, profile):
    cache.store_plain(chosen.key("meta", level), meta_of(profile), profile.sources)


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


def cached_meta(chosen, level=None):
    """meta_of the profile, from the cache without unpickling compiled patterns
    (or importing `regex`); None when the profile must be built or loaded."""
    return cache.load_plain(chosen.key("meta", level))


def cached_hooks(chosen):
    """The hooks settings of `chosen` from the cache only (no YAML, no
    compile); None on a miss."""
    return cache.load_plain(chosen.key("hooks"))


def hooks_of(chosen, wait_until=None):
    """Only the profile's hooks settings (plain data): what a hook event that
    injects nothing needs, without unpickling compiled patterns.  On a miss
    the profile is loaded (profile_of) and its settings stored: the entry
    did not exist when it was compiled, or it went stale."""
    hooks = cached_hooks(chosen)
    if hooks is None:
        profile = profile_of(chosen, None, wait_until)
        hooks = profile.hooks
        cache.store_plain(chosen.key("hooks"), hooks, profile.sources)
    return hooks


def load_hooks(name=None, cwd=None, wait_until=None):
    """hooks_of the profile chosen from `name` and `cwd`."""
    return hooks_of(choice(name, cwd), wait_until)
