"""Compiling a profile in a box: a forked child process whose address space
may grow only `compile.memory_mb` beyond its parent's (RLIMIT_AS) and which
ends after `compile.timeout_ms` (pipelines/settings/engine.yaml).

A hostile pattern such as (?:(?:(?:q{1000}){1000}){1000}) asks the regex
module for gigabytes: under the cap the allocation fails (MemoryError) and
the profile fails with one error, never an OOM.  The cap is set on a child,
not on the process that asked, because the parent keeps running (a hook
goes on to answer its event; a command to its work) with its full address
space, and because a child that outlives a hook's deadline still finishes
the compile and fills the cache for the next event.  The child's standard
streams are /dev/null: the agent waiting for the hook's output never waits
for it.  The result comes back pickled through a pipe, so a cache folder
that cannot be written does not lose it.

A message pipeline compiles in a box too, and `engine validate` checks
each of the user's own files in one, saying before each pattern where it
is (note): a pattern whose check ends the box (past its memory or its
time) is then named at its FILE:LINE:COL, not only its file.
"""

import os

from engine.base.errors import UserError


def _vm_bytes():
    """The process's current address space (Linux); 0 when unknown."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _errors(exc):
    from engine.base.errors import ValidationErrors

    errors = exc.errors if isinstance(exc, ValidationErrors) else [exc]
    return [(e.message, None if e.file is None else str(e.file), e.line, e.col) for e in errors]


def _rebuild(errors):
    from engine.base.errors import ValidationErrors

    out = [UserError(m, f, line, col) for m, f, line, col in errors]
    return out[0] if len(out) == 1 else ValidationErrors(out)


# The write end of the box's pipe, in the box only (note()).
_NOTES = {"fd": None}


def note(where):
    """Say (file, line, col) of what the box starts on now, None when it is
    done with it; nothing outside a box."""
    fd = _NOTES["fd"]
    if fd is not None:
        import pickle

        os.write(fd, pickle.dumps(("note", where)))  # one small write: whole, or not at all


def _child(fn, memory_mb, timeout_ms, w):
    import _signal
    import pickle
    import resource

    _NOTES["fd"] = w
    # A compile makes garbage with cycles (parsers' trees, validators): under
    # the box's memory cap it is collected, whatever the hook turned off.
    import gc

    gc.enable()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    _signal.signal(_signal.SIGALRM, _signal.SIG_DFL)  # the default action ends the child
    _signal.setitimer(_signal.ITIMER_REAL, timeout_ms / 1000.0)
    vm = _vm_bytes()
    if vm:
        cap = vm + (memory_mb << 20)
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            cap = min(cap, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        payload = pickle.dumps(("ok", fn()), protocol=pickle.HIGHEST_PROTOCOL)
    except MemoryError:
        payload = pickle.dumps(("memory", None))
    except UserError as exc:
        payload = pickle.dumps(("user", _errors(exc)))
    except BaseException as exc:  # noqa: BLE001 - said by the parent
        payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
    with os.fdopen(w, "wb") as fh:
        fh.write(payload)


def run(fn, what, doing="compiling this profile"):
    """fn() computed in the box; its UserError is raised here as it was
    raised there, any other exception as a UserError at `what` (or the
    place last noted) saying it failed.  A box past the memory cap or the
    time limit raises a UserError saying what it was `doing` at `what` (a
    file's path), or at the place it last noted."""
    from .settings import compile_limits

    limits = compile_limits()
    if not hasattr(os, "fork"):  # pragma: no cover - not POSIX: no box
        return fn()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        try:
            os.close(r)
            _child(fn, limits["memory_mb"], limits["timeout_ms"], w)
        finally:
            os._exit(0)
    os.close(w)
    try:
        with os.fdopen(r, "rb") as fh:
            data = fh.read()
    except BaseException:
        _reap(pid, os.WNOHANG)  # interrupted (a deadline): the child finishes on its own
        raise
    _reap(pid)
    where, (kind, value) = _frames(data)
    if kind == "ok":
        return value
    if kind == "user":
        raise _rebuild(value)
    if kind == "error":
        raise _failed(doing, value, what, where)
    if where is not None:
        raise UserError(_pattern_message(kind, limits, doing), *where)
    if kind == "memory":
        raise at_document(memory_message(limits["memory_mb"], doing), what)
    raise at_document(f"{doing} did not finish within {limits['timeout_ms']} ms or past "
                      f"{limits['memory_mb']} MB (compile in pipelines/settings/engine.yaml); "
                      "simplify its patterns", what)


def _failed(doing, value, what, where):
    """An exception no check turned into a user error: a check missed it.
    Still one line at the file (or the place noted), never a traceback."""
    first = (value.splitlines() or [""])[0]
    message = f"{doing} failed: {first}; fix what this names, and report it as an engine bug (a check missed it)"
    return UserError(message, *where) if where is not None else at_document(message, what)


def at_document(message, file):
    """The error of a whole document: at its first line (1:1), as validate
    says every problem of a document itself."""
    return UserError(message, file, *((1, 1) if file is not None else ()))


def _frames(data):
    """(the last place noted or None, (kind, value) of the result) from what
    the box wrote; ("ended", None) when it wrote no result (killed)."""
    import io
    import pickle

    stream, where = io.BytesIO(data), None
    while True:
        try:
            kind, value = pickle.load(stream)
        except (EOFError, pickle.UnpicklingError, ValueError):  # the end, or a result cut off by the kill
            return where, ("ended", None)
        if kind != "note":
            return where, (kind, value)
        where = value


def _pattern_message(kind, limits, doing):
    """The box ended on a pattern: past the memory cap, or the time limit."""
    if kind == "memory":
        return pattern_memory_message(limits["memory_mb"])
    return (f"{doing} did not finish within {limits['timeout_ms']} ms or past {limits['memory_mb']} MB "
            "(compile in pipelines/settings/engine.yaml), here: simplify this pattern")


def pattern_memory_message(mb):
    return (f"compiling this pattern needs more than {mb} MB: it repeats itself into gigabytes, as "
            "(?:(?:q{1000}){1000}) does; simplify it (compile.memory_mb in pipelines/settings/engine.yaml)")


def memory_message(mb, doing="compiling this profile"):
    return (f"{doing} needs more than {mb} MB (a pattern such as (?:(?:q{{1000}}){{1000}}) "
            "repeats itself into gigabytes); simplify its patterns (compile.memory_mb in "
            "pipelines/settings/engine.yaml)")


def _reap(pid, flags=0):
    try:
        os.waitpid(pid, flags)
    except ChildProcessError:
        pass
