"""Finding a project's profile: the `.engine/profile.yaml` walking up from
the working folder, and only one the user could have put there.

This only finds it; whether it is used is the approval's to say
(engine/core/trust_store.py, engine/core/profile.py).
"""

import os

from engine.base.refs import is_path

LOCAL = os.path.join(".engine", "profile.yaml")


def project_root(profile_path):
    """The project folder of a project profile: the one holding .engine/."""
    return os.path.dirname(os.path.dirname(os.path.abspath(str(profile_path))))


def _unsafe(st, what):
    """Why a file or folder found on the way cannot be trusted, or None."""
    if st.st_uid != os.getuid():
        return f"{what} belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"{what} is writable by others (mode {oct(st.st_mode & 0o777)})"
    return None


def discover(cwd, notes=None):
    """(path, why) of the project's .engine/profile.yaml, or None.

    Walks up from cwd, looking in each folder, and stops:
    - at the home folder, without looking in it (~/.engine/profile.yaml is
      the user's own, never a project's), so never above it;
    - at the repository root (a folder holding .git), after looking in it;
    - before a folder that is not the user's or that others may write to (a
      shared /tmp, another account's folder): nothing there or above is used.
    A profile whose file or .engine folder is not the user's, or writable by
    others, is refused (and nothing above it is looked at); `notes` gets
    (path, why, None) for what was refused."""
    start = os.path.abspath(cwd)
    home = os.path.abspath(os.path.expanduser("~"))
    folder = start
    while folder != home:
        candidate = os.path.join(folder, LOCAL)
        try:
            st = os.stat(folder)
        except OSError:
            return None
        problem = _unsafe(st, folder)
        if problem:
            if notes is not None and os.path.isfile(candidate):
                notes.append((candidate, f"refused: {problem}", None))
            return None
        if os.path.isfile(candidate):
            for path, what in ((os.path.dirname(candidate), os.path.dirname(candidate)), (candidate, candidate)):
                problem = _unsafe(os.stat(path), what)
                if problem:
                    if notes is not None:
                        notes.append((candidate, f"refused: {problem}", None))
                    return None
            here = "the working folder" if folder == start else f"{folder}, walking up from {cwd}"
            return candidate, f"found {LOCAL} in {here}"
        if os.path.exists(os.path.join(folder, ".git")):
            return None  # the repository root: a profile above it belongs to another project
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def level_ref(level, base):
    """A level given on the command line is read from the working folder."""
    if level and is_path(level):
        return os.path.abspath(os.path.join(base, os.path.expanduser(level)))
    return level
