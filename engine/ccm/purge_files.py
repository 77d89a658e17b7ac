"""The files of one purge: its lock, its temporary files, its backup.

The rule it keeps: the transcript is never left half written and nothing
is left behind.  A purge holds an exclusive lock on the transcript (one
purge at a time per file; the agent itself takes none); every file it
writes goes under a temporary name `.purge-<transcript>.<what>-*` next to
the transcript, is flushed to disk and only then renamed to its real name,
so a killed run leaves temporary files only, which the next run removes
(it holds the lock: they cannot be another run's).  A write that fails
names the file that could not be written.  Backups of a transcript are
bounded: the newest `purge.backups_kept` stay.
"""

import contextlib
import os
import time

from engine.base.errors import UserError

PREFIX = ".purge-"


@contextlib.contextmanager
def locked(path, shown):
    from engine.base.files import Locked

    try:
        lock = Locked(path, wait=False, existing=True).__enter__()
    except BlockingIOError:
        raise UserError("another engine purge is working on this transcript; wait for it to end", shown) from None
    try:
        yield
    finally:
        lock.close()


def _own_prefix(path):
    return PREFIX + os.path.basename(path) + "."


def temp(path, what):
    import tempfile

    with writing(os.path.dirname(path), path):
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=f"{_own_prefix(path)}{what}-")
        os.close(fd)
    return tmp


def clean_leftovers(path, older_than_seconds, now=None):
    """Remove what a killed purge of this transcript left (ours: we hold its
    lock), and nameless leftovers of older versions (`.purge-XXXXXXXX`) past
    the busy period."""
    folder = os.path.dirname(path)
    now = time.time() if now is None else now
    own = _own_prefix(path)
    try:
        names = os.listdir(folder)
    except OSError:
        return
    transcripts = [n for n in names if n.endswith(".jsonl")]
    for n in names:
        if not n.startswith(PREFIX):
            continue
        full = os.path.join(folder, n)
        if n.startswith(own):
            unlink(full)
        elif not any(n.startswith(PREFIX + t + ".") for t in transcripts):
            try:
                if now - os.lstat(full).st_mtime > older_than_seconds:
                    unlink(full)
            except OSError:
                pass


@contextlib.contextmanager
def writing(target, shown):
    """OSError while writing `target` -> one UserError naming the file."""
    try:
        yield
    except OSError as exc:
        name = exc.filename if exc.filename else target
        raise UserError(f"cannot write {name} ({exc.strerror or exc}); the transcript is unchanged, nothing "
                        "was replaced", shown) from None


def backup(path, cfg):
    """A complete copy of the transcript under its backup name; the name
    appears only once the copy is whole and on disk.  Never overwrites a
    backup (two purges in one second)."""
    from engine.core.transcript import copy_range

    tmp = temp(path, "backup")
    try:
        with writing(tmp, path):
            with open(path, "rb") as src, open(tmp, "wb") as dst:
                copy_range(src, dst, 0, os.fstat(src.fileno()).st_size)  # in pieces; a hole stays a hole
                dst.flush()
                os.fsync(dst.fileno())
            os.chmod(tmp, 0o600)
        stem = path + time.strftime(cfg["backup_suffix"])
        name, n = stem, 0
        with writing(stem, path):
            while True:
                try:
                    os.link(tmp, name)  # fails if the name exists: no backup is ever overwritten
                    break
                except FileExistsError:
                    n += 1
                    name = f"{stem}.{n}"
                except OSError:  # a file system without hard links
                    if os.path.lexists(name):
                        n += 1
                        name = f"{stem}.{n}"
                        continue
                    os.replace(tmp, name)
                    break
        sync_folder(path)
    finally:
        unlink(tmp)
    return name


def backups_of(path, cfg):
    """This transcript's backups, oldest first."""
    fixed = cfg["backup_suffix"].split("%", 1)[0]
    if not fixed:
        return []  # a suffix starting with a date field: backups cannot be told from other files
    folder, base = os.path.split(path)
    start = base + fixed
    out = []
    try:
        for n in os.listdir(folder):
            if n.startswith(start) and n != base:
                full = os.path.join(folder, n)
                try:
                    out.append((os.lstat(full).st_mtime, n, full))
                except OSError:
                    pass
    except OSError:
        return []
    return [full for _m, _n, full in sorted(out)]


def prune_backups(path, cfg):
    kept = cfg["backups_kept"]
    old = backups_of(path, cfg)
    for full in old[: max(0, len(old) - kept)]:
        unlink(full)


def sync_folder(path):
    try:
        fd = os.open(os.path.dirname(path), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def unlink(path):
    try:
        os.unlink(path)
    except OSError:
        pass
