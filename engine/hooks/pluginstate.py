"""Whether an agent has the engine's plugin (or extension) on, from where the
agent records it (`install.plugin` of its YAML, measured): for `engine
doctor`, which then asks for no `engine install` where the plugin answers,
and says when both would run every event."""

import os

from .agenttrust import read_json, read_toml, value_at


def plugin_state(agent, name):
    """{"file": where the agent records it, "on": bool, "why": None or why
    it could not be read}; None for an agent with no such record."""
    spec = agent.data["install"].get("plugin")
    if not spec:
        return None
    path = agent.expand(spec["file"].replace("{name}", name))
    if spec["format"] == "folder":
        return {"file": path, "on": os.path.isdir(path), "why": None}
    if not os.path.exists(path):
        return {"file": path, "on": False, "why": None}
    data, why = (read_toml if spec["format"] == "toml" else read_json)(path)
    table = value_at(data, spec["table"]) if isinstance(data, dict) else None
    if not isinstance(table, dict):
        return {"file": path, "on": False, "why": why}
    return {"file": path, "on": any(_on(entry, spec.get("enabled")) for key, entry in table.items()
                                    if isinstance(key, str) and key.split("@", 1)[0] == name), "why": None}


def _on(entry, key):
    value = entry.get(key) if key and isinstance(entry, dict) else entry
    return value is True
