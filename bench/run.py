#!/usr/bin/env python3
"""Every bench family in turn: savings.py, speed.py, hooks.py, messages.py (each also runs
alone and rewrites only its own part of results.md).  Arguments after the
script name are passed to each: --quick, --venv, --corpus DIR."""

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FAMILIES = ("savings.py", "speed.py", "hooks.py", "messages.py")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    rc = 0
    for script in FAMILIES:
        print(f"bench: {script}", file=sys.stderr, flush=True)
        rc |= subprocess.call([sys.executable, str(HERE / script), *argv])
    return rc


if __name__ == "__main__":
    sys.exit(main())
