"""`engine install` / `engine uninstall`: the hook entries in the agent's
settings.json.  Merged with what is there, a backup written before any change,
idempotent, and removable exactly: our entries are the ones whose command
has exactly the shape hook_command writes (see _is_ours), never a command
that merely contains similar words.  A settings file install cannot read as
the agent does (a folder, a FIFO, a link loop, "hooks" of the wrong type, a
number JSON cannot hold) is a one-line error and nothing is changed."""

import errno
import json
import os
import shlex
import stat
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple, Optional

from engine.base.errors import UserError
from engine.base.files import private_dir, replace_atomic
from engine.base.refs import is_path

def _agent(name=None):
    from engine.agents import DEFAULT_AGENT, table

    return table.get(name or DEFAULT_AGENT)


def agent_events(hooks, agent=None):
    """The agent's names of the events the profile runs handlers at, in the
    profile's order (an event the agent does not send is left out)."""
    from .handlers import events_of

    spec = _agent(agent)
    out = []
    for event, hs in events_of(hooks).items():
        if any(h.get("enabled", True) is not False for h in hs):
            out.extend(n for n in spec.agent_events(event) if n not in out)
    return out


def tool_events(agent=None):
    """The agent's event names that take a tool matcher."""
    spec = _agent(agent)
    matcher = (spec.data.get("install") or {}).get("matcher") or {}
    return {n for e in matcher.get("events", ()) for n in spec.agent_events(e)}


def settings_path(scope, cwd=None):
    if scope == "user":
        return Path(os.path.expanduser("~")) / ".claude" / "settings.json"
    return Path(cwd or os.getcwd()) / ".claude" / "settings.json"


def hook_command(profile_ref=None, cwd=None):
    """A command that works without any virtual environment being active: the
    `engine-hook` script installed beside this interpreter (its first line
    names the interpreter; it spares every event the ~10 ms of the generated
    `engine` wrapper), else `engine hook`, else the interpreter itself with
    -m, which costs about 10 ms more again (runpy)."""
    bindir = os.path.dirname(sys.executable)
    for name, args in (("engine-hook", []), ("engine", ["hook"])):
        script = os.path.join(bindir, name)
        if os.path.isfile(script) and os.access(script, os.X_OK) and _runs_this_python(script):
            parts = [script, *args]
            break
    else:
        parts = [sys.executable, "-m", "engine.cli", "hook"]
    if profile_ref:
        ref = profile_ref
        if is_path(ref):
            ref = str((Path(cwd or os.getcwd()) / os.path.expanduser(ref)).resolve())
        parts += ["--profile", ref]
    return " ".join(shlex.quote(p) for p in parts)


def _runs_this_python(script):
    try:
        with open(script, "rb") as fh:
            first = fh.readline().decode("utf-8", "replace").strip()
    except OSError:
        return False
    return first.startswith("#!") and os.path.realpath(first[2:].split()[0]) == os.path.realpath(sys.executable)


def _load(path):
    """(settings data, the file's bytes or None when there is no file).
    Anything but a readable JSON object of the shape the agent reads is a
    one-line error, before anything is changed."""
    where = str(path)
    try:
        st = os.stat(path)  # follows a link; a loop is ELOOP
    except FileNotFoundError:
        return {}, None  # no file yet (or a link to one that does not exist yet)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UserError("settings file is a symbolic link loop; fix the link, nothing was changed", where) from None
        raise UserError(f"cannot read settings file ({exc.strerror}); nothing was changed", where) from None
    if stat.S_ISDIR(st.st_mode):
        raise UserError("this is a folder, not a settings file; move it away, nothing was changed", where)
    if not stat.S_ISREG(st.st_mode):
        raise UserError("settings file is not a regular file (a FIFO or a device?); nothing was changed", where)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):  # swapped since the check
                raise UserError("settings file is not a regular file; nothing was changed", where)
            raw = fh.read()
    except OSError as exc:
        raise UserError(f"cannot read settings file ({exc.strerror}); nothing was changed", where) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError("settings file is not UTF-8; fix it before installing hooks (nothing was changed)", where) from None
    if not text.strip():
        return {}, raw
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        msg = getattr(exc, "msg", str(exc))
        raise UserError(f"settings file is not valid JSON ({msg}); fix it, nothing was changed", where, line, col) from None
    except RecursionError:
        raise UserError("settings file is nested too deeply to read; nothing was changed", where) from None
    if not isinstance(data, dict):
        raise UserError("settings file must hold a JSON object; nothing was changed", where)
    _check_shape(data, where)
    return data, raw


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def _finite_float(text):
    value = float(text)
    if value - value != 0:  # rewritten, it would become Infinity, which is not JSON
        raise ValueError(f"the number {text[:40]} is out of range for JSON readers (it would become Infinity); write it as a string or a smaller number")
    return value


def _check_shape(data, where):
    """The shape the agent reads: {"hooks": {"Event": [groups]}}; install and
    uninstall refuse the same files."""
    hooks = data.get("hooks")
    if "hooks" not in data:
        return
    if not isinstance(hooks, dict):
        raise UserError(f'"hooks" must be an object of event names (it is {_kind(hooks)}); fix it, nothing was changed', where)
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise UserError(f'"hooks"."{event}" must be a list of hook groups (it is {_kind(groups)}); fix it, '
                            "nothing was changed", where)


def _kind(value):
    return {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(
        type(value), "a number")


def _is_ours(hook):
    """An entry exactly as install writes it: {"type": "command", "command":
    C, "timeout": N} where C is `<abs path>/engine-hook`, `<abs path>/engine
    hook` or `<abs python> -m engine.cli hook`, optionally with `--profile X`, quoted as hook_command
    quotes it.  A command that merely contains those words is the user's."""
    if not isinstance(hook, dict) or hook.get("type") != "command" or set(hook) - {"type", "command", "timeout"}:
        return False
    cmd = hook.get("command")
    if not isinstance(cmd, str):
        return False
    try:
        argv = shlex.split(cmd)
    except ValueError:
        return False
    if not argv or " ".join(shlex.quote(a) for a in argv) != cmd:
        return False
    if len(argv) >= 2 and argv[-2] == "--profile":
        argv = argv[:-2]
    if not os.path.isabs(argv[0]):
        return False
    if argv[1:] == []:
        return os.path.basename(argv[0]) == "engine-hook"
    if argv[1:] == ["hook"]:
        return os.path.basename(argv[0]) == "engine"
    return argv[1:] == ["-m", "engine.cli", "hook"]


def _without_ours(data):
    out = json.loads(json.dumps(data))  # deep copy
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                inner = [h for h in g["hooks"] if not _is_ours(h)]
                if not inner and any(_is_ours(h) for h in g["hooks"]) and set(g) <= {"matcher", "hooks"}:
                    continue  # the group held only our hook
                g = dict(g, hooks=inner)
            kept.append(g)
        if kept or not groups:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks and "hooks" in data and data["hooks"]:
        del out["hooks"]
    return out


def _layout(path):
    """(indent, trailing newline) of the user's file, so a rewrite keeps its
    look: the first indented line's indent (spaces or a tab), None for a file
    on one line; 2 spaces and a newline for a new file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return 2, True
    if not text.strip():
        return 2, True
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            indent = line[: len(line) - len(stripped)]
            return (indent if "\t" in indent else len(indent)), text.endswith("\n")
    return None, text.endswith("\n")


def _backup(path, keep):
    """Copy the file to settings.json.bak-<time>, then keep only the newest
    `keep` backups (0: no backup)."""
    if keep <= 0:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.bak-{stamp}-{n:03d}")
        n += 1
    backup.write_bytes(path.read_bytes())
    os.chmod(backup, path.stat().st_mode & 0o7777)
    old = sorted(path.parent.glob(f"{path.name}.bak-*"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    for extra in old[: max(0, len(old) - keep)]:
        try:
            extra.unlink()
        except OSError:
            pass
    return backup


class Done(NamedTuple):
    """What install or uninstall did: the settings file, whether it changed,
    its backup (or None), and every file written or removed, as (path, what)
    pairs in the order they happened, for the command to list."""
    path: Path
    changed: bool
    backup: Optional[Path]
    files: list


def _save_record(record, data, prefix):
    """Write a record in the state folder when its bytes change; its path
    when written, else None.  A record is a courtesy: failing to write it
    is not an error (uninstall then does less), and not reported as written."""
    try:
        if record.read_bytes() == data:
            return None
    except OSError:
        pass
    try:
        private_dir(str(record.parent))
        replace_atomic(str(record), data, prefix=prefix)
    except OSError:
        return None
    return record


def _created_record():
    from engine.base.paths import state_dir_str

    return Path(state_dir_str()) / "installed-settings.json"


def _created(path, add=None):
    """Settings files that `engine install` created (so uninstall may remove
    them once they hold nothing else); add=True/False records or forgets one
    (and returns the record's path when it was written)."""
    record = _created_record()
    try:
        paths = set(json.loads(record.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        paths = set()
    key = str(path.resolve() if path.exists() else path.absolute())
    if add is None:
        return key in paths
    (paths.add if add else paths.discard)(key)
    # the record is a courtesy: without it uninstall leaves `{}`
    return _save_record(record, json.dumps(sorted(paths)).encode("utf-8"), ".installed-")


def _write(path, data, original, keep=3):
    """Replace the settings file atomically, a bounded number of backups of
    it first (newest `keep`), keeping the user's indent.  Just before the
    rename the file is read again: if another program changed it since it
    was read, nothing is written and the user runs the command again."""
    where = str(path)
    real = Path(os.path.realpath(path))  # write through a link (dotfile managers keep the real file elsewhere)
    tmp = backup = None
    indent, newline = _layout(real) if original is not None else (2, True)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        mode = (real.stat().st_mode & 0o7777) if original is not None else 0o600
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=".settings-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=indent, ensure_ascii=False, allow_nan=False)
            if newline:
                fh.write("\n")
        os.chmod(tmp, mode)
        if _current(real) != original:
            raise UserError("settings file changed while it was being updated (another program wrote it); "
                            "run the command again, nothing was changed", where)
        if original is not None:
            backup = _backup(real, keep)
        os.replace(tmp, real)
        tmp = None
    except OSError as exc:
        raise UserError(f"cannot write settings: {exc.strerror or exc}; nothing was changed", where) from None
    finally:
        if tmp is not None:
            for leftover in (tmp, backup):
                if leftover is not None:
                    try:
                        os.unlink(leftover)
                    except OSError:
                        pass
    return backup


def _current(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


# The agent's variable for its auto-compaction threshold (percent); it honours
# only a value lower than its own default.
AUTOCOMPACT_ENV = "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"


def _env_record(path, value=False):
    """The AUTOCOMPACT_ENV value install wrote into a settings file (None if
    it wrote none); value=None forgets it, a string records it (both return
    the record's path when it was written, else None)."""
    record = _created_record().with_name("installed-env.json")
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
    return _save_record(record, json.dumps(data).encode("utf-8"), ".installed-env-")


def _set_autocompact(new, path, pct):
    """Write (pct > 0) or withdraw our AUTOCOMPACT_ENV in `new`; a value the
    user set is never touched.  Returns (value to record, or None; note)."""
    env = new.get("env")
    if env is not None and not isinstance(env, dict):
        raise UserError(f'"env" in the settings file is {_kind(env)}, not an object; fix it, nothing was changed',
                        str(path))
    env = env or {}
    ours, current = _env_record(path), env.get(AUTOCOMPACT_ENV)
    if pct:
        if current is not None and current != ours:
            return None, f"{AUTOCOMPACT_ENV} is already set to {current!r} by you; left as it is"
        new["env"] = dict(env, **{AUTOCOMPACT_ENV: str(pct)})
        return str(pct), None
    if ours is not None and current == ours:
        _drop_autocompact(new)
    return None, None


def _drop_autocompact(new):
    env = dict(new["env"])
    del env[AUTOCOMPACT_ENV]
    if env:
        new["env"] = env
    else:
        del new["env"]


def install(scope, events, profile_ref=None, timeout=10, cwd=None, keep=3, autocompact_pct=0):
    """Add our entries for `events` (and AUTOCOMPACT_ENV when
    autocompact_pct > 0), and the /pin-* slash commands; returns a Done."""
    path = settings_path(scope, cwd)
    data, original = _load(path)
    new = _without_ours(data)
    value, note = _set_autocompact(new, path, autocompact_pct)
    if note:
        print(f"{path}: {note}", file=sys.stderr)
    cmd = hook_command(profile_ref, cwd)
    hooks = new.setdefault("hooks", {})
    for event in events:
        entry = {"hooks": [{"type": "command", "command": cmd, "timeout": timeout}]}
        if event in tool_events():
            entry = {"matcher": "*", **entry}
        hooks.setdefault(event, []).append(entry)
    # content cache: the /pin-* slash commands next to the settings file
    # (engine/ccm/slash.py), written once the settings are
    from engine.ccm.slash import install_commands

    files = []
    backup = None
    if new != data:
        backup = _write(path, new, original, keep)
        what = f"hook entries for {len(events)} events" + (f", and {AUTOCOMPACT_ENV}={value}" if value else "")
        files.append((path, what if original is not None else f"created, with {what}"))
        if backup is not None:
            files.append((backup, "backup of the settings file as it was"))
    pins = install_commands(path)
    files += [(p, f"slash command /{Path(p).stem}") for p in pins["written"]]
    files += [(p, f"your own /{Path(p).stem} command, left as it is (ours is not installed)") for p in pins["kept"]]
    if pins["record"]:
        files.append((Path(pins["record"]), "record of the slash commands written (uninstall removes only those)"))
    if new == data:
        return Done(path, False, None, files)
    if original is None:
        rec = _created(path, True)
        if rec:
            files.append((rec, "record that install created the settings file (uninstall may remove it)"))
    rec = _env_record(path, value)
    if rec:
        files.append((rec, f"record of the {AUTOCOMPACT_ENV} value install wrote"))
    return Done(path, True, backup, files)


def uninstall(scope, cwd=None, keep=3):
    """Remove our entries and the slash commands install wrote; returns a
    Done.  A file that install created and that now holds nothing else is
    removed (backup None)."""
    path = settings_path(scope, cwd)
    data, original = _load(path)
    new = _without_ours(data)
    # content cache: remove the /pin-* slash commands install wrote, and only those
    from engine.ccm.slash import uninstall_commands

    pins = uninstall_commands(path)
    files = [(p, f"slash command /{Path(p).stem}") for p in pins["removed"]]
    files += [(p, f"/{Path(p).stem}: changed since install wrote it, so it is yours now; left") for p in pins["kept"]]
    if pins["folder"]:
        files.append((pins["folder"], "the commands folder (it held nothing else)"))
    if pins["record"]:
        files.append((Path(pins["record"]), "record of the slash commands: their entries forgotten"))
    ours = _env_record(path)
    removed_env = False
    if ours is not None and isinstance(new.get("env"), dict) and new["env"].get(AUTOCOMPACT_ENV) == ours:
        _drop_autocompact(new)  # only the value install wrote, never the user's
        removed_env = True
    if new == data:
        return Done(path, False, None, files)
    rec = _env_record(path, None)
    what = "our hook entries" + (f" and {AUTOCOMPACT_ENV}" if removed_env else "")
    if not new and _created(path):
        target = Path(os.path.realpath(path))
        if _current(target) != original:
            raise UserError("settings file changed while it was being updated (another program wrote it); "
                            "run the command again, nothing was changed", str(path))
        try:
            target.unlink()
        except OSError as exc:
            raise UserError(f"cannot remove the settings file: {exc.strerror}", str(path)) from None
        files.insert(0, (path, f"{what}, and the file (install had created it, and it held nothing else)"))
        created_rec = _created(path, False)
        files += [(r, "install's record: this file's entry forgotten") for r in (rec, created_rec) if r]
        return Done(path, True, None, files)
    backup = _write(path, new, original, keep)
    files.insert(0, (path, what))
    if backup is not None:
        files.insert(1, (backup, "backup of the settings file as it was"))
    files += [(r, "install's record: this file's entry forgotten") for r in (rec,) if r]
    return Done(path, True, backup, files)
