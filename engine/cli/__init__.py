"""The `engine` command: argument parsing, the commands, shell completion and
what they print: a thin layer over the Python API.  Nothing below this
package imports it."""

from .main import main

__all__ = ["main"]
