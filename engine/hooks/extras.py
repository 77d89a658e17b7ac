"""What `engine install` adds beside the hook entries, for an agent whose
YAML asks for it (claude-code): the /pin-* slash commands in a folder next
to the settings file (`install.slash_commands`), and the profile's
autocompact percentage as a variable of the settings' environment
(`install.autocompact_env`).  Only the values install wrote are ever taken
back: a command or a variable the user set stays."""

import json
import os
from pathlib import Path

from engine.base.errors import UserError

from . import settingsfile


def _env_spec(agent):
    return agent.data["install"].get("autocompact_env")


def env_record(path, value=False):
    """The variable's value install wrote into a settings file (None if it
    wrote none); value=None forgets it, a string records it (both return
    the record's path when it was written, else None)."""
    record = settingsfile.record_path("installed-env.json")
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        data = {}
    key = str(path.resolve() if path.exists() else path.absolute())
    if value is False:
        v = data.get(key)
        return v if isinstance(v, str) else None
    if value is None:
        if key not in data and not record.exists():
            return None  # nothing recorded, nothing to forget: no record file for it
        data.pop(key, None)
    else:
        data[key] = value
    return settingsfile.save_record(record, json.dumps(data).encode("utf-8"), ".installed-env-")


def set_env(agent, new, path, pct):
    """Write (pct > 0) or withdraw our variable in `new`; a value the user
    set is never touched.  Returns (value to record or None, note or None,
    the variable's name or None)."""
    spec = _env_spec(agent)
    if not spec:
        return None, None, None
    key, name = spec["key"], spec["variable"]
    env = new.get(key)
    if env is not None and not isinstance(env, dict):
        raise UserError(f'"{key}" in the settings file is {settingsfile.kind(env)}, not an object; fix it, '
                        "nothing was changed", str(path))
    env = env or {}
    ours, current = env_record(path), env.get(name)
    if pct:
        if current is not None and current != ours:
            return None, f"{name} is already set to {current!r} by you; left as it is", name
        new[key] = dict(env, **{name: str(pct)})
        return str(pct), None, name
    if ours is not None and current == ours:
        _drop(new, key, name)
    return None, None, name


def withdraw_env(agent, new, path):
    """Take our variable out of `new` when it still holds what install
    wrote; its name when it did, else None."""
    spec = _env_spec(agent)
    if not spec:
        return None
    key, name = spec["key"], spec["variable"]
    ours = env_record(path)
    if ours is not None and isinstance(new.get(key), dict) and new[key].get(name) == ours:
        _drop(new, key, name)
        return name
    return None


def _drop(new, key, name):
    env = dict(new[key])
    del env[name]
    if env:
        new[key] = env
    else:
        del new[key]


def _folder(agent, path):
    name = agent.data["install"].get("slash_commands")
    return os.path.join(os.path.dirname(os.path.abspath(path)), name) if name else None


def slash_targets(agent, path, installing):
    """The folder and files install (or uninstall) would write or remove for the slash commands."""
    folder = _folder(agent, path)
    if folder is None:
        return []
    from engine.ccm.slash import targets

    return targets(folder, installing)


def install_slash(agent, path):
    """Write the slash commands; the (path, what) lines to list."""
    folder = _folder(agent, path)
    if folder is None:
        return []
    from engine.ccm.slash import install_commands

    pins = install_commands(path, folder)
    files = [(p, f"slash command /{Path(p).stem}") for p in pins["written"]]
    files += [(p, f"your own /{Path(p).stem} command, left as it is (ours is not installed)") for p in pins["kept"]]
    if pins["record"]:
        files.append((Path(pins["record"]), "record of the slash commands written (uninstall removes only those)"))
    return files


def uninstall_slash(agent, path):
    """Remove the slash commands install wrote, and only those; the lines to list."""
    folder = _folder(agent, path)
    if folder is None:
        return []
    from engine.ccm.slash import uninstall_commands

    pins = uninstall_commands(path, folder)
    files = [(p, f"slash command /{Path(p).stem}") for p in pins["removed"]]
    files += [(p, f"/{Path(p).stem}: changed since install wrote it, so it is yours now; left") for p in pins["kept"]]
    if pins["folder"]:
        files.append((pins["folder"], "the commands folder (it held nothing else)"))
    if pins["record"]:
        files.append((Path(pins["record"]), "record of the slash commands: their entries forgotten"))
    return files
