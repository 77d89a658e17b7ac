"""Approvals of project profiles (`engine trust`), the way `direnv allow` and
`mise trust` work.

A project's `.engine/profile.yaml` is written by whoever wrote the project,
so it is used only while the user's approval of it holds.  An approval
records the profile's real path and, for every file it brings in (itself,
the profiles it extends, the levels, dictionaries and protect files it
names), the file's sha256.  Any change of content ends the approval; a new
`engine trust` is needed.

The store is the user's own: one JSON file, 0600, in the engine's state
folder (0700), replaced atomically, never inside a project.  A store that is
not private (a link, another owner's file, writable by others) approves
nothing.

The check runs on every hook event that finds a project profile, so it
costs one read of the store and one stat per approved file: a file is hashed
again only when its stat signature (size, mtime, ctime, inode) moved since
it was approved.  os only, no yaml, no re.
"""

import os
import stat

from engine.base.paths import inside, state_dir_str

from .cache import file_digest  # one bounded file hash, for the caches and the approvals alike

STORE_NAME = "trust.json"



def store_path():
    return os.path.join(state_dir_str(), STORE_NAME)


def _signature(st):
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _private(st):
    return st.st_uid == os.getuid() and not stat.S_IMODE(st.st_mode) & 0o022


def _read():
    """{real profile path: approval}; {} when there is no store or it is not private."""
    path = store_path()
    try:
        if not _private(os.lstat(os.path.dirname(path))):
            return {}
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return {}
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _private(st):
            return {}
        raw = b""
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            raw += chunk
    finally:
        os.close(fd)
    from engine.base.fastjson import loads

    try:
        data = loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return {}
    profiles = data.get("profiles") if isinstance(data, dict) else None
    return profiles if isinstance(profiles, dict) else {}


def _write(profiles):
    import json

    from engine.base.files import private_dir

    path = store_path()
    folder = os.path.dirname(path)
    private_dir(folder)
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        from engine.base.errors import UserError

        raise UserError("the state folder is not a folder of yours; approvals are not kept there", folder)
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(folder, 0o700)
    data = json.dumps({"version": 1, "profiles": profiles}, indent=1, sort_keys=True).encode("utf-8")
    from engine.base.files import replace_atomic

    replace_atomic(path, data, 0o600, sync=True)


def check(profile_path):
    """None while the approval of this project profile holds; else why not
    (one phrase)."""
    real = os.path.realpath(profile_path)
    entry = _read().get(real)
    if not isinstance(entry, dict) or not isinstance(entry.get("files"), dict):
        return "it is not approved"
    for path, info in entry["files"].items():
        try:
            st = os.stat(path)
        except OSError:
            return f"{path} is gone since it was approved"
        if _signature(st) == info.get("stat"):
            continue  # unchanged since approved: no hashing
        if file_digest(path) == info.get("sha256"):
            continue  # touched, same content
        return f"{path} changed since it was approved"
    return None


def is_approved(profile_path):
    return check(profile_path) is None


def covers(profile_path, files):
    """The files of `files` the approval of this profile does not name."""
    entry = _read().get(os.path.realpath(profile_path)) or {}
    named = entry.get("files") or {}
    return [f for f in files if os.path.realpath(f) not in named]


def project_profile(path=None, cwd=None):
    """The project profile meant by PATH: a profile file, a folder holding
    .engine/profile.yaml, or (no PATH) the one found from the working folder."""
    from engine.base.errors import UserError

    from .discovery import LOCAL, discover

    if path is None:
        found = discover(cwd or os.getcwd())
        if found is None:
            raise UserError(f"no {LOCAL} found from here up to the repository root; give its path", cwd or os.getcwd())
        return os.path.realpath(found[0])
    p = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(p):
        p = os.path.join(p, LOCAL)
    if not os.path.isfile(p):
        raise UserError(f"no profile file here; give a {LOCAL} or the folder holding .engine/", path)
    if not p.endswith(os.sep + LOCAL):
        raise UserError(f"engine trust approves a project's {LOCAL}; a profile of your own needs no approval "
                        "(name it with --profile or $ENGINE_PROFILE)", path)
    return os.path.realpath(p)


def files_of(profile_path):
    """Every non-built-in file the project profile brings in: itself, what it
    extends and names, and the levels its handlers name."""
    from engine.base.refs import is_path

    from .discovery import level_ref as _level_ref
    from .discovery import project_root
    from .documents import Library
    from .resolve import resolve_profile

    root = project_root(profile_path)
    lib = Library(project_root=root)
    res = resolve_profile(lib, lib.locate(profile_path, "profile", root))
    for handlers in res.hooks.get("events", {}).values():
        for h in handlers:
            level = h.get("level")
            if level and is_path(level):
                ref = _level_ref(level, root)
                if inside(os.path.realpath(ref), lib.project_root):  # outside: replaced by yours (boundary.py)
                    resolve_profile(lib, profile_path, ref)
    return [f for f in dict.fromkeys(lib.files) if lib.origin_of(f) == "project"]


def approve(path=None, cwd=None):
    """Approve a project profile as it is now: (its real path, the files approved)."""
    import time

    real = project_profile(path, cwd)
    files = files_of(real)
    if real not in files:
        files.insert(0, real)
    record = {}
    for f in files:
        st = os.stat(f)
        record[f] = {"sha256": file_digest(f), "stat": _signature(st)}
    profiles = _read()
    profiles[real] = {"approved": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "files": record}
    _write(profiles)
    return real, list(record)


def revoke(path=None, cwd=None):
    """Forget the approval of a project profile; True when there was one."""
    profiles = _read()
    if path is not None:
        p = os.path.abspath(os.path.expanduser(path))
        real = os.path.realpath(os.path.join(p, ".engine", "profile.yaml") if os.path.isdir(p) else p)
        if real not in profiles and p in profiles:  # a profile that is gone: its stored name
            real = p
    else:
        real = project_profile(None, cwd)
    if real not in profiles:
        return real, False
    del profiles[real]
    _write(profiles)
    return real, True


def approvals():
    """[(profile path, approved at, files, None or why it no longer holds)]."""
    out = []
    for real, entry in sorted(_read().items()):
        if isinstance(entry, dict):
            out.append((real, entry.get("approved", "?"), sorted(entry.get("files") or {}), check(real)))
    return out
