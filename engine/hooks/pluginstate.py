"""Whether an agent has the engine's plugin (or extension) on, from where the
agent records it (`install.plugin` of its YAML, measured): for `engine
doctor`, which then asks for no `engine install` where the plugin answers,
and says when both would run every event; and for `engine install
--detect`, which leaves such an agent as it is.  Only the user's own files
are read (the agent's home folder), each bounded."""

import os

from .agenttrust import read_json, read_toml, value_at


def plugin_state(agent, name, project):
    """{"file": where the agent records it (the record that says on, else the
    first), "on": bool, "why": None or why a record could not be read}; None
    for an agent with no such record.  `project`: the folder an install for
    one project must name."""
    records = agent.data["install"].get("plugin")
    if not records:
        return None
    states = [_one(agent, spec, name, project) for spec in records]
    on = [s for s in states if s["on"]]
    return on[0] if on else next((s for s in states if s["why"]), states[0])


def _one(agent, spec, name, project):
    path = agent.expand(spec["file"].replace("{name}", name))
    if spec["format"] == "folder":
        return {"file": path, "on": os.path.isdir(path), "why": None}
    if not os.path.exists(path):
        return {"file": path, "on": False, "why": None}
    data, why = (read_toml if spec["format"] == "toml" else read_json)(path)
    table = value_at(data, spec["table"]) if isinstance(data, dict) else None
    if not isinstance(table, dict):
        return {"file": path, "on": False, "why": why}
    entries = [entry for key, entry in table.items() if isinstance(key, str) and key.split("@", 1)[0] == name]
    return {"file": path, "on": any(_on(entry, spec, project) for entry in entries), "why": None}


def _on(entry, spec, project):
    """An entry says on: its value (or its `enabled` key) is true; with a
    `project_key`, one of its installs names `project`."""
    if spec.get("project_key"):
        here = os.path.realpath(project)
        return isinstance(entry, list) and any(
            isinstance(one, dict) and isinstance(one.get(spec["project_key"]), str)
            and os.path.realpath(one[spec["project_key"]]) == here for one in entry)
    value = entry.get(spec["enabled"]) if spec.get("enabled") and isinstance(entry, dict) else entry
    return value is True
