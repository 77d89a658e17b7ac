"""The per-user secret the content cache's keys are made with.

32 random bytes in `content-cache.key` in the user's state folder
($ENGINE_STATE_DIR, else $XDG_STATE_HOME/rules-engine), created once, 0600
in a 0700 folder; never in a project, never in the cache folder the blobs
sit in.  Two processes that create it at once agree on one: each writes its
own temporary file and links it into place, and the loser reads the
winner's.  A file that is a link, not this user's, or not 32 bytes is
refused (UserError): the keys it would make would not be this user's.
Its id (a keyed hash of a fixed text, never the secret) is kept with each
entry, so an entry stored under another secret is told apart from a
damaged one.
"""

import os

from engine.base.errors import UserError

NAME = "content-cache.key"
SIZE = 32
_LOADED = {}


def path():
    from engine.base.paths import state_dir_str

    return os.path.join(os.path.abspath(os.path.expanduser(state_dir_str())), NAME)


def secret(create=True):
    """The secret (bytes), created on first use; with `create` off and none
    made yet, None (a dry run writes nothing, not even this)."""
    where = path()
    if where not in _LOADED:
        if not os.path.lexists(where) and not create:
            return None
        _LOADED[where] = _read(where) if os.path.lexists(where) else _create(where)
    return _LOADED[where]


def secret_id(key):
    """What an entry records of the secret its key was made with."""
    import hashlib
    import hmac

    return hmac.new(key, b"rules-engine content cache secret id", hashlib.sha256).hexdigest()[:16]


def _create(where):
    from engine.base.files import private_dir

    private_dir(os.path.dirname(where))
    tmp = f"{where}.tmp-{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, os.urandom(SIZE))
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, where)  # never replaces one that another process made meanwhile
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return _read(where)


def _read(where):
    import stat

    try:
        fd = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise UserError(f"the content cache's secret cannot be read ({exc.strerror}); it must be a file of "
                        "yours, not a link: remove it to have a new one made (entries stored under it become "
                        "unreadable)", where) from None
    try:
        st = os.fstat(fd)
        data = os.read(fd, SIZE + 1)
        if st.st_uid != os.getuid() or not stat.S_ISREG(st.st_mode) or len(data) != SIZE:
            raise UserError(f"not the content cache's secret (a {SIZE}-byte file of yours expected); remove it "
                            "to have a new one made (entries stored under it become unreadable)", where)
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return data
