"""The engine's own files: private folders and files, atomic replacement,
and one lock.  Every write of the engine goes through these, so every folder
it creates is 0700 and every file 0600 whatever the umask, a reader sees a
file's old content or its new one and never half of one, and processes that
change one file do it one at a time.  os only: the hook hot path imports it.
"""

import os


def open_private(path, flags):
    """os.open with 0600, tightening a file an older version left wider."""
    fd = os.open(path, flags | os.O_CLOEXEC, 0o600)
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o077 and st.st_uid == os.getuid():
            os.fchmod(fd, 0o600)
    except OSError:
        pass
    return fd


def rotate_past(path, fd, max_bytes):
    """Move the file `fd` appends to (at `path`) to `path`.1, replacing the
    one before, once it is past `max_bytes` (None or 0: never): a log or a
    record of lines never grows without a bound.  Only if the path still
    names that file: a parallel writer may have moved it already."""
    try:
        if max_bytes and os.fstat(fd).st_size > max_bytes and os.stat(path).st_ino == os.fstat(fd).st_ino:
            os.replace(path, path + ".1")
    except OSError:
        pass


def open_append(path):
    """A descriptor appending to the engine's own file `path` (a log, a
    store of lines; created private when missing): a regular file only,
    opened without waiting, so a FIFO put there (no reader to wait for)
    never holds the process.  OSError for anything else."""
    import stat

    fd = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK)
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    if not regular:
        os.close(fd)
        raise OSError(f"{path} is not a regular file")
    return fd


def private_dir(path):
    """Create a folder for the engine's own files (state, cache, content
    cache): it and every folder created on the way are 0700, whatever the
    umask (os.makedirs would give the ones on the way the umask's mode)."""
    if os.path.isdir(path):
        return
    parent = os.path.dirname(path)
    if parent and parent != path:
        private_dir(parent)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass


def folder_is_private(path, create=False, tighten=True):
    """True when `path` is a real folder of this user that nobody else can
    write to (what the engine reads back from there, a pickle or a copy of
    its settings, nobody else put there).  A folder of ours that others can
    only read is closed (0700) first (with `tighten`; without, it is refused
    and left as it is); a link, another owner's folder or one that others
    could have written to is refused.  With `create`, a missing folder is
    made, 0700 all the way."""
    import stat

    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            return False
        try:
            private_dir(path)
            st = os.lstat(path)
        except OSError:
            return False
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        return False
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:  # others could have put a pickle here
        return False
    if mode & 0o077:
        if not tighten:
            return False
        try:
            os.chmod(path, 0o700)
        except OSError:
            return False
    return True


def replace_atomic(path, data, mode=0o600, sync=False, prefix=".tmp-"):
    """Write bytes to a temporary file beside `path` and rename it over
    `path`: a reader sees the old content or the new, never half.  OSError
    when that fails (nothing changed, no temporary left).  The temporary
    name is the process id and a clock reading, made with O_EXCL (no
    `tempfile`: the hook's turn counter writes through here, and tempfile
    imports random and hashlib)."""
    import time

    folder = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(folder, f"{prefix}{os.getpid()}-{time.monotonic_ns()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.chmod(tmp, mode)  # whatever the umask
        os.replace(tmp, path)
        tmp = None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class Locked:
    """A lock on a file, for processes that change one thing one at a time:
    `with Locked(path):` creates the lock file private (0600 in a 0700
    folder) and waits for it.  `existing=True` locks a file that is there
    already (read-only, never created: a transcript being purged).  Shared
    for readers with `shared=True`; with `wait=False`, entering raises
    BlockingIOError while another process holds it.  Opened once, `acquire`
    may be tried again (polling within a deadline)."""

    def __init__(self, path, shared=False, wait=True, existing=False):
        self.path, self.shared, self.wait, self.existing = path, shared, wait, existing
        self.fd = None

    def open(self):
        if self.existing:
            self.fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
        else:
            private_dir(os.path.dirname(self.path) or ".")
            self.fd = open_private(self.path, os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW)
        return self

    def acquire(self, block=True):
        """True once held; False when `block` is off and another holds it."""
        import fcntl

        mode = fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX
        try:
            fcntl.flock(self.fd, mode if block else mode | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def close(self):
        if self.fd is not None:
            os.close(self.fd)  # closing the file releases the lock
            self.fd = None

    def __enter__(self):
        self.open()
        try:
            if not self.acquire(self.wait):
                raise BlockingIOError(f"{self.path} is locked by another process")
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()


def open_regular(path):
    """A binary reader of `path` when it is a regular file.  Opened without
    waiting: a FIFO has no writer to wait for, and a device or a folder is
    not read.  The one way the engine opens a file someone else may have put
    there (a project's, a transcript).  OSError when it cannot be opened
    (FileNotFoundError: it is not there); ValueError when it is no regular
    file."""
    import stat

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise
    if not regular:
        os.close(fd)
        raise ValueError("not a regular file")
    return os.fdopen(fd, "rb")


def read_regular(path, cap):
    """The bytes of `path` when it is a regular file of at most `cap` bytes,
    read no further than cap + 1 (a huge file costs nothing).  ValueError
    saying why for anything else; OSError as open_regular."""
    with open_regular(path) as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise ValueError(f"larger than {cap} bytes")
    return data
