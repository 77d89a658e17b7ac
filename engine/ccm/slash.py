"""The /pin-last, /pin-next, /pin-start, /pin-end slash commands: files in
.claude/commands/ that `engine install` writes and `engine uninstall`
removes.  What install wrote is recorded (path and sha256) in the state
folder; uninstall removes a file only while it still holds exactly those
bytes, so a command the user edited or wrote stays."""

import hashlib
import json
import os

from engine.base.paths import state_dir_str


def _record_path():
    return os.path.join(state_dir_str(), "installed-commands.json")


def _record():
    try:
        with open(_record_path(), "rb") as fh:
            data = json.loads(fh.read())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _save(record):
    """Write the record when it changed; its path when written, else None
    (install and uninstall list every file they wrote)."""
    from engine.base.files import private_dir

    from .store import _atomic_write

    data = json.dumps(record, sort_keys=True).encode()
    try:
        with open(_record_path(), "rb") as fh:
            if fh.read() == data:
                return None
    except OSError:
        pass
    private_dir(state_dir_str())
    _atomic_write(_record_path(), data)
    return _record_path()


def commands_dir(settings_file):
    return os.path.join(os.path.dirname(os.path.abspath(settings_file)), "commands")


def install_commands(settings_file, folder=None):
    """Write the slash-command files next to settings_file (into `folder`
    when given: the agent's YAML names it).  Returns
    {"written": [paths written now], "same": [paths already as install
    writes them], "kept": [the user's own files of those names, left alone],
    "record": the record's path when it was written, else None}."""
    try:
        return _install_commands(folder or commands_dir(settings_file))
    except OSError as exc:
        from engine.base.errors import UserError

        raise UserError(f"hooks installed, but the /pin-* commands could not be written: {exc.strerror or exc}; "
                        "run engine install again", folder or commands_dir(settings_file)) from None


def _commands(folder):
    """(path, text) of each command file install writes in `folder`."""
    from . import config

    return [(os.path.join(folder, name + ".md"), text)
            for name, text in sorted(config.load()["pins"]["slash_commands"].items())]


def recorded(folder, record=None):
    """The files in `folder` the record says install wrote (uninstall removes those)."""
    return [path for path in (_record() if record is None else record) if os.path.dirname(path) == folder]


def targets(folder, installing):
    """Every path install (or uninstall) would write or remove for `folder`:
    the folder, and its command files."""
    files = [path for path, _ in _commands(folder)] if installing else recorded(folder)
    return [folder, *files]


def _install_commands(folder):
    record = _record()
    done = {"written": [], "same": [], "kept": []}
    for path, text in _commands(folder):
        data = (text.rstrip("\n") + "\n").encode()
        digest = hashlib.sha256(data).hexdigest()
        try:
            with open(path, "rb") as fh:
                current = fh.read()
        except FileNotFoundError:
            current = None
        if current is not None and record.get(path) != hashlib.sha256(current).hexdigest():
            done["kept"].append(path)  # the user's own file of that name: left alone
            continue
        from engine.base.files import private_dir

        private_dir(folder)
        if current != data:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        record[path] = digest
        done["written" if current != data else "same"].append(path)
    done["record"] = _save(record)
    return done


def uninstall_commands(settings_file, folder=None):
    """Remove the files install wrote next to settings_file, or in `folder`
    (unchanged ones).  Returns {"removed": [paths], "kept": [files install wrote that
    the user changed since, left], "folder": the commands folder when it was
    removed (it held nothing else), "record": the record's path when it was
    written}."""
    try:
        return _uninstall_commands(folder or commands_dir(settings_file))
    except OSError as exc:
        from engine.base.errors import UserError

        raise UserError(f"cannot remove the /pin-* commands: {exc.strerror or exc}",
                        folder or commands_dir(settings_file)) from None


def _uninstall_commands(folder):
    record = _record()
    done = {"removed": [], "kept": [], "folder": None}
    for path in recorded(folder, record):
        digest = record[path]
        try:
            with open(path, "rb") as fh:
                same = hashlib.sha256(fh.read()).hexdigest() == digest
        except FileNotFoundError:
            same = None
        if same:
            os.unlink(path)
            done["removed"].append(path)
        elif same is False:
            done["kept"].append(path)
        del record[path]
    done["record"] = _save(record)
    try:
        os.rmdir(folder)  # only when empty: it held nothing but ours
        done["folder"] = folder
    except OSError:
        pass
    return done
