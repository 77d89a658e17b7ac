"""Facts a hook logs once per session where the session's state cannot keep
that it said them (a project profile left out before the profile that
holds the state is known; a folder standing in place of the state itself):
a marker file per (session, fact) in a folder of the state folder, made
with O_EXCL so parallel hooks say it once between them, removed once older
than the state lives.  A marker that cannot be made says the fact again:
better twice than never."""

import os


def first_time(folder_name, session, fact, ttl_seconds):
    """True the first time `fact` (a str) is noted for `session` (an id the
    agent chose: only its digest names a file) in `folder_name` of the
    state folder.  `ttl_seconds` None: no marker is pruned."""
    from engine.base.digest import sha256
    from engine.base.files import private_dir
    from engine.base.paths import state_dir_str

    folder = os.path.join(state_dir_str(), folder_name)
    try:
        private_dir(folder)
        marker = os.path.join(folder, sha256(f"{session}\0{fact}".encode("utf-8", "surrogatepass")).hexdigest()[:32])
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except FileExistsError:
        return False  # said already in this session
    except OSError:
        pass
    if ttl_seconds is not None:
        _prune(folder, ttl_seconds)
    return True


def _prune(folder, ttl_seconds):
    """Markers older than the state's TTL go (they only say a session was told)."""
    import time

    try:
        now = time.time()
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if now - os.stat(path).st_mtime > ttl_seconds:
                os.unlink(path)
    except OSError:
        pass
