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
    from .store import _atomic_write

    from engine.base.files import private_dir

    private_dir(state_dir_str())
    _atomic_write(_record_path(), json.dumps(record, sort_keys=True).encode())


def commands_dir(settings_file):
    return os.path.join(os.path.dirname(os.path.abspath(settings_file)), "commands")


def install_commands(settings_file):
    """Write the slash-command files next to settings_file; the paths written."""
    try:
        return _install_commands(settings_file)
    except OSError as exc:
        from engine.base.errors import UserError

        raise UserError(f"hooks installed, but the /pin-* commands could not be written: {exc.strerror or exc}; "
                        "run engine install again", commands_dir(settings_file)) from None


def _install_commands(settings_file):
    from . import config

    settings = config.load()
    folder = commands_dir(settings_file)
    record = _record()
    written = []
    for name, text in sorted(settings["pins"]["slash_commands"].items()):
        path = os.path.join(folder, name + ".md")
        data = (text.rstrip("\n") + "\n").encode()
        digest = hashlib.sha256(data).hexdigest()
        try:
            with open(path, "rb") as fh:
                current = fh.read()
        except FileNotFoundError:
            current = None
        if current is not None and record.get(path) != hashlib.sha256(current).hexdigest():
            continue  # the user's own file of that name: left alone
        from engine.base.files import private_dir

        private_dir(folder)
        if current != data:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        record[path] = digest
        written.append(path)
    _save(record)
    return written


def uninstall_commands(settings_file):
    """Remove the files install wrote next to settings_file (unchanged ones); the paths removed."""
    try:
        return _uninstall_commands(settings_file)
    except OSError as exc:
        from engine.base.errors import UserError

        raise UserError(f"cannot remove the /pin-* commands: {exc.strerror or exc}", commands_dir(settings_file)) from None


def _uninstall_commands(settings_file):
    folder = commands_dir(settings_file)
    record = _record()
    removed = []
    for path, digest in list(record.items()):
        if os.path.dirname(path) != folder:
            continue
        try:
            with open(path, "rb") as fh:
                same = hashlib.sha256(fh.read()).hexdigest() == digest
        except FileNotFoundError:
            same = False
        if same:
            os.unlink(path)
            removed.append(path)
        del record[path]
    _save(record)
    try:
        os.rmdir(folder)  # only when empty: it held nothing but ours
    except OSError:
        pass
    return removed
