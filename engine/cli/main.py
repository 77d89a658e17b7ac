"""The `engine` command: a thin layer over the Python API.

Every mistake a user can make ends as one line `FILE:LINE:COL: message` (or
`FILE: message`) on stderr and exit status 1, never a traceback.  A reader
that goes away (`| head -1`) ends the command quietly; a full disk or a
closed stdout is one line and exit status 1.
"""

import os
import sys

# Nothing else at the top: `engine hook` (below) imports only the hook's own
# modules, not the parser of every subcommand nor the error printers.


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if _is_hook(argv):
        return _hook(argv[1:])
    return _guarded(_command, argv)


def _is_hook(argv):
    """`engine hook` answering an event (its --help is a command's)."""
    return argv[:1] == ["hook"] and not any(a in ("-h", "--help") for a in argv[1:])


# The wrapper a rewritten shell call runs: its stderr is the command's own,
# so the note is not added there (the command keeps the variables anyway).
WRAPPER = ["cache", "run"]


def _command(argv):
    """Any other command, once the engine's variables the project's agent
    settings set are dropped (an agent's shell may run it with them: a
    stub's read-back, Gemini's tail call), each one said on stderr."""
    from engine.hooks.projectenv import guard_any, said

    dropped = guard_any()
    if dropped and argv[:2] != WRAPPER:
        print(f"engine: note: {said(dropped, 'this command')}", file=sys.stderr)
    return _run(argv)


def _hook(args):
    """`engine hook`, the hot path: no parser for every subcommand, no other
    imports.  Before anything else, the variables a project set for the
    hooks are dropped (they are not the user's), the off switch among them.
    No cyclic garbage collection (scripts/engine-hook says why)."""
    import gc

    gc.disable()
    opts = hook_options(args)
    dropped = _drop_project_variables(opts.get("agent"))
    if os.environ.get("ENGINE_HOOKS_PASSTHROUGH") == "1":
        return 0  # the user's off switch: every hook does nothing
    from engine.hooks.dispatch import main as hook_main

    rc = hook_main(opts.get("profile"), agent=opts.get("agent"), event_name=opts.get("event"), dropped=dropped)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # a hook never fails: not even at the interpreter's last flush
        from .output import silence_stdout

        silence_stdout()
    return rc


def end_hook_process(rc):
    """Leave a hook process at once, its answer flushed: the interpreter's
    own teardown (every module and object freed one by one) is about 2.5 ms
    of a quiet event, 10% of it, and nothing is left to do by then: every
    file the hook writes is written and closed (atomic replaces, whole-line
    log writes), its locks are the kernel's to drop, and the engine
    registers no exit handler.  For the processes that run one hook event
    (scripts/engine-hook, the `engine` command, `python -m engine.cli`:
    run_as_process), never for a caller of main() in its own process."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone: the answer is lost either way, and a hook never fails
            pass
    os._exit(rc if isinstance(rc, int) else 0)


def run_as_process(argv=None):
    """main(argv) as a process's whole job: a hook event leaves through
    end_hook_process, any other command through sys.exit."""
    argv = sys.argv[1:] if argv is None else argv
    rc = main(argv)
    if _is_hook(argv):
        end_hook_process(rc)
    sys.exit(rc)


def _drop_project_variables(agent):
    """The engine's variables the project set for this hook, dropped
    (engine/hooks/projectenv.py).  Should that fail, none is the user's."""
    try:
        from engine.hooks.projectenv import guard

        return guard(agent)
    except Exception:  # noqa: BLE001 - a hook never fails
        from engine.base.paths import USER_VARIABLES

        return [n for n in USER_VARIABLES if os.environ.pop(n, None) is not None]


HOOK_OPTIONS = ("profile", "agent", "event")


def hook_options(args):
    """--profile, --agent and --event of `engine hook` (as `--x V` or
    `--x=V`), read without argparse: the hook's hot path.  Anything else is
    ignored, as the hook has always ignored it: a hook never fails."""
    opts, i = {}, 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg[2:].partition("=") if arg.startswith("--") else ("", "", "")
        if name in HOOK_OPTIONS:
            if not eq:
                i += 1
                value = args[i] if i < len(args) else None
            if value is not None:
                opts[name] = value
        i += 1
    return opts


def _run(argv):
    from .parser import COMMAND_MODULES, build_parser, command_of

    if argv[:1] == ["compress"]:
        from .fastpath import compress_simple

        rc = compress_simple(argv[1:])  # `compress FILE [--level L] [--profile P]` without argparse
        if rc is not None:
            return rc
    from .argparser import parse

    args = parse(build_parser(command_of(argv)), argv)
    if args.command in COMMAND_MODULES:
        from importlib import import_module

        return import_module(COMMAND_MODULES[args.command]).run(args) or 0
    from . import commands

    return getattr(commands, "cmd_" + args.command)(args) or 0


def _guarded(fn, *args):
    """Run a command; user errors and output failures become one line."""
    from engine.base.errors import UserError, display

    from .output import escaped_streams, print_error, silence_stdout

    with escaped_streams():  # nothing a command prints puts a raw control character on the terminal
        try:
            rc = fn(*args)
            sys.stdout.flush()  # here, not at exit: a full disk must be reported, not a traceback
            return rc
        except UserError as exc:
            print_error(exc)
            return 1
        except KeyboardInterrupt:
            return 130
        except RecursionError:  # input nested deeper than the interpreter can follow: one line, no traceback
            silence_stdout()
            print("engine: the input is nested too deeply to process; nothing was changed", file=sys.stderr)
            return 1
        except MemoryError:  # every reader is bounded; should one be missed, still one line
            silence_stdout()
            print("engine: out of memory: the input is too large to process here; nothing was changed",
                  file=sys.stderr)
            return 1
        except BrokenPipeError:
            silence_stdout()  # the reader went away (| head): say nothing
            return 0
        except OSError as exc:
            silence_stdout()
            print(_os_error_line(exc, display), file=sys.stderr)
            return 1


def _os_error_line(exc, display):
    """The one line for an OSError that reached the top: files are
    UserErrors by now, so one without a file name is stdout's, unless the
    working folder itself is gone (every command looks for its project there)."""
    from engine.base.paths import working_folder

    if exc.filename:
        return f"engine: cannot write to {display(exc.filename)}: {exc.strerror or exc}"
    if working_folder() is None:
        return ("engine: the working folder no longer exists (it was removed under this shell); "
                "cd to a folder that exists and run the command again")
    return f"engine: cannot write to standard output: {exc.strerror or exc}"


if __name__ == "__main__":
    run_as_process()
