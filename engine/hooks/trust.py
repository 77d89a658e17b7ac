"""Which files a hook may read into the agent's context (the trust model).

A cloned repository is not the user: its `.engine/profile.yaml` is found
from the event's working folder, and its `.claude/rules` may hold links.  So:

- a profile found in the project may read only files inside the project and
  the rule files the agent itself reads (~/.claude/rules, ~/.claude/CLAUDE.md);
- a file reached through the project (its rule folder, its CLAUDE.md) whose
  real path leaves the project is left out, whatever the profile;
- the user's own rule folder (~/.claude/rules) may link where the user likes;
- anything wider needs `hooks.trust.allow_read` in the user's own profile
  (named in the hook command, $ENGINE_PROFILE, the config folder's
  profile.yaml, or the built-in one); a project profile's own
  `allow_read` is never honoured.
"""

import os


def _inside(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class Trust:
    def __init__(self, cwd, from_project, allow_read):
        home = os.path.expanduser("~")
        self.project_lex = os.path.abspath(cwd or os.getcwd())
        self.project = os.path.realpath(self.project_lex)
        self.from_project = from_project
        # The agent's own rule files, named as the agent names them.
        self.agent_rules = [os.path.join(home, ".claude", "rules"), os.path.join(home, ".claude", "CLAUDE.md")]
        self.allowed = [os.path.realpath(os.path.expanduser(a)) for a in allow_read]

    def why_not(self, path, real=None):
        """None when `path` may be read, else the reason it may not; `real`:
        its real path, when the caller has it already."""
        lex = os.path.abspath(path)
        real = os.path.realpath(path) if real is None else real
        if any(_inside(real, a) for a in self.allowed):
            return None
        if any(_inside(lex, r) for r in self.agent_rules):
            return None  # the user's own rule folder may link anywhere
        in_project = _inside(lex, self.project_lex) or _inside(lex, self.project)
        if in_project:
            if _inside(real, self.project):
                return None
            return (f"its real path {real} is outside the project {self.project}; "
                    "allow it with hooks.trust.allow_read in your own profile")
        if not self.from_project:
            return None  # the user's own profile named it
        return ("a profile found in the project may read only the project and ~/.claude/rules, ~/.claude/CLAUDE.md; "
                "allow it with hooks.trust.allow_read in your own profile")


def for_event(profile_ref, cwd, settings, log):
    """The Trust for an event: whether the active profile came from the
    project, and the allow-list of the user's own profile."""
    from ..profile import choose_origin, user_profile_ref, load_hooks

    from_project = choose_origin(profile_ref, cwd) == "project"
    if not from_project:
        return Trust(cwd, False, settings.get("trust", {}).get("allow_read", []))
    try:
        own = load_hooks(user_profile_ref(), cwd=cwd).get("trust", {}).get("allow_read", [])
    except Exception as exc:  # noqa: BLE001 - a broken user profile widens nothing
        log(f"your own profile could not be read ({exc}); the project's files only")
        own = []
    extra = [a for a in settings.get("trust", {}).get("allow_read", []) if a not in own]
    if extra:
        log(f"hooks.trust.allow_read of the project's profile is ignored ({', '.join(extra)}); "
            "only your own profile may widen what hooks read")
    return Trust(cwd, True, own)
