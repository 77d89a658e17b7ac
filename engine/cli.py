"""The `engine` command: a thin layer over the Python API.

Every mistake a user can make ends as one line `FILE:LINE:COL: message` (or
`FILE: message`) on stderr and exit status 1, never a traceback.  A reader
that goes away (`| head -1`) ends the command quietly; a full disk or a
closed stdout is one line and exit status 1.
"""

import os
import sys

from .errors import UserError, display

LEVELS_HELP = "compression level: off, light, standard, aggressive, or a path to a level file"


PROFILE_HELP = ("profile to use (default: $ENGINE_PROFILE, else the nearest .engine/profile.yaml from the working "
                "folder up to the repository root once approved with `engine trust`, else ~/.engine/profile.yaml, "
                "else the config folder's profile.yaml, else the built-in 'default')")
COLOR_HELP = "colour: auto (only on a terminal, and not when $NO_COLOR is set), always or never"
JSON_COUNT_HELP = ("tokens are counted with tiktoken; the first count of a text loads the encoding (about 0.3 s), "
                   "a repeated count is read from the cache")


# Commands of their own subsystems: name -> module with add_parser(sub) and
# run(args).  A new subsystem adds one line here and keeps its options and
# its code in its own package.
COMMAND_MODULES = {
    "session": "engine.session.command",
    "messages": "engine.messages.cli",
    "cache": "engine.ccm.cli",
    "purge": "engine.ccm.purge_cli",
    "memory": "engine.memory.cli",
    "trust": "engine.trust_cli",
}


def _add_profile_args(p, level=True):
    p.add_argument("--profile", metavar="NAME|PATH", help=PROFILE_HELP)
    if level:
        p.add_argument("--level", metavar="LEVEL", help=LEVELS_HELP + " (default: the profile's)")


def build_parser():
    import argparse  # not at module level: `engine hook` never needs it

    from . import __version__

    parser = argparse.ArgumentParser(prog="engine", description="Compress and check the rule files of LLM coding agents.")
    parser.add_argument("--version", action="version", version=f"engine {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("compress", help="compress rule files and print (or write) the result",
                       epilog="--json: " + JSON_COUNT_HELP + ".")
    p.add_argument("files", nargs="+", metavar="FILE", help="rule files or globs ('rules/*.md'), or - for standard input")
    _add_profile_args(p)
    p.add_argument("--json", action="store_true", help="print the text and its figures (characters, tokens) as JSON "
                   "(one object; a list of them for several files)")
    p.add_argument("--tokenizer", choices=("o200k_base", "cl100k_base"), help="tokenizer for --json figures (default: the profile's)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", metavar="FILE|DIR", help="write the result here instead of stdout "
                     "(a folder when several files are given: each keeps its name)")
    out.add_argument("-i", "--in-place", action="store_true", help="replace each file by its compressed text")

    p = sub.add_parser("validate", help="check YAML documents: schema, patterns, self-tests")
    p.add_argument("files", nargs="*", help="YAML files (default: every built-in document and the active profile)")
    _add_profile_args(p, level=False)
    p.add_argument("--json", action="store_true", help='print {"ok": bool, "problems": [{"file", "line", "col", "message"}]}')

    p = sub.add_parser("diff", help="show what a level changes in a file")
    p.add_argument("file", help="rule file, or - for standard input")
    _add_profile_args(p)
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help=COLOR_HELP)
    p.add_argument("--exit-code", action="store_true", help="exit 1 when the level would change the file, 0 when not")
    p.add_argument("--json", action="store_true", help="print the diff and the figures as one JSON object")

    p = sub.add_parser("explain", help="list protected spans and every change, with the transform that made it")
    p.add_argument("file", help="rule file, or - for standard input")
    _add_profile_args(p)
    p.add_argument("--json", action="store_true", help="print the spans, changes and decisions as one JSON object")

    p = sub.add_parser("stats", help="characters and tokens before and after, per file and level")
    p.add_argument("paths", nargs="+", help="files or folders (folders: every *.md inside, recursively)")
    _add_profile_args(p, level=False)
    p.add_argument("--levels", default="off,light,standard,aggressive", help="comma-separated levels (default: all four)")
    p.add_argument("--tokenizer", choices=("o200k_base", "cl100k_base"), help="default: the profile's")
    p.add_argument("--json", action="store_true", help="print the table as JSON")

    p = sub.add_parser("golden", help="compare golden cases with what the engine produces now")
    p.add_argument("dir", nargs="?", default=None, help="folder of cases (default: tests/golden)")
    p.add_argument("--update", action="store_true", help="rewrite the expected files; review them with git diff")

    p = sub.add_parser("hook", help="run as an agent hook: event JSON on stdin, one JSON object on stdout",
                       description="Run as an agent hook (engine install writes the command). Reads one event as "
                       "JSON on stdin and prints one JSON object for the agent, or nothing. Never fails: problems "
                       "go to the hook log (hook.log in the state folder) and the exit status is 0.")
    p.add_argument("--profile", metavar="NAME|PATH", help=PROFILE_HELP)

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
    s.add_argument("--touched", nargs="+", metavar="PATH", help="files the session touched (path-scoped rules)")
    s.add_argument("--transcript", metavar="FILE", help="read the touched files from this transcript's tool calls")

    p = sub.add_parser("profile", help="profiles")
    psub = p.add_subparsers(dest="profile_command", metavar="SUBCOMMAND")
    psub.required = True
    s = psub.add_parser("show", help="print the resolved profile (after extends, add and remove), "
                        "and which file was chosen and why")
    s.add_argument("name", nargs="?", help="profile name or path (default: the active profile)")
    s.add_argument("--level", metavar="LEVEL", help=LEVELS_HELP)

    p = sub.add_parser("completion", help="print a shell completion script (bash or zsh)",
                       description="bash: eval \"$(engine completion bash)\" in ~/.bashrc; "
                       "zsh: eval \"$(engine completion zsh)\" in ~/.zshrc")
    p.add_argument("shell", choices=("bash", "zsh"))
    from importlib import import_module

    for module in COMMAND_MODULES.values():
        import_module(module).add_parser(sub)
    return parser


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"] and os.environ.get("ENGINE_HOOKS_PASSTHROUGH") == "1":
        return 0  # every hook does nothing: checked before anything else is imported
    if argv[:1] == ["hook"] and not any(a in ("-h", "--help") for a in argv[1:]):
        # The hot path: no parser for every subcommand, no other imports.
        from .hooks.dispatch import main as hook_main

        profile = None
        if len(argv) >= 3 and argv[1] == "--profile":
            profile = argv[2]
        elif len(argv) >= 2 and argv[1].startswith("--profile="):
            profile = argv[1].split("=", 1)[1]
        rc = hook_main(profile)
        if _stdout_broken():  # a hook never fails: not even at the interpreter's last flush
            _silence_stdout()
        return rc
    return _guarded(_run, argv)


def _run(argv):
    if argv[:1] == ["compress"]:
        from .fastpath import compress_simple

        rc = compress_simple(argv[1:])  # `compress FILE [--level L] [--profile P]` without argparse
        if rc is not None:
            return rc
    args = build_parser().parse_args(argv)
    if args.command in COMMAND_MODULES:
        from importlib import import_module

        return import_module(COMMAND_MODULES[args.command]).run(args) or 0
    from . import commands

    return getattr(commands, "cmd_" + args.command)(args) or 0


def _guarded(fn, *args):
    """Run a command; user errors and output failures become one line."""
    try:
        rc = fn(*args)
        sys.stdout.flush()  # here, not at exit: a full disk must be reported, not a traceback
        return rc
    except UserError as exc:
        _print_error(exc)
        return 1
    except KeyboardInterrupt:
        return 130
    except RecursionError:  # input nested deeper than the interpreter can follow: one line, no traceback
        _silence_stdout()
        print("engine: the input is nested too deeply to process; nothing was changed", file=sys.stderr)
        return 1
    except BrokenPipeError:
        _silence_stdout()  # the reader went away (| head): say nothing
        return 0
    except OSError as exc:
        # files are UserErrors by now; an OSError without a file name is stdout
        what = display(exc.filename) if exc.filename else "standard output"
        _silence_stdout()
        print(f"engine: cannot write to {what}: {exc.strerror or exc}", file=sys.stderr)
        return 1


def _stdout_broken():
    try:
        sys.stdout.flush()
        return False
    except (OSError, ValueError):
        return True


def _silence_stdout():
    """Point stdout at /dev/null, so the interpreter's final flush of what is
    still buffered cannot fail again (and print a traceback) at exit."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):
        pass


def _print_error(exc):
    msg = str(exc)
    for line in msg.splitlines() or [msg]:
        print(line if ":" in line.split(" ")[0] else f"engine: {line}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
