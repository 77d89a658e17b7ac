"""argparse with the engine's way of saying a mistake (engine/cli/main.py):
one line on stderr and exit status 1, the nearest known name when there is
one, and the help to read, instead of argparse's usage block and exit 2.
An unknown option is said by the (sub)command it was given to, so its
nearest option is that command's."""

import argparse
import re

from engine.base.errors import UserError, suggest

_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)$")
_UNKNOWN = "unrecognized arguments: "


class Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse calls this for every mistake; it must not return
        raise UserError(f"{message}{_nearest(self, message)} (see `{self.prog} --help`)")


def _nearest(parser, message):
    """'; did you mean X?' for an unknown choice or option, or ''."""
    m = _CHOICE.search(message)
    if m:
        return suggest(m.group(1), re.findall(r"'([^']*)'", m.group(2)))
    if message.startswith(_UNKNOWN):
        first = message[len(_UNKNOWN):].split()[0]
        if first.startswith("-"):
            options = [o for a in parser._actions for o in a.option_strings]
            return suggest(first.split("=", 1)[0], options)
    return ""


def amount(text):
    """An option's number of days, megabytes or seconds: finite, 0 or more.
    float() alone takes nan, inf and 1e400: a prune by them deleted nothing
    and said so with exit 0, or ended in an OverflowError traceback."""
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of 0 or more; give one, e.g. 30")
    return value


def folder(text):
    """A --cwd: a folder that is there.  A mistyped one previewed a project
    without its rules ('no files found', exit 0), or said it could not be
    written to."""
    import os

    if not os.path.isdir(text):
        what = "this is not a folder" if os.path.exists(text) else "no such folder"
        raise argparse.ArgumentTypeError(f"{text!r}: {what}; give the project's folder")
    return text


def parse(parser, argv):
    """parser.parse_args(argv), with arguments nobody takes said by the
    command they were given to (argparse says them at the top level)."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        _chosen(parser, args).error(_UNKNOWN + " ".join(extra))
    return args


def _chosen(parser, args):
    """The innermost subparser the parsed `args` went through."""
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        name = getattr(args, subs[0].dest, None) if subs and subs[0].dest != argparse.SUPPRESS else None
        if name not in (subs[0].choices if subs else {}):
            return parser
        parser = subs[0].choices[name]
