"""Tool memory: failed tool calls remembered across sessions.

The hooks record failures (handlers tool_memory_record and tool_memory_scan)
and show the relevant ones before a tool is used (tool_memory_banner); the
CLI lists and clears them (`engine memory`).  Python API:

- `store_path(hooks_settings)`: the store file of a profile's hooks settings;
- `entries(hooks_settings, tool=None, session=None, project=None)`: merged
  entries, newest first (what `engine session report` reads for a session);
- `clear(hooks_settings, tool=None)`: forget them, returns how many.
"""


def store_path(hooks):
    from .store import store_path as _path

    return _path(hooks["memory"])


def entries(hooks, tool=None, session=None, project=None):
    from .store import entries as _entries

    return _entries(store_path(hooks), tool=tool, session=session, project=project,
                    examples_kept=hooks["memory"].get("examples_kept"))


def clear(hooks, tool=None):
    from .store import clear as _clear

    return _clear(store_path(hooks), tool)


def remember(hooks, records):
    """Append records (already redacted, see record.build) to the store."""
    from .store import append

    memory = hooks["memory"]
    append(store_path(hooks), records, memory["max_kept"], memory["compact_bytes"], memory["sessions_kept"],
           memory.get("examples_kept"))


__all__ = ["store_path", "entries", "clear", "remember"]
