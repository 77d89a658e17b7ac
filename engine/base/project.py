"""Which project a folder belongs to: the nearest folder at or above it that
holds `.git` (a repository's root; a worktree's `.git` file counts), else
the folder itself, by real path.  One walk for every reader of the fact;
`project_folder` (trust, the tool memory's entries, the content cache's
origins) never takes the user's home for a project.  os only."""

import os

from .paths import inside

# What marks a repository's root (git's layout, not a setting).
MARKER = ".git"


def root_of(folder):
    """The project `folder` (absolute, any spelling) belongs to, as a real path."""
    start = os.path.realpath(folder)
    here = start
    while True:
        if os.path.exists(os.path.join(here, MARKER)):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return start
        here = parent


def project_folder(folder):
    """The folder whose files are a project's when an agent works in
    `folder` (trust and origin of the files a hook reads): its repository's
    root, so that the AGENTS.md or GEMINI.md an agent reads there from a
    subfolder is the project's too; but never the user's home or a folder
    above it (a home kept in git is the user's own), then the folder itself."""
    start = os.path.realpath(folder)
    root = root_of(start)
    home = os.path.realpath(os.path.expanduser("~"))
    if inside(home, root):
        return start
    return root
