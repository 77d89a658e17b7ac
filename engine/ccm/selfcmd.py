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


def engine_argv():
    """The engine's command as an argument list."""
    script = os.path.join(os.path.dirname(sys.executable), "engine")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return isolated(script)
    return [sys.executable, *interpreter_options(), "-m", "engine.cli"]


def engine_shell():
    """The engine's command as shell text (each part quoted)."""
    from shlex import quote

    return " ".join(quote(p) for p in engine_argv())
