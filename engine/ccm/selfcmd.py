"""The command that runs this engine again, as the process that writes it
finds itself: the `engine` script next to the running interpreter (a venv's
bin/), else that interpreter with `-I -m engine.cli` (isolated: the agent
runs these commands in the project's folder, which `-m` alone would put
first on the import path, ahead of the engine).

The rule kept: whatever the engine writes for later execution (the
`engine cache run` wrapper a rewritten Bash call runs, the read-back command
of every stub) names the engine by absolute path, so it works where the
engine is not on PATH (a venv that is not activated).
"""

import os
import sys

# How an interpreter runs the engine as a module: isolated (-I) from the
# working folder and from the environment's PYTHON* variables.
ISOLATED_MODULE = ("-I", "-m")


def engine_argv():
    """The engine's command as an argument list."""
    script = os.path.join(os.path.dirname(sys.executable), "engine")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return [script]
    return [sys.executable, *ISOLATED_MODULE, "engine.cli"]


def engine_shell():
    """The engine's command as shell text (each part quoted)."""
    from shlex import quote

    return " ".join(quote(p) for p in engine_argv())
