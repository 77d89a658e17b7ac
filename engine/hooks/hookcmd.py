"""The command line of the engine's hook, as `engine install` writes it into
an agent's settings, and the test that tells such a line from any other.

A line is ours when it has exactly a shape hook_command writes: `<python>
-I` (then `-X pycache_prefix=DIR`, DIR absolute, where the interpreter
keeps its bytecode apart) on the `engine-hook` script or on `engine hook`,
or `<python> -I -m engine.cli hook`, or as written before -I (the
`engine-hook` script, `engine hook`, `<python> -m engine.cli hook`), by
absolute paths, then any of
`--agent NAME`, `--event NAME`, `--profile REF` (each at most once), quoted
as shlex.quote quotes.  A command that merely contains those words is the
user's."""

import os
import shlex
import sys
from pathlib import Path

from engine.base.refs import is_path
from engine.ccm.selfcmd import ISOLATED, PYCACHE, interpreter_options, isolated

# The options a hook command may carry, in the order they are written.
OPTIONS = ("--agent", "--event", "--profile")


def hook_command(profile_ref=None, cwd=None, agent=None, event=None):
    """A command that works without any virtual environment being active:
    this interpreter, isolated (-I), on the `engine-hook` script installed
    beside it (it spares every event the ~10 ms of the generated `engine`
    wrapper), else on `engine hook`, else with -m, which costs about 10 ms
    more again (runpy).  -I because the agent runs its hooks in the
    project's folder, with the project's variables (selfcmd.py): `python -m`
    alone puts that folder first on the import path, and a script started
    by its `#!` line runs the `sitecustomize.py` a project's PYTHONPATH
    names before its first line.  It names the agent and, for an agent whose
    payload does not, the event."""
    parts = _base()
    if agent:
        parts += ["--agent", agent]
    if event:
        parts += ["--event", event]
    if profile_ref:
        ref = profile_ref
        if is_path(ref):
            ref = str((Path(cwd or os.getcwd()) / os.path.expanduser(ref)).resolve())
        parts += ["--profile", ref]
    return " ".join(shlex.quote(p) for p in parts)


def _base():
    bindir = os.path.dirname(sys.executable)
    for name, args in (("engine-hook", []), ("engine", ["hook"])):
        script = os.path.join(bindir, name)
        if os.path.isfile(script) and os.access(script, os.X_OK) and _runs_this_python(script):
            return [*isolated(script), *args]
    return [sys.executable, *interpreter_options(), "-m", "engine.cli", "hook"]


def _runs_this_python(script):
    try:
        with open(script, "rb") as fh:
            first = fh.readline().decode("utf-8", "replace").strip()
    except OSError:
        return False
    return first.startswith("#!") and os.path.realpath(first[2:].split()[0]) == os.path.realpath(sys.executable)


def parse(cmd):
    """{"agent", "event", "profile"} of a command hook_command wrote (each
    None when absent), or None when `cmd` is not one."""
    if not isinstance(cmd, str):
        return None
    try:
        argv = shlex.split(cmd)
    except ValueError:
        return None
    if not argv or " ".join(shlex.quote(a) for a in argv) != cmd or not os.path.isabs(argv[0]):
        return None
    rest = _after_base(argv)
    if rest is None:
        return None
    found = {}
    while rest:
        if len(rest) < 2 or rest[0] not in OPTIONS or rest[0] in found or rest[1].startswith("--"):
            return None
        found[rest[0]] = rest[1]
        rest = rest[2:]
    return {name[2:]: found.get(name) for name in OPTIONS}


def _after_base(argv):
    """The options after the command's base, or None when the base is not ours."""
    n = _after_isolation(argv)
    if n is not None and len(argv) > n and os.path.isabs(argv[n]):
        return _after_script(argv[n:])  # <python> -I [-X pycache_prefix=DIR] <script>: as written now
    return _after_script(argv) if os.path.basename(argv[0]) in ("engine-hook", "engine") else _after_module(argv)


def _after_isolation(argv):
    """Where the arguments go on after `<python> -I [-X pycache_prefix=DIR]`,
    or None when the interpreter is not isolated."""
    n = len(ISOLATED) + 1
    if argv[1:n] != list(ISOLATED):
        return None
    option = argv[n + 1] if argv[n:n + 1] == ["-X"] and len(argv) > n + 1 else ""
    if option.startswith(PYCACHE) and os.path.isabs(option[len(PYCACHE):]):
        return n + 2
    return n


def _after_script(argv):
    """The options after `<abs>/engine-hook` or `<abs>/engine hook`, or None."""
    name = os.path.basename(argv[0])
    if name == "engine-hook":
        return argv[1:]
    if name == "engine" and argv[1:2] == ["hook"]:
        return argv[2:]
    return None


def _after_module(argv):
    """The options after `<python> [-I [-X pycache_prefix=DIR]] -m engine.cli
    hook` (as written now, and before -I), or None."""
    n = _after_isolation(argv) or 1
    if argv[n:n + 3] == ["-m", "engine.cli", "hook"]:
        return argv[n + 3:]
    return None


def programs(cmd):
    """The programs a command of ours runs (its interpreter, and the script
    it is given), or [] when `cmd` is not one."""
    if parse(cmd) is None:
        return []
    argv = shlex.split(cmd)
    n = _after_isolation(argv)
    script = [argv[n]] if n is not None and len(argv) > n and os.path.isabs(argv[n]) else []
    return [argv[0], *script]


def runs_this_engine(cmd):
    """A command of ours (parse) whose program is this engine: one that names
    its interpreter runs the engine's script or module with it; an older
    one that runs a program by its own path (`/abs/engine hook`,
    `/abs/engine-hook`) is this engine's only when that program is
    (engines_program), not any program of that name."""
    if parse(cmd) is None:
        return False
    program = _direct_program(shlex.split(cmd))
    return program is None or engines_program(program)


def missing_program(cmd):
    """The first program a command of ours runs (its interpreter, its
    script) that is not there, or None: such a hook runs nothing (an
    install since removed), and a file put at that path later would run
    in the engine's place."""
    return next((p for p in programs(cmd) if not os.path.lexists(p)), None)


def runs_unisolated(cmd):
    """Is `cmd` a command of ours as written before -I (`<python> -m
    engine.cli hook`, or a script started by its `#!` line)?  Run in a
    project's folder, such an interpreter puts that folder first on its
    import path (-m) or reads a PYTHONPATH the project's settings set, so
    a cloned repository's own `engine/` could run in the hook."""
    if parse(cmd) is None:
        return False
    return _after_isolation(shlex.split(cmd)) is None


def foreign_program(cmd):
    """The program an older command of the engine's shape runs by its path
    when that program is not this engine's (another tool's `engine`), else None."""
    if parse(cmd) is None or runs_this_engine(cmd):
        return None
    return _direct_program(shlex.split(cmd))


def _direct_program(argv):
    """The program of a command that runs it by its own path, no interpreter named, else None."""
    return argv[0] if _after_isolation(argv) is None and _after_script(argv) is not None else None


def engines_program(path):
    """Is the program at `path` this engine's: the script engine install
    writes today (the same file, links followed), or one an install of this
    engine (pip, pipx, uv) lists with its hash in its RECORD (an earlier
    install's, in another environment)?  A program no longer there runs
    nothing and passes for nothing: an install since removed, whose entry
    install replaces and uninstall takes out."""
    real = os.path.realpath(path)
    if not os.path.lexists(real):
        return True
    if real in {os.path.realpath(p) for p in _base()[1:] if os.path.isabs(p)}:
        return True
    return _listed_by_an_install(real)


def _listed_by_an_install(real):
    """Does a RECORD of this engine's distribution beside the script's folder
    (install.engine_records) list this very file, with its hash?"""
    import glob
    from itertools import islice

    from engine.core.settings import engine_records

    patterns, cap = engine_records()
    folder = os.path.dirname(real)
    digest = _record_hash(real, cap)
    for pattern in patterns:
        for record in islice(glob.iglob(os.path.join(glob.escape(folder), pattern)), 16):
            if digest and digest in _record_hashes(record, real, cap):
                return True
    return False


def _record_hash(path, cap):
    """`sha256=<urlsafe base64, unpadded>` of a file, as a RECORD writes it, or None."""
    import base64
    import hashlib

    from engine.base.files import read_regular

    try:
        data = read_regular(path, cap)
    except (OSError, ValueError):
        return None
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")


def _record_hashes(record, real, cap):
    """The hashes a RECORD gives for the file `real` (its paths are relative to the site folder above it)."""
    import csv

    from engine.base.files import read_regular

    try:
        text = read_regular(record, cap).decode("utf-8", "replace")
    except (OSError, ValueError):
        return []
    site, name = os.path.dirname(os.path.dirname(record)), os.path.basename(real)
    rows = [row for row in csv.reader(text.splitlines()) if len(row) >= 2 and os.path.basename(row[0]) == name]
    return [row[1] for row in rows if os.path.realpath(os.path.join(site, row[0])) == real]


def this_engines(cmd):
    """Does a command of ours run this engine (the programs hook_command writes now)?"""
    return programs(cmd) == [p for p in _base() if os.path.isabs(p)]


def is_ours(cmd):
    return runs_this_engine(cmd)
