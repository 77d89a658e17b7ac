"""Every command the engine's messages, help texts and docs tell a user to
run exists: `engine session list` and `engine agents` were named in a
message and a help text, and neither was ever a command.

A mention is `engine WORD` in a string of the engine's code, or in the
code of the README and docs/: a WORD in backticks must name a command, and
a command with subcommands must be followed by one of them (or by an
option)."""

import argparse
import re
from pathlib import Path

import pytest

from engine.cli.parser import build_parser
from support import code

REPO = Path(__file__).resolve().parent.parent
# `engine` then a lowercase word, then maybe a second one, as a command line is written.
MENTION = re.compile(r"(?<![\w./-])engine ([a-z][a-z-]*)(?: ([a-z][a-z-]*|-\S*))?")


def _commands():
    """{command: {its subcommands}}."""
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for name, sub in subs.choices.items():
        nested = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        out[name] = set(nested[0].choices) if nested else set()
    return out


def _code_strings():
    """(where, text) of every string constant under engine/."""
    for path in sorted((REPO / "engine").rglob("*.py")):
        for line, text in code.strings(path, docstrings=True):
            yield f"{path.relative_to(REPO)}:{line}", text


def _doc_lines():
    """(where, code) of the README's and docs' code: fenced blocks and `spans`
    (prose such as "`engine session` and ..." names no subcommand)."""
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        fenced = False
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            where = f"{path.relative_to(REPO)}:{n}"
            if fenced:  # a command line of a block names a command with its first word: as strict as a `span`
                command = re.sub(r"^\s*(?:\$\s+)?", "", line)
                yield where, ("`" + command) if command.startswith("engine ") else line
            else:
                yield from ((where, "`" + span) for span in re.findall(r"`([^`]+)`", line))


def _wrong(where_texts, commands, strict_first):
    """Mentions naming a subcommand that does not exist; with strict_first,
    also a first word in backticks that is no command."""
    bad = []
    for where, text in where_texts:
        for m in MENTION.finditer(text):
            first, second = m.group(1), m.group(2)
            if first not in commands:
                if strict_first and text[max(0, m.start() - 1):m.start()] == "`":
                    bad.append(f"{where}: {m.group(0)!r}: no command {first!r}")
                continue
            if commands[first] and second and not second.startswith("-") and second not in commands[first]:
                bad.append(f"{where}: {m.group(0)!r}: {first} has no subcommand {second!r}")
    return bad


def test_the_mentions_are_found():
    commands = _commands()
    assert {"compress", "session", "cache", "install", "hook"} <= set(commands) and "report" in commands["session"]
    found = _wrong([("x", "run `engine agents`; engine session list shows them; engine cache show KEY")],
                   commands, True)
    assert len(found) == 2, found


@pytest.mark.parametrize("source", ["code", "docs"])
def test_every_command_a_message_or_a_page_names_exists(source):
    texts = _code_strings() if source == "code" else _doc_lines()
    bad = _wrong(texts, _commands(), strict_first=True)
    assert not bad, "\n".join(bad)
