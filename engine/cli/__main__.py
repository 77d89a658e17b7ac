"""`python -m engine.cli`: the same as the `engine` command (older installed
hook commands run it this way)."""

from .main import run_as_process

run_as_process()
