"""The command that runs this engine again, as the process that writes it
finds itself: the running interpreter, isolated (-I), on the `engine` script
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
ISOLATED_MODULE = (*ISOLATED, "-m")


def isolated(script):
    """The argument list that runs `script` (a Python script beside this
    interpreter) on this interpreter, isolated."""
    return [sys.executable, *ISOLATED, script]


def engine_argv():
    """The engine's command as an argument list."""
    script = os.path.join(os.path.dirname(sys.executable), "engine")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return isolated(script)
    return [sys.executable, *ISOLATED_MODULE, "engine.cli"]


def engine_shell():
    """The engine's command as shell text (each part quoted)."""
    from shlex import quote

    return " ".join(quote(p) for p in engine_argv())
