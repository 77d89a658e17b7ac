"""The `engine` command: a thin layer over the Python API.

Every mistake a user can make ends as one line `FILE:LINE:COL: message` (or
`FILE: message`) on stderr and exit status 1, never a traceback.
"""

import os
import sys

from .errors import UserError

LEVELS_HELP = "compression level: off, light, standard, aggressive, or a path to a level file"


def _add_profile_args(p, level=True):
    p.add_argument("--profile", metavar="NAME|PATH", help="profile to use (default: $ENGINE_PROFILE, .engine/profile.yaml, built-in 'default')")
    if level:
        p.add_argument("--level", metavar="LEVEL", help=LEVELS_HELP + " (default: the profile's)")


def build_parser():
    import argparse  # not at module level: `engine hook` never needs it

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

    p = sub.add_parser("hook", help="run as an agent hook: event JSON on stdin, one JSON object on stdout")
    p.add_argument("--profile", metavar="NAME|PATH")

    for name, helptext in (("install", "add the hook entries to the agent's settings.json"),
                           ("uninstall", "remove exactly the entries `engine install` added")):
        p = sub.add_parser(name, help=helptext)
        where = p.add_mutually_exclusive_group()
        where.add_argument("--project", action="store_true", help="./.claude/settings.json (the default)")
        where.add_argument("--user", action="store_true", help="~/.claude/settings.json")
        if name == "install":
            p.add_argument("--profile", metavar="NAME|PATH", help="profile written into the hook command")

    p = sub.add_parser("refresh", help="rule re-injection")
    rsub = p.add_subparsers(dest="refresh_command", metavar="SUBCOMMAND")
    rsub.required = True
    s = rsub.add_parser("preview", help="show what the refresh handlers would inject")
    s.add_argument("--turn", type=int, help="the prompt number to preview (default: every refresh handler, as if due)")
    s.add_argument("--cwd", help="project folder (default: the working directory)")
    s.add_argument("--profile", metavar="NAME|PATH")
    s.add_argument("--text", action="store_true", help="print the injected text too")

    p = sub.add_parser("profile", help="profiles")
    psub = p.add_subparsers(dest="profile_command", metavar="SUBCOMMAND")
    psub.required = True
    s = psub.add_parser("show", help="print the resolved profile (after extends, add and remove)")
    s.add_argument("name", nargs="?", help="profile name or path (default: the active profile)")
    s.add_argument("--level", metavar="LEVEL", help=LEVELS_HELP)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"]:
        # The hot path: no parser for every subcommand, no other imports.
        from .hooks.dispatch import main as hook_main

        profile = None
        if len(argv) >= 3 and argv[1] == "--profile":
            profile = argv[2]
        elif len(argv) >= 2 and argv[1].startswith("--profile="):
            profile = argv[1].split("=", 1)[1]
        return hook_main(profile)
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
