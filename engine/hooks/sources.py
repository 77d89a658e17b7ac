"""Rule files for a refresh: where they are, their priority, their order.
os.path and fnmatch only (no pathlib, no dataclasses): this runs in every
injecting hook process."""

import fnmatch
import os
import re

_FRONTMATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)


class RuleFile:
    def __init__(self, path, name, priority, text=""):
        self.path = path
        self.name = name
        self.priority = priority
        self.text = text


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
        folder = expand(src["dir"], cwd)
        if os.path.isdir(folder):
            pattern = src.get("glob", "*.md")
            if "/" in pattern or "**" in pattern:  # a glob across folders: pathlib's rules
                from pathlib import Path

                paths.extend(str(p) for p in sorted(Path(folder).glob(pattern)))
            else:
                names = sorted(n for n in os.listdir(folder) if fnmatch.fnmatchcase(n, pattern))
                paths.extend(os.path.join(folder, n) for n in names)
        elif os.path.lexists(folder):
            log(f"rules folder {folder} is not a folder (or a broken link); left out")
        # a folder that does not exist is normal (most people have only one of them)
    for f in spec.get("files", ()):
        p = expand(f, cwd)
        if os.path.isfile(p):
            paths.append(p)
        elif os.path.islink(p):
            log(f"{p} is a broken link; left out")
    skip = set(spec.get("skip", ()))
    pri = spec.get("priority", {"key": "priority", "default": 5})
    seen, out = set(), []
    for p in paths:
        real = os.path.realpath(p)
        name = os.path.basename(p)
        if real in seen or name in skip:
            continue
        if not os.path.isfile(p):
            log(f"rule file {p} is not a readable file (a broken link?); left out")
            continue
        seen.add(real)
        try:
            with open(p, "rb") as fh:
                data = fh.read()
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
        out.append(RuleFile(p, name, priority, text))
    if not spec.get("files"):
        out.sort(key=lambda r: (r.priority, r.name, r.path))  # rule files: most important first
    return out  # a list of files keeps the order it was given in
