"""Which transcript a `engine session report` argument names.

- a path to a file: that file;
- `--current`: the newest transcript of the working folder's project
  folder, `~/.claude/projects/<mangled cwd>/*.jsonl`;
- a session id: `<id>.jsonl` in that project folder, else in any project.

The agent names a project's folder after its absolute path with every
character other than a letter or a digit replaced by `-` (so `/` and `.`
both become `-`: /home/me/my.app -> -home-me-my-app).  Its root is
`$CLAUDE_CONFIG_DIR` when set, else `~/.claude`.
"""

import os

from ..errors import UserError


def claude_dir():
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def mangle(cwd):
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def project_dir(cwd):
    return os.path.join(claude_dir(), "projects", mangle(os.path.abspath(cwd)))


def _newest(folder):
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".jsonl")]
    except OSError:
        return None
    paths = [os.path.join(folder, n) for n in names]
    paths = [p for p in paths if os.path.isfile(p)]
    return max(paths, key=lambda p: (os.path.getmtime(p), p)) if paths else None


def find(target, current, cwd):
    cwd = cwd or os.getcwd()
    if current:
        folder = project_dir(cwd)
        path = _newest(folder)
        if path is None:
            raise UserError(f"no transcript in {folder} (the agent's folder for {cwd}); "
                            "run from the project folder or give a transcript file", None)
        return path
    if not target:
        raise UserError("name a session: a SESSION_ID, --current, or a transcript file (.jsonl)")
    if os.path.isfile(target):
        return target
    looks_like_path = os.sep in target or target.endswith(".jsonl")
    if looks_like_path:
        raise UserError("no such transcript file; give the path of a .jsonl file", target)
    here = os.path.join(project_dir(cwd), target + ".jsonl")
    if os.path.isfile(here):
        return here
    root = os.path.join(claude_dir(), "projects")
    try:
        for d in sorted(os.listdir(root)):
            p = os.path.join(root, d, target + ".jsonl")
            if os.path.isfile(p):
                return p
    except OSError:
        pass
    raise UserError(f"no session {target!r} under {root}; give its transcript file instead")
