"""The built-in agent documents (pipelines/agents/*.yaml) as plain data,
read once per process.

Agent facts are the engine's, not a profile's: what an agent sends and
reads does not change with the user's taste, and a project can never
change them.  A hook needs them before it has a profile (to know that an
event is a prompt, on a cold cache), so they are read from a JSON copy in
the cache folder, stamped with each file's size and time and the engine's
version, as the engine settings are (engine/core/settings.py): a warm hook
imports no YAML.  `engine validate` and the tests check the YAML files
against schemas/agent.schema.json.

The copy holds each document with the schema's defaults filled in
(engine/core/defaults.py), once, when it is made from the YAML: what the
hooks read is complete, and no Python code names a default of an agent
key.  The schema's size and time are in the stamp beside the YAML files':
a copy filled by another schema is not read.
"""

import os

from engine.base.paths import builtin_root_str, cache_dir_str, install_copy_name

_FOLDER = ("pipelines", "agents")
_SCHEMA = ("schemas", "agent.schema.json")
_COPY = "engine-agents"  # the stem of its file's name (install_copy_name)
_table = None
# The YAML files as read, by their paths and stamp: a process forked with another
# cache folder (the test suite's zygote) writes its own copy from them
# instead of parsing and filling the same files again.
_parsed = None


def folder():
    return os.path.join(builtin_root_str(), *_FOLDER)


def files():
    here = folder()
    try:
        names = sorted(n for n in os.listdir(here) if n.endswith(".yaml"))
    except OSError:
        return []
    return [os.path.join(here, n) for n in names]


# The form of the copy: raised whenever complete() derives something new,
# so a copy made by older code is not read (2: failure.exit_digits).
_FORM = 2


def _stamp(paths):
    """The engine's version and the copy's form, then [name, size, time] of
    the schema (its defaults are in the copy) and of each YAML file."""
    from engine.base.version import __version__

    out = [f"{__version__}/{_FORM}"]
    for p in [os.path.join(builtin_root_str(), *_SCHEMA), *paths]:
        st = os.stat(p)
        out.append([os.path.basename(p), st.st_size, st.st_mtime_ns])
    return out


def _from_copy(copy, stamp):
    from engine.base.fastjson import loads
    from engine.base.files import read_regular

    # The copy is the files' data, defaults filled in: never twice the
    # bytes it was made from (the stamp's sizes), and read no further.
    cap = 2 * sum(size for _name, size, _time in stamp[1:])
    try:
        entry = loads(read_regular(copy, cap).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(entry, dict) and entry.get("stamp") == stamp and isinstance(entry.get("value"), dict):
        return entry["value"]
    return None


def _from_yaml(paths, stamp):
    if _parsed is not None and _parsed[0] == (paths, stamp):
        return _parsed[1]
    import yaml

    table = {}
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            doc = yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        table[doc["name"]] = complete(doc)
    return table


def complete(doc):
    """An agent document (valid against schemas/agent.schema.json) with the
    schema's defaults filled in, as the table holds it; `doc` is left as it is.
    Derived once here: `failure.exit_literal`, the text every match of its
    exit-status pattern holds (engine/base/regexlit.py), which spares a hook
    `import re` where an output does not hold it, and `failure.exit_digits`,
    the pattern taken apart where it is LITERAL(\\d+)LITERAL, which spares
    it where one does."""
    from engine.base.regexlit import digits_between, required_literal
    from engine.core.defaults import fill, schema

    out = fill(schema("agent"), doc)
    failure = out.get("failure")
    if isinstance(failure, dict) and failure.get("exit_pattern"):
        failure["exit_literal"] = required_literal(failure["exit_pattern"]) or None
        failure["exit_digits"] = digits_between(failure["exit_pattern"])
    return out


def _save(copy, stamp, table):
    import json

    from engine.base.files import folder_is_private, replace_atomic

    if folder_is_private(os.path.dirname(copy), create=True):
        try:
            replace_atomic(copy, json.dumps({"stamp": stamp, "value": table}).encode("utf-8"))
        except OSError:
            pass  # the next hook reads the YAML again


def agents(settle=True):
    """{name: agent document} of every built-in agent.  Without `settle`
    the cache folder is only read, never created, closed or written: a hook
    asks so before it knows whether the folder's variable is the user's
    (engine/hooks/projectenv.py); the copy it lacked is written later."""
    global _table, _parsed
    copy = os.path.join(cache_dir_str(), install_copy_name(_COPY))
    if _table is not None and _table[0] == copy:  # keyed by the copy: a forked process may have another cache
        if settle and _table[2] is not None:
            _save(copy, _table[2], _table[1])
            _table = (copy, _table[1], None)
        return _table[1]
    from engine.base.files import folder_is_private

    paths = files()
    stamp = _stamp(paths)
    table = _from_copy(copy, stamp) if folder_is_private(os.path.dirname(copy), tighten=settle) else None
    unsaved = None
    if table is None:
        table = _from_yaml(paths, stamp)
        if settle:
            _save(copy, stamp, table)
        else:
            unsaved = stamp
    _table = (copy, table, unsaved)  # unsaved: the stamp of a copy still to write
    _parsed = ((paths, stamp), table)  # read from a copy or the files alike
    return table


def names():
    return sorted(agents())


def get(name):
    """The Agent (spec.Agent) of a built-in agent; KeyError for an unknown name."""
    from .spec import Agent

    return Agent(agents()[name])


def neutral_name(name):
    """The engine's name of a profile's event key: a neutral name as it is,
    or an agent's own event name (profiles written for Claude Code name its
    events: UserPromptSubmit, PostToolUse ...) in the engine's words; None
    for a name no agent has."""
    from .spec import NEUTRAL_EVENTS

    if name in NEUTRAL_EVENTS:
        return name
    for data in agents().values():
        found = data["events"].get(name)
        if found:
            return found
    return None
