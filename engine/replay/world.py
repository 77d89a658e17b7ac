"""The throwaway world a replay runs in: a temporary HOME, state folder,
cache folder (compiled profile, content cache) and config folders, switched
into this process's environment while the replay runs and removed after.

The rule kept: a replay never writes where the user's engine keeps
anything (state, content cache, tool memory, Redis).  What the hooks read
of the user's own setup is copied in first (read, never written): the
rules, CLAUDE.md and settings.json under ~/.claude and the content cache's settings file
in force.  A content cache settings file that names a folder of its own is
not used (the store would be the user's): the built-in settings are, and
the world says so in `notes`.
"""

import os
import shutil
import tempfile

# Files under ~/.claude the built-in handlers read (rules, CLAUDE.md, the
# compaction instructions, the permission rules the content cache's
# rewrite consults).
HOME_COPIES = ("rules", "CLAUDE.md", "compact-instructions.txt", "settings.json")
# Variables the world sets to its own folders.
FOLDERS = {"HOME": "home", "ENGINE_STATE_DIR": "state", "ENGINE_CACHE_DIR": "cache",
           "XDG_CONFIG_HOME": "home/.config", "XDG_CACHE_HOME": "home/.cache", "XDG_STATE_HOME": "home/.local/state",
           "XDG_DATA_HOME": "home/.local/share", "CLAUDE_CONFIG_DIR": "home/.claude"}
# Variables that would point the hooks at the user's things: removed.
DROPPED = ("ENGINE_REDIS_URL", "ENGINE_PROFILE", "CLAUDE_PROJECT_DIR")


class World:
    def __init__(self):
        self.root = None
        self.notes = []
        self._saved = {}

    def __enter__(self):
        from engine.ccm import config

        real_claude = os.path.join(os.path.expanduser("~"), ".claude")
        content_cache = config.chosen_path()
        self.root = tempfile.mkdtemp(prefix="engine-replay-")
        for var in (*FOLDERS, *DROPPED, config.ENV):
            self._saved[var] = os.environ.get(var)
        for var, sub in FOLDERS.items():
            path = os.path.join(self.root, sub)
            os.makedirs(path, mode=0o700, exist_ok=True)
            os.environ[var] = path
        for var in DROPPED:
            os.environ.pop(var, None)
        self.home = os.environ["HOME"]
        self.project = os.path.join(self.root, "project")
        os.makedirs(self.project, mode=0o700)
        for name in HOME_COPIES:
            _copy(os.path.join(real_claude, name), os.path.join(self.home, ".claude", name))
        os.environ[config.ENV] = content_cache
        try:
            folder = config.folder(config.load())
        except Exception:  # noqa: BLE001 - the built-in settings then, said in notes
            folder = None
        if folder is None or not _inside(folder, self.root):
            os.environ[config.ENV] = config.builtin_path()
            self.notes.append(f"the content cache settings {content_cache} were not used (they name a folder "
                              "outside the replay's own, or could not be read): the built-in ones were")
        return self

    def fresh(self):
        """Empty state and content cache for the next transcript (the
        compiled profile stays: it is not state)."""
        for sub in ("state", os.path.join("cache", "ccm")):
            shutil.rmtree(os.path.join(self.root, sub), ignore_errors=True)
        os.makedirs(os.path.join(self.root, "state"), mode=0o700, exist_ok=True)
        folder = os.path.join(self.home, ".claude", "projects", "replay")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        return folder

    def __exit__(self, *exc):
        for var, value in self._saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value
        shutil.rmtree(self.root, ignore_errors=True)
        return False


def _inside(path, root):
    path, root = os.path.realpath(path), os.path.realpath(root)
    return path == root or path.startswith(root + os.sep)


def _copy(src, dst):
    try:
        if os.path.isdir(src):
            shutil.copytree(src, dst, dirs_exist_ok=True)
        elif os.path.isfile(src):
            os.makedirs(os.path.dirname(dst), mode=0o700, exist_ok=True)
            shutil.copyfile(src, dst)
    except OSError:
        pass  # an unreadable rule is left out, as the hook would skip it
