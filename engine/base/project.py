"""Which project a folder belongs to: the nearest folder at or above it that
holds `.git` (a repository's root; a worktree's `.git` file counts), else
the folder itself, by real path.  One walk for every reader of the fact
(the tool memory's entries, the content cache's origins).  os only."""

import os

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
