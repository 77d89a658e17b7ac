"""Whose an entry is: the project it came from (its origin, by real path),
and whether a project may list or read it.

An entry's project is the project (engine/base/project.py: the repository
root above the folder, never the user's home kept in git, else the folder) of the folder its output was made
in: the event's cwd for a hook, `--cwd` for `engine cache run`, the
transcript line's cwd for `engine purge`.  The reader's project is found
the same way from the folder it runs in, never from $CLAUDE_PROJECT_DIR
(the agent does not give it to its Bash tool, where `engine cache show`
runs).  A project sees its own entries only; every project's is the user's
opt-in (`--all`).

An entry stored before origins were recorded (no `origin` in its sidecar)
is this project's when one of its sources ran in it (their `cwd`) or one of
its sessions is a transcript of this project's in the agent's folders.
"""

import os


def project_of(folder=None):
    """The project of `folder` (default: the working folder), a real path:
    the one trust uses (a home kept in git is no project)."""
    from engine.base.project import project_folder

    if not isinstance(folder, str) or not os.path.isabs(folder):
        folder = os.getcwd()
    return project_folder(folder)


def origin(meta):
    """The project recorded with an entry, or None (an older entry)."""
    got = (meta or {}).get("origin")
    return got.get("project") if isinstance(got, dict) else None


def belongs(meta, project):
    """May `project` list and read the entry whose sidecar is `meta`?"""
    if not meta:
        return False
    recorded = origin(meta)
    if recorded is not None:
        return recorded == project
    return _legacy_belongs(meta, project)


def _legacy_belongs(meta, project):
    for src in meta.get("sources") or ():
        cwd = src.get("cwd") if isinstance(src, dict) else None
        if isinstance(cwd, str) and os.path.isabs(cwd) and project_of(cwd) == project:
            return True
    sessions = [s for s in meta.get("sessions") or () if isinstance(s, str) and _plain_name(s)]
    if not sessions:
        return False
    from engine.session.locate import mangle, transcript_roots

    folders = [os.path.join(r, mangle(project)) for r in transcript_roots()]
    return any(os.path.isfile(os.path.join(f, s + ".jsonl")) for f in folders for s in sessions)


def _plain_name(name):
    return name not in (".", "..") and "/" not in name and "\0" not in name and os.sep not in name
