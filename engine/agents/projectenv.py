"""The variables a project sets in an agent's hooks' environment.

Some agents put variables from the project's own files into the
environment of every hook they run (`project_environment` of the agent's
YAML, measured): Claude Code the `env` of `.claude/settings.json` and
`.claude/settings.local.json`, Gemini CLI a `.env` file.  Such a variable
comes from the repository, not from the user.  This module names the
variables those files set; engine/hooks/projectenv.py decides what the
hook does with them.

Each file is read as a project's file is: a regular file within
`max_bytes`, opened without blocking.  One the agent cannot read either (a
folder, a FIFO, a device, a broken link) names nothing; one it reads that
cannot be read here (larger than max_bytes, not valid JSON) may name
anything: `declared` then says ANY.
os.path only: a hook calls this before it has loaded anything.
"""

import os

ANY = None  # declared(...) when a file could name any variable


def declared(agent, folders, home):
    """The names the project's files of `agent` set for its hooks: a set
    (empty when the agent takes none from a project), or ANY.  `folders`:
    the project's folders to look from (its root, the hook's folder); `home`:
    the user's home folder, whose files are the user's own."""
    spec = agent.data.get("project_environment")
    if not spec:
        return set()
    names = set()
    for path in _files(agent, spec, folders, home):
        found = _names(path, spec)
        if found is ANY:
            return ANY
        names |= found
    return names


def _files(agent, spec, folders, home):
    paths = []
    for folder in dict.fromkeys(f for f in folders if f):
        if "files" in spec:
            paths.extend(agent.expand(t, folder) for t in spec["files"])
        else:
            found = _first_up(folder, spec["walk_up"], home)
            if found:
                paths.append(found)
    return list(dict.fromkeys(paths))


def _first_up(folder, names, home):
    """The first of `names` found in `folder` or a folder above it, as the
    agent looks; None when none is, or when the first is in `home`."""
    here = os.path.abspath(folder)
    home = os.path.abspath(home)
    while True:
        for name in names:
            path = os.path.join(here, name)
            if os.path.lexists(path):
                return None if here == home else path
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up


def _names(path, spec):
    from engine.base.files import read_regular

    if not os.path.isfile(path):  # absent, a folder, a FIFO, a device, a broken link: the agent takes nothing
        return set()
    try:
        data = read_regular(path, spec["max_bytes"])
    except OSError:  # unreadable (a link swapped meanwhile, no permission): for the agent too
        return set()
    except ValueError:  # larger than max_bytes: the agent reads it all
        return ANY
    text = data.decode("utf-8", "replace")
    return _json_env(text) if spec["format"] == "json_env" else _dotenv(text)


def _json_env(text):
    from engine.base.fastjson import loads

    try:
        doc = loads(text)
    except (ValueError, RecursionError):
        return ANY
    env = doc.get("env") if isinstance(doc, dict) else None
    return set(env) if isinstance(env, dict) else set()


def _dotenv(text):
    """Every NAME a line starts a definition of (`NAME=`, `NAME: `, after
    `export `), blanks as the agent's parser counts them (_blank).  A line
    inside a multi-line quoted value may look like one too: taken, as a name
    too many only makes the hook more careful."""
    names = set()
    for line in text.splitlines():
        rest = _after_blanks(line)
        if rest.startswith("export") and _blank(rest[6:7]):
            rest = _after_blanks(rest[6:])
        end = 0
        while end < len(rest) and (rest[end].isalnum() or rest[end] in "_.-"):
            end += 1
        if end and _after_blanks(rest[end:])[:1] in ("=", ":"):
            names.add(rest[:end])
    return names


def _blank(ch):
    """Is `ch` a blank to the dotenv parser (JavaScript's \\s): Python's
    whitespace, and U+FEFF, which Python does not count."""
    return bool(ch) and (ch.isspace() or ch == "\ufeff")


def _after_blanks(text):
    i = 0
    while i < len(text) and _blank(text[i]):
        i += 1
    return text[i:]
