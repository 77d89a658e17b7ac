"""Which of an agent's settings files decides a setting that switches its
hooks off (install.switched_off with a `value`) where the agent merges
several files (install.settings_order, lowest first: the last file that
sets it wins), for engine doctor: a `hooksConfig.enabled: false` in
Gemini CLI's user file is overridden by the project's or the system's
`true`, and a `false` in the system file wins over every other.

Each file is read as doctor reads the hook settings (settingsfile.load,
never written); one that cannot be read is said, and counts as not
setting it.  A file read only in a trusted folder (`trusted_only`) counts
only when the agent's own record says the folder is trusted."""

import json
import os

from engine.base.errors import UserError

from . import agenttrust, settingsfile


def decisions(agent, project):
    """One decision per value switch that some file of the agent's order sets
    (decide); none for an agent that declares no order."""
    order = agent.data["install"].get("settings_order") or ()
    if not order:
        return []
    files = _files(agent, order, project)
    switches = [s for s in agent.data["install"]["switched_off"] if "value" in s]
    return [d for d in (decide(agent, files, s) for s in switches) if d is not None]


def _files(agent, order, project):
    """[{"name", "file", "data", "counted", "why"}] in the agent's order."""
    own = {e["name"]: _own_path(e) for e in order if "file" in e and "beside" not in e}
    out = []
    for entry in order:
        path = _path(agent, entry, project, own)
        item = {"name": entry["name"], "file": path, "data": None, "counted": True, "why": None}
        if path is None:
            item.update(counted=False, why="none here: the working folder is your home folder or above it")
        else:
            item["data"], item["why"] = _load(agent, path)
        if path is not None and entry.get("trusted_only"):
            trust = agenttrust.check(agent, entry.get("scope", "project"), project, path, item["data"] or {})
            if trust["state"] not in ("trusted", "not needed"):
                item.update(counted=False, why=f"not read: {trust['why']}")
        out.append(item)
    return out


def _own_path(entry):
    return os.environ.get(entry["env"]) or entry["file"] if entry.get("env") else entry["file"]


def _path(agent, entry, project, own):
    """The file of one entry of the order (None: no project's file here)."""
    from .install import home_or_above, settings_path

    if "scope" in entry:
        if entry["scope"] == "project" and home_or_above(project):
            return None
        return str(settings_path(entry["scope"], project, agent))
    if entry.get("env") and os.environ.get(entry["env"]):
        return os.environ[entry["env"]]
    if "beside" in entry:
        return os.path.join(os.path.dirname(own[entry["beside"]]), entry["file"])
    return agent.expand(entry["file"], project)


def _load(agent, path):
    """(data or None, why it was not read or None)."""
    try:
        data, raw = settingsfile.load(path, tuple(agent.data["install"]["container"][:-1]), rewrite=False,
                                      comments=agent.data["install"]["comments"])
    except UserError as exc:
        return None, str(exc)
    return (data if raw is not None else None), None


def _value(data, keys):
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return _UNSET
        data = data[key]
    return data


_UNSET = object()


def decide(agent, files, switch):
    """{"setting", "sets": [{"name", "file", "value", "counted", "why"}]
    highest first, "wins": the file that decides, "off": bool}, or None
    when no file sets the setting (the agent's default: hooks on)."""
    sets = []
    for item in reversed(files):
        value = _value(item["data"], switch["keys"])
        if value is not _UNSET:
            sets.append({"name": item["name"], "file": item["file"], "value": value, "counted": item["counted"],
                         "why": item["why"]})
    if not sets:
        return None
    wins = next((s for s in sets if s["counted"]), None)
    off = wins is not None and type(wins["value"]) is type(switch["value"]) and wins["value"] == switch["value"]
    return {"setting": ".".join(switch["keys"]), "sets": sets, "wins": wins and wins["file"], "off": off}


def line(agent, decision):
    """What the decision means, in one line: which file wins, and whether the hooks run."""
    order = ", then ".join(e["name"] for e in reversed(agent.data["install"]["settings_order"]))
    said = "; ".join(f"{json.dumps(s['value'])} in {s['file']} ({s['name']}"
                     + (f"; {s['why']}" if not s["counted"] else "") + ")" for s in decision["sets"])
    wins = next((s for s in decision["sets"] if s["file"] == decision["wins"]), None)
    head = f"{decision['setting']}: {said}"
    if wins is None:
        return f"{head}: none of them counts, so hooks are on (the default)"
    state = (f"hooks are off: {agent.data['display']} runs no hook at all, the engine's included"
             if decision["off"] else "hooks are on")
    return f"{head}: {wins['file']} ({wins['name']}) wins ({agent.data['display']} reads {order}, the first that " \
           f"sets it deciding): {state}"


def deciding(agent, project, keys):
    """(value, file) of the settings file whose value of `keys` the agent
    takes, or None when none of its files sets it: in the agent's order
    (install.settings_order) the last counted file that sets it, else the
    project's file over the user's (Claude Code's precedence)."""
    order = agent.data["install"].get("settings_order")
    if order:
        decision = decide(agent, _files(agent, order, project), {"keys": keys, "value": _UNSET})
        wins = decision and next((s for s in decision["sets"] if s["file"] == decision["wins"]), None)
        return (wins["value"], wins["file"]) if wins else None
    for scope in ("project", "user"):
        try:
            path = _path(agent, {"scope": scope}, project, {})
        except UserError:  # the agent has no such file
            continue
        value = _value(_load(agent, path)[0] if path else None, keys)
        if value is not _UNSET:
            return value, path
    return None
