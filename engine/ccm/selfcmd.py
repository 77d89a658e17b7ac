"""The command that runs this engine again, as the process that writes it
finds itself: the running interpreter, isolated (-I; with its bytecode
folder, where it has one apart from the sources), on the `engine` script
next to it (a venv's bin/), else with `-m engine.cli`.  Isolated because the
agent runs these commands in the project's folder, which `-m` alone would
put first on the import path, and with the project's variables (Claude
Code's settings `env`, Gemini CLI's `.env`): a script started by its `#!`
line honours PYTHONPATH, whose `sitecustomize.py` runs before the script's
first line, and PYTHONHOME, which picks the standard library.

The rule kept: whatever the engine writes for later execution (the
`engine cache run` wrapper a rewritten Bash call runs, the read-back command
of every stub) names the engine by absolute path, so it works where the
engine is not on PATH (a venv that is not activated).
"""

import os
import sys

# How the interpreter runs the engine: isolated (-I) from the working folder
# and from the environment's PYTHON* variables; as a module with -m.
ISOLATED = ("-I",)
# -I drops PYTHONPYCACHEPREFIX too: where this interpreter keeps bytecode
# apart from the sources, the command says so itself (-X PYCACHE=DIR).
PYCACHE = "pycache_prefix="


def interpreter_options():
    """-I, then `-X pycache_prefix=DIR` where this interpreter keeps its
    bytecode in DIR (PYTHONPYCACHEPREFIX or -X): the engine's commands put
    their bytecode where the user's Python does, never beside a source
    folder the user keeps clean (a checkout, a read-only install)."""
    prefix = sys.pycache_prefix
    if prefix and os.path.isabs(prefix):
        return [*ISOLATED, "-X", PYCACHE + prefix]
    return list(ISOLATED)


def isolated(script):
    """The argument list that runs `script` (a Python script beside this
    interpreter) on this interpreter, isolated."""
    return [sys.executable, *interpreter_options(), script]


# The engine's console script, as the install names it.
SCRIPT = "engine"


def own_script():
    """This engine's console script beside its interpreter, or None."""
    script = os.path.join(os.path.dirname(sys.executable), SCRIPT)
    return script if os.path.isfile(script) and os.access(script, os.X_OK) else None


def engine_argv():
    """The engine's command as an argument list."""
    script = own_script()
    if script:
        return isolated(script)
    return [sys.executable, *interpreter_options(), "-m", "engine.cli"]


def engine_shell(by_name=False):
    """The engine's command as shell text (each part quoted).  `by_name`:
    for an agent that refuses a program named by a path outside the project
    (its shell tool's `refuses_paths_outside_project`), the bare name where
    PATH finds this very engine's script; the absolute command otherwise."""
    if by_name and _path_finds_this_engine():
        return SCRIPT
    from shlex import quote

    return " ".join(quote(p) for p in engine_argv())


def _path_finds_this_engine():
    import shutil

    script, found = own_script(), shutil.which(SCRIPT)
    try:
        return bool(script and found) and os.path.samefile(script, found)
    except OSError:
        return False
