"""Rule files for a refresh: where they are, their priority, their order."""

import os
import re
from dataclasses import dataclass
from pathlib import Path

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)


@dataclass
class RuleFile:
    path: str
    name: str
    priority: int
    text: str = ""
    problem: str = ""  # why it was left out (unreadable, not UTF-8)


def expand(template, cwd):
    """~ and {project} (the event's working directory) in a configured path."""
    return os.path.expanduser(template.replace("{project}", cwd or os.getcwd()))


def body(text):
    """The rule without its frontmatter: metadata for the agent's loader
    (globs, description), noise in a refresh."""
    m = _FRONTMATTER.match(text)
    return text[m.end():] if m else text


def priority_of(text, key, default):
    """(priority, problem): the frontmatter's whole-number priority, else the
    default with a note saying why when the key is there but not a number."""
    m = _FRONTMATTER.match(text)
    if not m:
        return default, ""
    found = re.search(rf"(?m)^{re.escape(key)}[ \t]*:[ \t]*(.*?)[ \t]*(?:#[^\r\n]*)?\r?$", m.group(1))
    if not found:
        return default, ""
    value = found.group(1).strip("'\"")
    if re.fullmatch(r"[+-]?\d+", value):
        return int(value), ""
    return default, f"{key}: {found.group(1)!s} is not a whole number (lower comes first); using the default {default}"


def collect(spec, cwd, log):
    """RuleFiles for a handler: its `sources` (dir + glob), sorted by
    (priority, file name), or its `files` in the order given; unreadable,
    non-UTF-8, empty and skipped files are left out."""
    paths = []
    for src in spec.get("sources", ()):
        folder = Path(expand(src["dir"], cwd))
        if folder.is_dir():
            paths.extend(sorted(folder.glob(src.get("glob", "*.md"))))
        elif folder.exists() or folder.is_symlink():
            log(f"rules folder {folder} is not a folder (or a broken link); left out")
        # a folder that does not exist is normal (most people have only one of them)
    for f in spec.get("files", ()):
        p = Path(expand(f, cwd))
        if p.is_file():
            paths.append(p)
        elif p.is_symlink():
            log(f"{p} is a broken link; left out")
    skip = set(spec.get("skip", ()))
    pri = spec.get("priority", {"key": "priority", "default": 5})
    seen, out = set(), []
    for p in paths:
        real = os.path.realpath(p)
        if real in seen or p.name in skip:
            continue
        if not p.is_file():
            log(f"rule file {p} is not a readable file (a broken link?); left out")
            continue
        seen.add(real)
        try:
            data = p.read_bytes()
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            log(f"rule file {p} is not UTF-8; left out (convert it with iconv -t UTF-8)")
            continue
        except OSError as exc:
            log(f"rule file {p} cannot be read ({exc.strerror}); left out")
            continue
        if not text.strip():
            continue
        priority, problem = priority_of(text, pri["key"], pri["default"])
        if problem:
            log(f"rule file {p}: {problem}")
        out.append(RuleFile(str(p), p.name, priority, text))
    if not spec.get("files"):
        out.sort(key=lambda r: (r.priority, r.name, r.path))  # rule files: most important first
    return out  # a list of files keeps the order it was given in
