"""Where the agent keeps its transcripts, and which transcript an argument
names: one place for `engine session report`, `engine purge` and
`engine cache gc` alike.

The rule it keeps: transcripts are found as the agent finds them.  The
agent's folder is `$CLAUDE_CONFIG_DIR` when set, else `~/.claude`; its
transcripts are under `projects/` there, one folder per project, named after
the project's absolute path with every character other than an ASCII letter
or digit replaced by `-` (/home/me/my.app -> -home-me-my-app).

A target is:
- a path to a file: that file;
- `--current`: the newest transcript of the working folder's project folder;
- a session id, or a unique prefix of one: `<id>*.jsonl` in the project
  folder, else anywhere under projects/ (subagents' files included).  A
  prefix naming several sessions is an error listing them.
"""

import os

from engine.base.errors import UserError


def claude_dir():
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def projects_root():
    """The folder the agent writes its transcripts into now."""
    return os.path.join(claude_dir(), "projects")


def transcript_roots():
    """Every folder the agent may have written transcripts into: the current
    one, and ~/.claude/projects when $CLAUDE_CONFIG_DIR points elsewhere (a
    user who set it later still has stubs naming blobs there).  gc keeps
    what any of them names: deleting is the one thing that cannot be undone."""
    roots = [projects_root()]
    home = os.path.join(os.path.expanduser("~"), ".claude", "projects")
    if os.path.abspath(home) != os.path.abspath(roots[0]):
        roots.append(home)
    return roots


def mangle(cwd):
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def project_dir(cwd):
    return os.path.join(projects_root(), mangle(os.path.abspath(cwd)))


def _newest(folder):
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".jsonl")]
    except OSError:
        return None
    paths = [os.path.join(folder, n) for n in names]
    paths = [p for p in paths if os.path.isfile(p)]
    return max(paths, key=lambda p: (os.path.getmtime(p), p)) if paths else None


def _matches(folder, prefix, deep):
    """Transcripts (*.jsonl) under folder whose session id starts with prefix."""
    out = []
    walker = os.walk(folder) if deep else [(folder, [], _listdir(folder))]
    for here, _dirs, names in walker:
        for n in names:
            if n.endswith(".jsonl") and n.startswith(prefix) and os.path.isfile(os.path.join(here, n)):
                out.append(os.path.join(here, n))
    return sorted(out)


def _listdir(folder):
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _pick(target, found, where):
    exact = [p for p in found if os.path.basename(p) == target + ".jsonl"]
    if len(exact) == 1:
        return exact[0]
    if len(found) == 1:
        return found[0]
    if found:
        ids = sorted({os.path.basename(p)[:-6] for p in found})
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        raise UserError(f"session {target!r} is ambiguous under {where}: {shown}; give more of the id")
    return None


def find_session(target, cwd=None):
    """The transcript of a session id or unique id prefix, or None."""
    here = _pick(target, _matches(project_dir(cwd or os.getcwd()), target, False), project_dir(cwd or os.getcwd()))
    if here:
        return here
    root = projects_root()
    return _pick(target, _matches(root, target, True), root)


def current(cwd=None):
    cwd = cwd or os.getcwd()
    folder = project_dir(cwd)
    path = _newest(folder)
    if path is None:
        raise UserError(f"no transcript in {folder} (the agent's folder for {cwd}); "
                        "run from the project folder or give a transcript file", None)
    return path


def find(target, current_, cwd):
    if current_:
        return current(cwd)
    if not target:
        raise UserError("name a session: a SESSION_ID, --current, or a transcript file (.jsonl)")
    if os.path.isfile(target):
        return target
    looks_like_path = os.sep in target or target.endswith(".jsonl")
    if looks_like_path:
        raise UserError("no such transcript file; give the path of a .jsonl file", target)
    path = find_session(target, cwd)
    if path is None:
        raise UserError(f"no session {target!r} under {projects_root()}; give its transcript file instead")
    return path
