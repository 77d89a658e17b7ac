"""Whose a rule file is, and the order that follows from it.

A rule file is the user's own (their rule folder ~/.claude/rules, their
~/.claude/CLAUDE.md, or a file outside the project that their own profile
named) or a project's (any file reached through the working folder, named
by the project's real path).  The rule it keeps: a project's rule files
never displace the user's own.  The user's come first in every order a
refresh applies (the delivery, the budget, hooks.max_files, the round of a
pending delivery, the digest lines); `priority:` orders files within one
origin only, so a repository cannot write its way ahead of the user.

os.path only: this runs in every injecting hook process.
"""

import os

from engine.base.paths import inside

USER, PROJECT = "user", "project"
_RANK = {USER: 0, PROJECT: 1}


class Origins:
    """The origin of each file a refresh reads for one working folder."""

    def __init__(self, cwd):
        # The user's own folders, the agents' homes as each agent names it
        # (~/.claude/rules, ~/.codex/AGENTS.md ...): a project opened at the
        # home folder does not make those files the project's.
        from engine.agents import table

        self.own = [table.get(name).home() for name in table.names()]
        from engine.base.project import project_folder

        self.project_lex = os.path.abspath(cwd or os.getcwd())
        self.project = project_folder(self.project_lex)  # a subfolder's repository root: its files are the project's
        self._folders = {}  # folder -> USER, PROJECT or None (decided by the real path)

    def of(self, path, real, declared=None):
        """(origin, project real path or "") of the file at `path` (real path
        `real`); `declared`: the origin an agent's YAML gives the file's
        entry, for a file the agent reads itself.  Outside the user's own
        folders and the project, a file is the user's (their own profile
        named it), but not one the agent reads for the project: a
        superproject's CLAUDE.md above a submodule never ranks as theirs."""
        folder = os.path.dirname(os.path.abspath(path))
        where = self._folders.get(folder, False)
        if where is False:
            where = self._folders[folder] = self._by_folder(folder)
        if where is None:
            where = PROJECT if inside(real, self.project) or declared == PROJECT else USER
        return (where, self.project) if where == PROJECT else (USER, "")

    def _by_folder(self, folder):
        in_project = inside(folder, self.project_lex) or inside(folder, self.project)
        if any(inside(folder, own) and not (in_project and self._below(own)) for own in self.own):
            return USER
        return PROJECT if in_project else None

    def _below(self, own):
        """Whether the project lies below one of the user's own folders: a
        repository cloned there (Claude Code keeps plugin marketplaces as
        clones under ~/.claude/plugins) is a project, its files are its own."""
        return any(root != own and inside(root, own) for root in (self.project, self.project_lex))


def rank(origin):
    """0 for the user's own, 1 for a project's (an unknown origin counts as a project's)."""
    return _RANK.get(origin, 1)


def order_key(item):
    """The order of rule files and of what a delivery names: the user's first,
    then by priority (lower first), file name and path."""
    return _RANK.get(item.origin, 1), item.priority, item.name, item.path
