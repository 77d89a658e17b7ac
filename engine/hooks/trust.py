"""Which files a hook may read into the agent's context (the trust model).

A cloned repository is not the user: its `.engine/profile.yaml` is used only
once approved (`engine trust`, engine/core/trust_store.py), and even then its
machine-level keys are the user's (engine/core/boundary.py); its `.claude/rules`
may hold links.  So:

- the project is the working folder's repository (its root's AGENTS.md,
  read from a subfolder, is the project's), never the home folder;
- a profile found in the project may read only files inside the project and
  the user's own instruction files an agent reads itself, as each agent's
  YAML declares them (`origin: user`: ~/.claude/rules, ~/.codex/AGENTS.md ...);
- a file reached through the project (its rule folder, its CLAUDE.md) whose
  real path leaves the project is left out, whatever the profile; so is one
  whose real path leaves the rule folder it was found in (a link is followed
  only inside it) or lies in version-control metadata (`.git/config` holds
  a clone's token: hooks.trust.vcs_metadata);
- a file an agent reads for the project from a folder above it (Claude
  Code's CLAUDE.md chain up to /) follows links only inside the folder it
  was found in, and is left out when another account owns it or may write it;
- the user's own instruction files and folders may link where the user likes;
- anything wider needs `hooks.trust.allow_read` in the user's own profile
  (named in the hook command, $ENGINE_PROFILE, the config folder's
  profile.yaml, or the built-in one); a project profile's own
  `allow_read` is never honoured.
"""

import os

from engine.base.paths import inside

from .origin import PROJECT

_ALLOW = "allow it with hooks.trust.allow_read in your own profile"


class Trust:
    def __init__(self, cwd, from_project, allow_read, vcs_metadata=()):
        from engine.base.project import project_folder

        self.project_lex = os.path.abspath(cwd or os.getcwd())
        # The repository's root, not only the working folder: the AGENTS.md
        # chain above a subfolder is the project's (engine/base/project.py).
        self.project = project_folder(self.project_lex)
        self.from_project = from_project
        self._own = None  # the user's own instruction files (agent_rules), read when first asked
        self.allowed = [os.path.realpath(os.path.expanduser(a)) for a in allow_read]
        self.vcs = [(name, os.sep + name + os.sep) for name in vcs_metadata]
        self._folders = {}

    def why_not(self, path, real=None, folder=None, declared=None):
        """None when `path` may be read, else the reason it may not; `real`:
        its real path, when the caller has it already; `folder`: the rule
        folder it was found in (a source's folder, a named file's folder);
        `declared`: the origin an agent's YAML gives the file's entry
        ("project" for the chain of folders it reads for the project)."""
        lex = os.path.abspath(path)
        real = os.path.realpath(path) if real is None else real
        if any(inside(real, a) for a in self.allowed):
            return None
        if any(inside(lex, r) for r in self.agent_rules()):
            return None  # the user's own rule folder may link anywhere
        in_project = inside(lex, self.project_lex) or inside(lex, self.project)
        if in_project:
            return self._in_project(real, folder)
        if declared == PROJECT:
            return self._above_project(lex, real, folder)
        if not self.from_project:
            return None  # the user's own profile named it
        return ("a profile found in the project may read only the project and your own instruction files that "
                "an agent reads itself (`origin: user` in pipelines/agents/); allow it with hooks.trust.allow_read "
                "in your own profile")

    def agent_rules(self):
        """The user's own instruction files and folders, as every agent
        declares them (~/.claude/rules, ~/.codex/AGENTS.md ...): the agent
        reads them itself, and the user's links in them may lead anywhere."""
        if self._own is None:
            from engine.agents import table
            from engine.agents.instructions import user_paths

            self._own = [p for name in table.names() for p in user_paths(table.get(name))]
        return self._own

    def _in_project(self, real, folder):
        """Why a file reached through the project may not be read, or None."""
        if not inside(real, self.project):
            return f"its real path {real} is outside the project {self.project}; {_ALLOW}"
        meta = self._vcs_part(real)
        if meta:
            return f"its real path {real} is inside version-control metadata ({meta}); {_ALLOW}"
        root = self._real_folder(folder)
        if root is not None and not inside(real, root):
            return f"it links to {real}, outside its rule folder {root}; {_ALLOW}"
        return None

    def _above_project(self, lex, real, folder):
        """Why a file the agent reads for the project from a folder above it
        (a superproject's CLAUDE.md, a download folder's .claude/rules) may
        not be read, or None.  Nobody vouches for those folders: a link
        there is followed only inside the folder the file was found in, and
        a file another account owns or may write (planted in /tmp) is left
        out."""
        root = self._real_folder(folder or os.path.dirname(lex))
        if not inside(real, root):
            return f"it links to {real}, outside {root}, a folder above the project {self.project}; {_ALLOW}"
        meta = self._vcs_part(real, root)
        if meta:
            return f"its real path {real} is inside version-control metadata ({meta}); {_ALLOW}"
        try:
            st = os.stat(real)
        except OSError:
            return None  # nothing there: the reader says so
        if st.st_uid not in (os.getuid(), 0) or st.st_mode & 0o002:
            return (f"it lies above the project {self.project} and another account owns it or may write it; "
                    f"{_ALLOW}")
        return None

    def _vcs_part(self, real, root=None):
        """The version-control folder name in `real` below `root` (the
        project's), or ""."""
        rest = real[len(root or self.project):] + os.sep
        return next((name for name, needle in self.vcs if needle in rest), "")

    def _real_folder(self, folder):
        """The real path of a rule folder, resolved once per event."""
        if not folder:
            return None
        real = self._folders.get(folder)
        if real is None:
            real = self._folders[folder] = os.path.realpath(folder)
        return real


def for_event(chosen, cwd, settings):
    """The Trust for an event of the profile `chosen` (a Choice): whether it
    is a project's (approved: an unapproved one is never chosen), and the
    allow-list, which the trust boundary (engine/core/boundary.py) already
    took from the user's own profile."""
    trust = settings["trust"]  # hooks.trust and its keys are required (engine/hooks/check.py)
    return Trust(cwd, chosen.origin == "project", trust["allow_read"], trust["vcs_metadata"])


def note_unapproved(event, chosen, hooks, log):
    """Log once per session why the project profile `chosen` (a Choice) left
    out for this event is not used (not approved, changed since, or
    refused).  Costs nothing when the choice left nothing out."""
    note = chosen.left_out
    session = event.session
    if not note or not session:
        return
    path, reason, command = note
    from .notes import first_time

    try:
        ttl = float(hooks["state"]["ttl_hours"]) * 3600
    except (KeyError, TypeError, ValueError):
        ttl = None  # none pruned, as before
    if first_time("trust-notes", session, f"{path}\0{reason}", ttl):
        log(f"project profile {path} is not used: {reason}" + (f"; approve it with: {command}" if command else ""))
