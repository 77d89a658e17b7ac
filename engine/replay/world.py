"""The throwaway world a replay runs in: a temporary HOME, state folder,
cache folder (compiled profile, content cache) and config folders, switched
into this process's environment while the replay runs and removed after.

The rule kept: a replay never writes where the user's engine or agents keep
anything (state, content cache, tool memory, Redis, an agent's folder).
Every agent's folder variable (`home.env` of pipelines/agents/*.yaml) points
into the world, and its project variable is dropped.  What the hooks read
of the user's own setup is copied in first (read, never written): per
agent, the user's instruction files and hook settings its declaration
names, the files under HOME the profile's hook settings name
(`bring_named`), and the content cache's settings file in force.  A content
cache settings file that names a folder of its own is not used (the store
would be the user's): the built-in settings are, and the world says so in
`notes`.
"""

import os
import shutil
import tempfile

from engine.base.paths import inside

# Variables the world sets to its own folders.
FOLDERS = {"HOME": "home", "ENGINE_STATE_DIR": "state", "ENGINE_CACHE_DIR": "cache",
           "XDG_CONFIG_HOME": "home/.config", "XDG_CACHE_HOME": "home/.cache", "XDG_STATE_HOME": "home/.local/state",
           "XDG_DATA_HOME": "home/.local/share"}
# Variables that would point the hooks at the user's things: removed.
DROPPED = ("ENGINE_REDIS_URL", "ENGINE_PROFILE")


def _agents():
    from engine.agents import table

    return [table.get(n) for n in table.names()]


def _agent_folders(agents):
    """{variable: world folder} of every agent's folder variable."""
    out = {}
    for agent in agents:
        spec = agent.data["home"]
        if spec.get("env"):
            out[spec["env"]] = os.path.join("home", os.path.basename(os.path.expanduser(spec["default"])))
    return out


def _user_files(agent):
    """The files and folders of the user's own setup an agent's declaration
    names under its folder: user instruction files, the user hook settings."""
    from engine.agents.instructions import user_templates

    out = user_templates(agent)
    user = (agent.data.get("install") or {}).get("user")
    if user:
        out.append(user)
    return [p for p in out if p and p.startswith("{agent_home}/")]


class World:
    def __init__(self):
        self.root = None
        self.notes = []
        self._saved = {}
        self._brought = set()

    def __enter__(self):
        from engine.ccm import config
        from engine.core import cache

        self.root = tempfile.mkdtemp(prefix="engine-replay-")
        self.user_profiles = cache.folder()  # the user's compiled profiles, read by bring_compiled
        self._saved["ENGINE_CACHE_DIR"] = os.environ.get("ENGINE_CACHE_DIR")
        # first: reading the agent table keeps a copy in the cache folder (the world's, not the user's)
        os.environ["ENGINE_CACHE_DIR"] = os.path.join(self.root, FOLDERS["ENGINE_CACHE_DIR"])
        agents = _agents()
        self.real_home = os.path.expanduser("~")
        real_homes = {a.name: a.home() for a in agents}
        content_cache = config.chosen_path()
        folders = {**FOLDERS, **_agent_folders(agents)}
        dropped = (*DROPPED, *(a.data["project_env"] for a in agents if a.data.get("project_env")))
        for var in (*folders, *dropped, config.ENV):
            self._saved.setdefault(var, os.environ.get(var))
        for var, sub in folders.items():
            path = os.path.join(self.root, sub)
            os.makedirs(path, mode=0o700, exist_ok=True)
            os.environ[var] = path
        for var in dropped:
            os.environ.pop(var, None)
        self.home = os.environ["HOME"]
        self.project = os.path.join(self.root, "project")
        os.makedirs(self.project, mode=0o700)
        for agent in agents:
            for rel in _user_files(agent):
                tail = rel[len("{agent_home}/"):]
                _copy(os.path.join(real_homes[agent.name], tail), os.path.join(agent.home(), tail))
        self._content_cache(config, content_cache)
        return self

    def _content_cache(self, config, content_cache):
        os.environ[config.ENV] = content_cache
        try:
            folder = config.folder(config.load())
        except Exception:  # noqa: BLE001 - the built-in settings then, said in notes
            folder = None
        if folder is None or not inside(os.path.realpath(folder), os.path.realpath(self.root)):
            os.environ[config.ENV] = config.builtin_path()
            self.notes.append(f"the content cache settings {content_cache} were not used (they name a folder "
                              "outside the replay's own, or could not be read): the built-in ones were")

    def bring_compiled(self, ref):
        """Copy in the user's compiled entries of the built-in profile `ref`
        (a name: it means the same file in the world), at every built-in
        level: what the hooks compiled is not compiled again.  A profile of
        the user's (a path under HOME) is compiled in the world."""
        from engine.base.refs import is_path
        from engine.core import cache
        from engine.core.documents import builtin_names
        from engine.core.profile import Choice

        if is_path(ref):
            return
        chosen = Choice(ref, self.project, "the profile replayed")
        keys = [(chosen.key(kind, level), suffix) for level in (None, *builtin_names("level"))
                for kind, suffix in (("profile", ".pickle"), ("hooks", ".json"), ("meta", ".json"))]
        cache.bring(keys, self.user_profiles)

    def bring_named(self, settings):
        """Copy in the files under HOME (`~/...`) that hook settings name
        (a handler's instructions file), read from the user's real HOME."""
        for value in _strings(settings):
            if value.startswith("~/") and value not in self._brought:
                self._brought.add(value)
                _copy(os.path.join(self.real_home, value[2:]), os.path.join(self.home, value[2:]))

    def fresh(self, agent=None):
        """Empty state and content cache for the next transcript (the
        compiled profile stays: it is not state); the folder its replayed
        transcript goes in, where the agent (default: Claude Code) keeps its own."""
        from engine.session.locate import sessions_root

        for sub in ("state", os.path.join("cache", "ccm")):
            shutil.rmtree(os.path.join(self.root, sub), ignore_errors=True)
        os.makedirs(os.path.join(self.root, "state"), mode=0o700, exist_ok=True)
        folder = os.path.join(sessions_root(agent), "replay")
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


def _strings(value, depth=0):
    """Every string in nested settings (bounded depth: settings are data)."""
    if depth > 12:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v, depth + 1)


def _copy(src, dst):
    try:
        if os.path.isdir(src):
            shutil.copytree(src, dst, dirs_exist_ok=True)
        elif os.path.isfile(src):
            os.makedirs(os.path.dirname(dst), mode=0o700, exist_ok=True)
            shutil.copyfile(src, dst)
    except OSError:
        pass  # an unreadable rule is left out, as the hook would skip it
