"""The instruction files an agent loads itself, as its YAML declares them
(`instructions`): where they are for one working folder, and whether the
agent loads a given file at an epoch's start (the session's start and after
a compaction) or only when a matching file is touched (a scoped file).

- `path`: one file; `nested: true` also the same name in every folder from
  the project's root down to the working folder (Codex's AGENTS.md chain,
  Gemini's GEMINI.md), or from the file system's root (`nested_from`:
  Claude Code's CLAUDE.md files); `override`: a file that replaces it in its folder
  (AGENTS.override.md); `unless`: not loaded when one of those files holds
  text (with `nested`, in any folder of the chain: Claude Code reads
  AGENTS.md only without a CLAUDE.md); `since`: from that version
  of the agent on; `setting`: the agent's own setting that renames the file
  (Gemini's context.fileName), read from its settings files.
- `dir` + `glob`: a folder of rule files; with `scope_key`, a file whose
  frontmatter holds globs there is scoped (`always_key`: true makes it apply
  everywhere); `scoped_loads`: which tool kinds load a scoped file (read;
  write from `scoped_on_write_since`).
- `loads`: [start, compact]: when the agent puts the unscoped files in view.
os.path only: this runs in injecting hook processes."""

import os


def _cap():
    """How much of an agent's settings or override file is read
    (hooks.max_agent_settings_bytes of pipelines/settings/engine.yaml)."""
    from engine.core.settings import hook_bounds

    return hook_bounds()["max_agent_settings_bytes"]


def _read_small(path):
    """The first bytes of a regular file, or None (missing, unreadable, or
    no regular file: a FIFO there would block the hook)."""
    try:
        if not os.path.isfile(path):
            return None
        with open(path, "rb") as fh:
            return fh.read(_cap())
    except OSError:
        return None


def _nested_folders(cwd, start="repository"):
    """The folders from the project's root (the nearest .git above; the file
    system's root with `start` "filesystem") down to `cwd`."""
    from engine.base.project import root_of

    here = os.path.realpath(cwd)
    root = root_of(here) if start == "repository" else os.path.abspath(os.sep)
    chain = [here]
    while here != root and os.path.dirname(here) != here:
        here = os.path.dirname(here)
        chain.append(here)
    return list(reversed(chain))


def _setting_names(agent, entry, cwd):
    """The file names the agent's `setting` gives (a list or one name), from
    its user settings file, with the entry's own name when `setting_adds`;
    the entry's own name when unset or unreadable."""
    default = [os.path.basename(entry["path"])]
    setting = entry.get("setting")
    user = (agent.data.get("install") or {}).get("user")
    if not setting or not user:
        return default
    from engine.base.fastjson import loads
    from engine.base.jsonc import blank_comments

    raw = _read_small(agent.expand(user, cwd))
    text = raw.decode("utf-8", "replace") if raw is not None else None
    if text is not None and agent.data["install"]["comments"]:
        text = blank_comments(text)  # the agent reads its settings file so (Gemini CLI)
    try:
        data = loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return default
    for key in setting.split("."):
        data = data.get(key) if isinstance(data, dict) else None
    names = [data] if isinstance(data, str) else data
    if isinstance(names, list) and names and all(isinstance(n, str) and n and "/" not in n for n in names):
        return list(dict.fromkeys(names + default)) if entry["setting_adds"] else names
    return default


def user_templates(agent):
    """The user's own instruction files and folders `agent` declares
    (`origin: user`), as written ({agent_home}/...)."""
    return [e.get("path") or e["dir"] for e in agent.data.get("instructions", ()) if e.get("origin") == "user"]


def user_paths(agent, environ=None):
    """The same, expanded: a folder as it is, a file under every name the
    agent's setting gives it (Gemini's context.fileName)."""
    out = []
    for entry in agent.data.get("instructions", ()):
        if entry.get("origin") != "user":
            continue
        if "dir" in entry:
            out.append(agent.expand(entry["dir"], "", environ))
            continue
        folder = os.path.dirname(agent.expand(entry["path"], "", environ))
        out.extend(os.path.join(folder, name) for name in _setting_names(agent, entry, ""))
    return out


def files(agent, cwd, environ=None):
    """[(path, entry)] of the single files the agent reads for `cwd` (that
    exist or not), in its order."""
    out = []
    for entry in agent.data.get("instructions", ()):
        if "path" not in entry:
            continue
        if _unless(agent, entry, cwd, environ):
            continue  # the agent reads the other file instead (Claude Code: CLAUDE.md over AGENTS.md)
        names = _setting_names(agent, entry, cwd)
        folders = _places(agent, entry, os.path.dirname(entry["path"]), cwd, environ)
        fallbacks = _fallbacks(agent, entry)
        for folder in folders:
            for name in names:
                out.append((os.path.join(folder, _chosen(entry, folder, name, fallbacks)), entry))
    return out


def _chosen(entry, folder, name, fallbacks):
    """The name of the file the agent reads in `folder` for `name`: the
    override when it replaces it, else the name itself when that file is
    there, else the first fallback that is, else the name (not there)."""
    override = entry.get("override")
    if override and _replaces(os.path.join(folder, override), entry["override_when"]):
        return override
    if fallbacks and not os.path.isfile(os.path.join(folder, name)):
        return next((f for f in fallbacks if os.path.isfile(os.path.join(folder, f))), name)
    return name


def _fallbacks(agent, entry):
    """The file names of the entry's `fallback` setting, or [] (unset, or
    not a list of plain names)."""
    spec = entry.get("fallback")
    names = _setting_value(agent, spec) if spec else None
    if isinstance(names, list) and all(isinstance(n, str) and n and "/" not in n for n in names):
        return names
    return []


def _replaces(path, when):
    """Does the override file at `path` replace its folder's file: it exists
    (`exists`), or it holds more than blanks (`has_text`)."""
    return os.path.isfile(path) if when == "exists" else _has_text(path)


def _has_text(path):
    """Does the regular file at `path` hold more than blanks (in its first
    hooks.max_agent_settings_bytes, read in chunks up to its first other
    byte)?"""
    try:
        if not os.path.isfile(path):
            return False
        with open(path, "rb") as fh:
            for _ in range(_cap() // 65536 + 1):
                chunk = fh.read(65536)
                if not chunk:
                    return False
                if chunk.strip():
                    return True
    except OSError:
        pass
    return False


def below(agent, cwd, touched):
    """[(path, folder)] of the nested instruction files the agent never loads
    itself (`below_loads: []`) in the folders between `cwd` and each path
    `touched()` gives (relative to `cwd`) below it, top down; `folder`
    relative to `cwd`.  `touched` is called only for such an agent (it
    reads the transcript)."""
    entries = [e for e in agent.data.get("instructions", ()) if "path" in e and e.get("below_loads") == []]
    if not entries:
        return []
    named = [(e, _setting_names(agent, e, cwd), _fallbacks(agent, e)) for e in entries]
    out, looked = [], set()
    for rel in touched():
        parts = rel.split("/")[:-1]  # the folders above the touched file, within cwd
        if not parts or parts[0] in ("", ".", ".."):
            continue  # at the working folder, or outside it (relative() keeps those absolute)
        for i in range(1, len(parts) + 1):
            folder_rel = "/".join(parts[:i])
            if folder_rel in looked:
                continue
            looked.add(folder_rel)
            folder = os.path.join(cwd, folder_rel)
            for entry, names, fallbacks in named:
                for name in names:
                    path = os.path.join(folder, _chosen(entry, folder, name, fallbacks))
                    if os.path.isfile(path):
                        out.append((path, folder_rel))
    return out


def folders(agent, cwd, environ=None):
    """[(folder, glob, entry)] of the rule folders the agent reads for `cwd`."""
    return [(folder, e["glob"], e) for e in agent.data.get("instructions", ()) if "dir" in e
            for folder in _places(agent, e, e["dir"], cwd, environ)]


def base_of(entry, folder):
    """The folder the `paths:` globs of the rule files in `folder` (one of
    `entry`'s) are relative to: the one its `{project}` stands for there
    (Claude Code: the folder holding .claude/rules, whichever folder the
    agent works in; measured with 2.1.332), else None (the working one)."""
    template, project = entry.get("dir", ""), "{project}"
    tail = template[len(project):]
    if not template.startswith(project + "/") or not folder.endswith(tail):
        return None
    return folder[: -len(tail)]


def _places(agent, entry, template, cwd, environ=None):
    """The folders `template` ({agent_home}/..., {project}/...) names for
    `cwd`: one, or with `nested` one in each folder of the entry's chain
    (`nested_from`), from the top down."""
    project = "{project}"
    if entry.get("nested") and (template == project or template.startswith(project + "/")):
        below = template[len(project) + 1:]  # ".claude/rules" of {project}/.claude/rules; "" of {project}
        return [os.path.join(f, below) if below else f for f in _nested_folders(cwd, entry["nested_from"])]
    return [agent.expand(template, cwd, environ)]


def _unless(agent, entry, cwd, environ=None):
    """Does one of the entry's `unless` files hold text: in the working
    folder, or with `nested` in any folder of the entry's chain (Claude Code
    reads no AGENTS.md once a CLAUDE.md with text is anywhere above)?"""
    return any(_has_text(os.path.join(folder, os.path.basename(template)))
               for template in entry.get("unless", ())
               for folder in _places(agent, entry, os.path.dirname(template), cwd, environ))


def entry_of(agent, real, cwd, environ=None):
    """The instruction entry under which the agent reads the file at real
    path `real`, or None: a file it does not read itself."""
    return Index(agent, cwd, environ).entry_of(real)


class Index:
    """The agent's instruction files and folders for one working folder,
    found once (an event asks for each of its rule files)."""

    __slots__ = ("files", "folders")

    def __init__(self, agent, cwd, environ=None):
        found = files(agent, cwd, environ)
        self.files = {os.path.realpath(path): entry for path, entry in reversed(found)}  # the first listed wins
        self.folders = [(os.path.realpath(folder), glob, entry) for folder, glob, entry in folders(agent, cwd, environ)]

    def entry_of(self, real):
        """The entry under which the agent reads the file at `real`, or None."""
        entry = self.files.get(real)
        if entry is not None:
            return entry
        return next((e for folder, glob, e in self.folders if read_from(real, folder, glob)), None)


def read_from(real, folder, glob):
    """Is `real` one of the files `glob` names in `folder`: a name pattern
    names the folder's own files, `**/` before it its subfolders' too."""
    from fnmatch import fnmatchcase

    parent, name = os.path.split(real)
    if glob.startswith("**/"):
        return (parent == folder or parent.startswith(folder.rstrip(os.sep) + os.sep)) and fnmatchcase(name, glob[3:])
    return parent == folder and fnmatchcase(name, glob)


def loads_itself(agent, entry, version, cwd, when="start", real=None):
    """Does the agent load an unscoped file of `entry` at `when` (start or
    compact), at this version, in this folder, and (`real`: the file's real
    path) the whole of it, not cut by the entry's `max_bytes`?"""
    from .version import parse

    if entry is None or when not in entry.get("loads", ()):
        return False
    if real is not None and cut(agent, entry, real, cwd):
        return False
    if entry.get("since"):
        v = parse(version)
        if v is None or v < parse(entry["since"]):
            return False
    return not _unless(agent, entry, cwd)


def scoped_load_kinds(entry, version):
    """The tool kinds after which the agent loads a scoped file of `entry`."""
    from .version import parse

    kinds = list(entry.get("scoped_loads", ()) if entry else ())
    since = entry.get("scoped_on_write_since") if entry else None
    if since and "write" not in kinds:
        v = parse(version)
        if v is not None and v >= parse(since):
            kinds.append("write")
    return kinds


def cut(agent, entry, real, cwd):
    """Does the file at `real` end past what the agent reads of `entry`'s
    files (`max_bytes`: their sizes added in the agent's order, with the
    bytes it puts `between` two)?  A file not found among them, or of an
    entry without `max_bytes`, is not cut."""
    if entry is None or not entry.get("max_bytes"):
        return False
    spec = entry["max_bytes"]
    cap, between = _max_bytes(agent, spec), spec["between"]
    end = 0
    for path, e in files(agent, cwd):
        if e is not entry:
            continue
        try:
            size = os.path.getsize(path)
        except OSError:
            continue
        end += size + (between if end else 0)
        if os.path.realpath(path) == real:
            return end > cap
    return False


def _max_bytes(agent, spec):
    """The agent's figure: its settings file's `key` when that holds a
    positive whole number, else `bytes`."""
    value = _setting_value(agent, spec) if spec.get("file") else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else spec["bytes"]


def _setting_value(agent, spec):
    """The top-level `key` of the agent's settings `file` ({file, key}), or
    None.  The file is parsed only when it names the key (most never do)."""
    data = _read_small(agent.expand(spec["file"]))
    if data is None or spec["key"].encode() not in data:
        return None
    return _setting(data, spec["file"], spec["key"])


def _setting(data, name, key):
    """The top-level `key` of a settings file's bytes (TOML or JSON by the
    file's suffix), or None when it cannot be read."""
    text = data.decode("utf-8", "replace")
    try:
        if name.endswith(".toml"):
            import tomllib

            return tomllib.loads(text.removeprefix("\ufeff")).get(key)  # Codex reads a file with a BOM
        from engine.base.fastjson import loads

        found = loads(text)
        return found.get(key) if isinstance(found, dict) else None
    except (ValueError, RecursionError):
        return None
