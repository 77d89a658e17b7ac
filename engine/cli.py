"""The `engine` command: a thin layer over the Python API.

Every mistake a user can make ends as one line `FILE:LINE:COL: message` (or
`FILE: message`) on stderr and exit status 1, never a traceback.
"""

import argparse
import os
import sys

from .errors import UserError

LEVELS_HELP = "compression level: off, light, standard, aggressive, or a path to a level file"


def _add_profile_args(p, level=True):
    p.add_argument("--profile", metavar="NAME|PATH", help="profile to use (default: $ENGINE_PROFILE, .engine/profile.yaml, built-in 'default')")
    if level:
        p.add_argument("--level", metavar="LEVEL", help=LEVELS_HELP + " (default: the profile's)")


def build_parser():
    parser = argparse.ArgumentParser(prog="engine", description="Compress and check the rule files of LLM coding agents.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("compress", help="compress a rule file and print the result")
    p.add_argument("file", help="rule file, or - for standard input")
    _add_profile_args(p)
    p.add_argument("--json", action="store_true", help="print the text and its figures (characters, tokens) as JSON")
    p.add_argument("--tokenizer", choices=("o200k_base", "cl100k_base"), help="tokenizer for --json figures (default: the profile's)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the compressed text here instead of stdout")

    p = sub.add_parser("validate", help="check YAML documents: schema, patterns, self-tests")
    p.add_argument("files", nargs="*", help="YAML files (default: every built-in document and the active profile)")
    _add_profile_args(p, level=False)

    p = sub.add_parser("diff", help="show what a level changes in a file")
    p.add_argument("file")
    _add_profile_args(p)
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")

    p = sub.add_parser("explain", help="list protected spans and every change, with the transform that made it")
    p.add_argument("file")
    _add_profile_args(p)

    p = sub.add_parser("stats", help="characters and tokens before and after, per file and level")
    p.add_argument("paths", nargs="+", help="files or folders (folders: every *.md inside, recursively)")
    _add_profile_args(p, level=False)
    p.add_argument("--levels", default="off,light,standard,aggressive", help="comma-separated levels (default: all four)")
    p.add_argument("--tokenizer", choices=("o200k_base", "cl100k_base"), help="default: the profile's")
    p.add_argument("--json", action="store_true", help="print the table as JSON")

    p = sub.add_parser("golden", help="compare golden cases with what the engine produces now")
    p.add_argument("dir", nargs="?", default=None, help="folder of cases (default: tests/golden)")
    p.add_argument("--update", action="store_true", help="rewrite the expected files; review them with git diff")

    p = sub.add_parser("profile", help="profiles")
    psub = p.add_subparsers(dest="profile_command", metavar="SUBCOMMAND")
    psub.required = True
    s = psub.add_parser("show", help="print the resolved profile (after extends, add and remove)")
    s.add_argument("name", nargs="?", help="profile name or path (default: the active profile)")
    s.add_argument("--level", metavar="LEVEL", help=LEVELS_HELP)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        from . import commands

        return getattr(commands, "cmd_" + args.command)(args) or 0
    except UserError as exc:
        _print_error(exc)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (| head); say nothing
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0


def _print_error(exc):
    msg = str(exc)
    for line in msg.splitlines() or [msg]:
        print(line if ":" in line.split(" ")[0] else f"engine: {line}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
