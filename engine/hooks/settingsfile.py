"""An agent's JSON hook settings file, read and written the way `engine
install` must: a file it cannot read as the agent does (a folder, a FIFO, a
link loop, hooks of the wrong shape, a number JSON cannot hold) is a
one-line error and nothing is changed; a rewrite edits the user's file
only where its data changes (their layout and key order kept), goes
through a link to the real file, is atomic, keeps a bounded number of
backups, and is refused when another program wrote the file meanwhile.
Which files and folders install created is recorded, so uninstall may
remove them once they hold nothing else."""

import errno
import glob
import json
import os
import stat
import tempfile
import time
from pathlib import Path

from engine.base import strictjson
from engine.base.errors import UserError
from engine.base.files import private_dir, replace_atomic


def load(path, container=("hooks",), rewrite=True, comments=False):
    """(settings data, the file's bytes or None when there is no file).
    Anything but a readable JSON object of the shape the agent reads is a
    one-line error, before anything is changed; so is, for a file to be
    rewritten, an object naming a key twice (the agent reads the last, and
    a rewrite would drop the other's bytes), or a file nobody may write.
    With `comments`, the agent reads `//` and `/* */` comments in it."""
    raw = _read(path)
    if raw is None:
        return {}, None
    where = str(path)
    if rewrite:
        _refuse_read_only(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError("settings file is not UTF-8; fix it before installing hooks (nothing was changed)", where,
                        *_byte_place(raw, exc.start)) from None
    if comments:
        from engine.base.jsonc import blank_comments

        text = blank_comments(text)  # same length: an error's place is the file's
    if not text.strip():
        return {}, raw
    try:
        data = strictjson.loads(text, unique=rewrite)
    except strictjson.DuplicateKey as exc:
        raise UserError(f"{exc.msg}: the agent reads only the last, and a rewrite would drop the other; remove "
                        "one, nothing was changed", where, exc.lineno, exc.colno) from None
    except ValueError as exc:
        _refuse_a_comment(text, where, comments)
        line, col = getattr(exc, "lineno", None), getattr(exc, "colno", None)
        if line is None:  # NaN, Infinity, 1e400: the parse hook that refused it knows no place
            line, col = strictjson.refused_place(text)
        msg = getattr(exc, "msg", str(exc))
        raise UserError(f"settings file is not valid JSON ({msg}); fix it, nothing was changed", where, line, col) from None
    except RecursionError:
        raise UserError("settings file is nested too deeply to read; nothing was changed", where) from None
    if not isinstance(data, dict):
        raise UserError("settings file must hold a JSON object; nothing was changed", where, *_place(text, ()))
    check_shape(data, where, container, text)
    return data, raw


def _byte_place(raw, at):
    """(line, column) of byte `at` of the file, the column in characters."""
    line_start = raw.rfind(b"\n", 0, at) + 1
    return raw.count(b"\n", 0, at) + 1, len(raw[line_start:at].decode("utf-8", "replace")) + 1


def _place(text, keys):
    """(line, column) of the value down `keys` in `text` (its comments
    blanked; of a name given twice, the last, which the agent reads)."""
    from .jsonsplice import parse

    try:
        node = parse(text)
    except RecursionError:  # nested past the parser's depth: the name alone
        return ()
    for key in keys:
        found = [value for name, _start, value in (node.items or ()) if name == key]
        if not found:
            break
        node = found[-1]
    return text.count("\n", 0, node.start) + 1, node.start - text.rfind("\n", 0, node.start)


def _refuse_a_comment(text, where, comments):
    """A file that would be JSON without its comments, for an agent that
    reads none (it runs no hook of such a file): said at the first one."""
    from engine.base.jsonc import blank_comments, comment_spans

    spans = [] if comments else comment_spans(text)
    if not spans:
        return
    try:
        strictjson.loads(blank_comments(text))
    except (ValueError, RecursionError):
        return
    line = text.count("\n", 0, spans[0][0]) + 1
    col = spans[0][0] - text.rfind("\n", 0, spans[0][0])
    raise UserError("settings file holds a comment, which this agent does not read (it runs no hook of such a "
                    "file); take the comments out, nothing was changed", where, line, col)


def _read(path):
    """The file's bytes, None when there is none; a one-line error for
    anything that is not a regular file."""
    where = str(path)
    try:
        st = os.stat(path)  # follows a link; a loop is ELOOP
    except FileNotFoundError:
        return None  # no file yet (or a link to one that does not exist yet)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UserError("settings file is a symbolic link loop; fix the link, nothing was changed", where) from None
        raise UserError(f"cannot read settings file ({exc.strerror}); nothing was changed", where) from None
    if stat.S_ISDIR(st.st_mode):
        raise UserError("this is a folder, not a settings file; move it away, nothing was changed", where)
    if not stat.S_ISREG(st.st_mode):
        raise UserError("settings file is not a regular file (a FIFO or a device?); nothing was changed", where)
    from engine.base.files import open_regular
    from engine.core.settings import settings_file_bytes

    cap = settings_file_bytes()
    if st.st_size > cap:
        raise UserError(_too_large(st.st_size, cap), where)
    try:
        with open_regular(path) as fh:
            data = fh.read(cap + 1)
    except ValueError:  # swapped since the check
        raise UserError("settings file is not a regular file; nothing was changed", where) from None
    except OSError as exc:
        raise UserError(f"cannot read settings file ({exc.strerror}); nothing was changed", where) from None
    if len(data) > cap:  # grown since the check
        raise UserError(_too_large(len(data), cap), where)
    return data


def _too_large(size, cap):
    """A project's settings.json of 2 GB (zeros: a few MB in git) took 4 GB
    of memory to read whole; no agent's settings hold more than a few KB."""
    return (f"settings file is larger than {cap:,} bytes ({size:,}), which no agent's settings are "
            "(install.max_settings_bytes in pipelines/settings/engine.yaml); nothing was changed")


def _refuse_read_only(path):
    """A settings file with no write permission is one the user locked:
    install would replace it all the same (a rename needs only the folder),
    so it refuses instead.  A link to a file that stays read-only whatever
    the user does (a store: Nix's, as home-manager links ~/.claude/settings.json
    into it) gets advice that can work there; chmod cannot."""
    mode = os.stat(path).st_mode
    store = _unchangeable_target(path)
    if store:
        raise UserError(f"settings file is a link to {os.path.realpath(path)}, which is read-only where it is "
                        f"({store}): chmod cannot change it there; change the file the link is made from (in the "
                        "configuration that made it, such as home-manager's, then apply it), or install into the "
                        "project's settings with --project; nothing was changed", str(path))
    if not mode & 0o222:
        raise UserError(f"settings file is read-only (mode {stat.S_IMODE(mode):04o}), as if locked; make it "
                        "writable (chmod u+w) to change it, nothing was changed", str(path))


def _unchangeable_target(path):
    """Why the file a link leads to can be changed by no one here (its file
    system mounted read-only, or, with no write permission, owned by another
    user, so chmod is refused), or None: not a link, or one the user may change."""
    real = os.path.realpath(path)
    if real == os.path.abspath(path):
        return None
    try:
        if os.statvfs(real).f_flag & os.ST_RDONLY:
            return "its file system is mounted read-only"
        st = os.stat(real)
    except OSError:
        return None
    if not st.st_mode & 0o222 and os.geteuid() not in (0, st.st_uid):
        return "owned by another user, with no write permission"
    return None


def check_shape(data, where, container=("hooks",), text=None):
    """The shape the agent reads: objects down the container's keys, then
    {"Event": [groups]}; install and uninstall refuse the same files, at
    the wrong value's place in `text` (the file's, comments blanked)."""
    node, name = data, ""
    for depth, key in enumerate(container):
        if not isinstance(node, dict) or key not in node:
            return
        node, name = node[key], f'{name}."{key}"' if name else f'"{key}"'
        if not isinstance(node, dict):
            raise UserError(f"{name} must be an object of event names (it is {kind(node)}); fix it, nothing was changed",
                            where, *_place_in(text, container[:depth + 1]))
    for event, groups in node.items():
        if not isinstance(groups, list):
            raise UserError(f'{name}."{event}" must be a list of hook groups (it is {kind(groups)}); fix it, '
                            "nothing was changed", where, *_place_in(text, (*container, event)))


def _place_in(text, keys):
    return _place(text, keys) if text is not None else ()


def kind(value):
    return {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(
        type(value), "a number")


def _layout(path):
    """(indent, line end, trailing line end) of the user's file, so a rewrite
    keeps its look: the first indented line's indent (spaces or a tab), None
    for a file on one line; its line end, "\\r\\n" when its first line
    ends so (a file written on Windows stays so, and a project's diff shows
    only what install added); 2 spaces, "\\n" and a trailing one for a new file."""
    try:
        text = path.read_bytes().decode("utf-8")  # its line ends as they are
    except (OSError, UnicodeDecodeError):
        return 2, "\n", True
    if not text.strip():
        return 2, "\n", True
    first = text.find("\n")
    eol = "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            indent = line[: len(line) - len(stripped)]
            return (indent if "\t" in indent else len(indent)), eol, text.endswith("\n")
    return None, eol, text.endswith("\n")


def _backup(path, keep):
    """Copy the file to <name>.bak-<time>, then keep only the newest `keep`
    backups (0: no backup)."""
    if keep <= 0:
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = path.with_name(f"{path.name}.bak-{stamp}")
    n = 1
    while os.path.lexists(backup):  # a link of that name, dangling too, is not written through
        backup = path.with_name(f"{path.name}.bak-{stamp}-{n:03d}")
        n += 1
    data = path.read_bytes()
    fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(backup, path.stat().st_mode & 0o7777)
    old = sorted(backups(path), key=lambda p: (p.lstat().st_mtime_ns, p.name))  # a dangling link is no error
    for extra in old[: max(0, len(old) - keep)]:
        try:
            extra.unlink()
        except OSError:
            pass
    return backup


def backups(path):
    """The backups of the settings file: beside the file a link leads to,
    where write() puts them (a dotfiles repository), not beside the link."""
    real = Path(os.path.realpath(path))
    return list(real.parent.glob(f"{glob.escape(real.name)}.bak-*"))


def encode(data, indent, newline, eol="\n"):
    """The file's UTF-8 bytes; a lone surrogate (JSON.parse takes "\\ud800")
    stays its \\u escape, since as it is it has no UTF-8."""
    from engine.core.transcript import json_utf8

    text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)  # a "\\n" here is a line end
    return json_utf8((text + ("\n" if newline else "")).replace("\n", eol))


def write(path, data, original, keep=3, exact=None, comments=False):
    """Replace the settings file atomically, a bounded number of backups of
    it first (newest `keep`): the user's file is edited only where its data
    changes (jsonsplice.py), so its layout, key order and, with `comments`,
    its comments stay as they were (or `exact` bytes are written, which hold
    the same data); a new file is written at 2 spaces.  Just before the rename the file is
    read again: if another program changed it since it was read, nothing is
    written and the user runs the command again.  Returns (backup or None,
    the folders it created)."""
    where = str(path)
    real = Path(os.path.realpath(path))  # write through a link (dotfile managers keep the real file elsewhere)
    tmp = backup = None
    indent, eol, newline = _layout(real) if original is not None else (2, "\n", True)
    made = _missing_folders(real.parent)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        mode = (real.stat().st_mode & 0o7777) if original is not None else 0o600
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=".settings-")
        with os.fdopen(fd, "wb") as fh:
            if exact is None and original is not None:
                exact = _spliced(original, data, indent, eol, where, comments)
            fh.write(exact if exact is not None else encode(data, indent, newline, eol))
            fh.flush()
            os.fsync(fh.fileno())  # on disk before the rename: a crash after it finds the new file whole, not empty
        os.chmod(tmp, mode)
        if current(real) != original:
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
    return backup, made


def _spliced(original, data, indent, eol, where, comments=False):
    """The file's bytes edited only where its data changed, reading as
    `data` the way the agent reads it (with its comments when it reads
    them).  None when that cannot be done (a file of blanks only): a plain
    rewrite at its indent then; an error for a file whose comments it would lose."""
    from engine.base.jsonc import blank_comments, has_comments
    from engine.core.transcript import json_utf8

    from . import jsonsplice

    text = original.decode("utf-8")
    if not text.strip():
        return None

    def read(t):
        return strictjson.loads(blank_comments(t) if comments else t)

    try:
        out = jsonsplice.splice(text, read(text), data, indent, eol)
        same = read(out) == data
    except (ValueError, RecursionError, IndexError):
        same = False
    if same:
        return json_utf8(out)
    if comments and has_comments(text):
        raise UserError("cannot write the change and keep this settings file's comments; take them out, or "
                        "make the change by hand (nothing was changed)", where)
    return None


def _missing_folders(folder):
    """The folders mkdir(parents=True) would create for `folder`, deepest first."""
    out = []
    while not folder.exists() and folder.parent != folder:
        out.append(folder)
        folder = folder.parent
    return out


def current(path):
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None


def save_record(record, data, prefix):
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


def records_locked():
    """Held by an install or uninstall from its first read to its last
    write: its records (which settings file and folders it created, the
    variable and slash commands it wrote) are read, changed and written
    whole, and two at once would lose one's change (uninstall would then
    leave `{}` where install had created the file).  The lock is on the
    state folder itself, so it leaves no file behind; without a state folder
    there are no records to keep, and nothing to lock."""
    from contextlib import nullcontext

    from engine.base.files import Locked

    folder = str(record_path().parent)
    try:
        private_dir(folder)
    except OSError:
        return nullcontext()
    return Locked(folder, existing=True)


def record_path(name="installed-settings.json"):
    from engine.base.paths import state_dir_str

    return Path(state_dir_str()) / name


def _key(path):
    path = Path(path)
    return str(path.resolve() if path.exists() else path.absolute())


def _created_set():
    try:
        paths = json.loads(record_path().read_text(encoding="utf-8"))
        return set(p for p in paths if isinstance(p, str))
    except (OSError, ValueError, TypeError):
        return set()


def created(path, add=None, folders=()):
    """Files (and folders, kept with a trailing separator) that `engine
    install` created, so uninstall may remove them once they hold nothing
    else; add=True/False records or forgets `path` and `folders` (and returns
    the record's path when it was written)."""
    paths = _created_set()
    keys = [_key(path)] + [_key(f).rstrip(os.sep) + os.sep for f in folders]
    if add is None:
        return keys[0] in paths
    for key in keys:
        (paths.add if add else paths.discard)(key)
    # the record is a courtesy: without it uninstall leaves `{}`
    return save_record(record_path(), json.dumps(sorted(paths)).encode("utf-8"), ".installed-")


def created_folders(path):
    """The recorded folders install created on the way to `path`, deepest first."""
    paths = _created_set()
    out, folder = [], Path(_key(path)).parent
    while folder.parent != folder and str(folder).rstrip(os.sep) + os.sep in paths:
        out.append(folder)
        folder = folder.parent
    return out


def remove_empty(folders):
    """Remove the folders that hold nothing (deepest first); the ones removed."""
    gone = []
    for folder in folders:
        try:
            os.rmdir(folder)
        except OSError:
            break  # not empty (the user's files), or not ours to remove: the ones above stay too
        gone.append(folder)
    return gone
