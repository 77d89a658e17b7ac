"""`engine install` / `engine uninstall`: the hook entries in the agent's
settings.json.  Merged with what is there, a backup written before any change,
idempotent, and removable exactly: our entries are the ones whose command
runs `-m engine.cli hook`."""

import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

from ..errors import UserError
from ..refs import is_path

MARKERS = ("-m engine.cli hook", "/engine hook")
TOOL_EVENTS = {"PreToolUse", "PostToolUse", "PostToolUseFailure"}


def settings_path(scope, cwd=None):
    if scope == "user":
        return Path(os.path.expanduser("~")) / ".claude" / "settings.json"
    return Path(cwd or os.getcwd()) / ".claude" / "settings.json"


def hook_command(profile_ref=None, cwd=None):
    """A command that works without any virtual environment being active: the
    `engine` script installed beside this interpreter (its first line names
    the interpreter), else the interpreter itself with -m, which costs about
    10 ms more per event (runpy)."""
    script = os.path.join(os.path.dirname(sys.executable), "engine")
    if os.path.isfile(script) and os.access(script, os.X_OK) and _runs_this_python(script):
        parts = [script, "hook"]
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
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError("settings file is not UTF-8; fix it before installing hooks (nothing was changed)", str(path)) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        line = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        raise UserError(f"settings file is not valid JSON ({exc.msg}); fix it, nothing was changed", str(path), line, col) from None
    if not isinstance(data, dict):
        raise UserError("settings file must hold a JSON object; nothing was changed", str(path))
    return data


def _is_ours(hook):
    cmd = str(hook.get("command", "")) if isinstance(hook, dict) else ""
    return any(m in cmd for m in MARKERS)


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
                if not inner and any(_is_ours(h) for h in g["hooks"]):
                    continue  # the group held only our hook
                g = dict(g, hooks=inner)
            kept.append(g)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not hooks:
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


def _created_record():
    from ..paths import state_dir_str

    return Path(state_dir_str()) / "installed-settings.json"


def _created(path, add=None):
    """Settings files that `engine install` created (so uninstall may remove
    them once they hold nothing else); add=True/False records or forgets one."""
    record = _created_record()
    try:
        paths = set(json.loads(record.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        paths = set()
    key = str(path.resolve() if path.exists() else path.absolute())
    if add is None:
        return key in paths
    (paths.add if add else paths.discard)(key)
    try:
        record.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=record.parent, prefix=".installed-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(sorted(paths), fh)
        os.replace(tmp, record)
    except OSError:
        pass  # the record is a courtesy: without it uninstall leaves `{}`
    return key in paths


def _write(path, data, original_exists, keep=3):
    if path.is_symlink():
        path = path.resolve()  # write through the link (dotfile managers keep the real file elsewhere)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = (path.stat().st_mode & 0o7777) if path.exists() else 0o644
    indent, newline = _layout(path) if path.exists() else (2, True)
    backup = _backup(path, keep) if original_exists else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".settings-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=indent, ensure_ascii=False)
            if newline:
                fh.write("\n")
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UserError(f"cannot write settings: {exc.strerror}; nothing was changed", str(path)) from None
    return backup


def install(scope, events, profile_ref=None, timeout=10, cwd=None, keep=3):
    """Add our entries for `events`; returns (path, changed, backup)."""
    path = settings_path(scope, cwd)
    existed = path.exists()
    data = _load(path)
    new = _without_ours(data)
    cmd = hook_command(profile_ref, cwd)
    hooks = new.setdefault("hooks", {})
    for event in events:
        entry = {"hooks": [{"type": "command", "command": cmd, "timeout": timeout}]}
        if event in TOOL_EVENTS:
            entry = {"matcher": "*", **entry}
        hooks.setdefault(event, []).append(entry)
    if new == data:
        return path, False, None
    backup = _write(path, new, existed, keep)
    if not existed:
        _created(path, True)
    return path, True, backup


def uninstall(scope, cwd=None, keep=3):
    """Remove our entries; returns (path, changed, backup).  A file that
    install created and that now holds nothing else is removed (backup None)."""
    path = settings_path(scope, cwd)
    data = _load(path)
    new = _without_ours(data)
    if new == data:
        return path, False, None
    if not new and _created(path):
        target = path.resolve() if path.is_symlink() else path
        try:
            target.unlink()
        except OSError as exc:
            raise UserError(f"cannot remove the settings file: {exc.strerror}", str(path)) from None
        _created(path, False)
        return path, True, None
    return path, True, _write(path, new, True, keep)
