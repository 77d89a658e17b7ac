"""Which of the context monitor's thresholds an agent's own compaction never
lets fire, for engine doctor.  The agent compacts where its YAML says
(context.compaction: by default, and the user's setting that moves it,
read from the agent's settings files without changing them); a threshold
at or past that point is never crossed before the context shrinks.  A
diagnosis only: the monitor itself is not changed."""

from .agenttrust import read_json, read_toml, value_at
from .precedence import deciding


def monitors(hooks, agent):
    """[{"event", "name", "thresholds"}] of the profile's context monitors
    that run at events this agent sends."""
    sent = set(agent.data["events"].values())
    return [{"event": event, "name": h["name"], "thresholds": list(h["thresholds"])}
            for event, handlers in hooks["events"].items() if event in sent
            for h in handlers if h.get("kind") == "context_monitor" and h.get("enabled", True)]


def _default_tokens(spec, window):
    if "fraction" in spec:
        return int(spec["fraction"] * window)
    if "tokens" in spec:
        return spec["tokens"]
    return window - spec["tokens_before_window"]


def _number(value):
    """A setting's value as a number (an environment variable's is text), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _setting_tokens(setting, value, window):
    """Where the setting's value makes the agent compact, in tokens; None
    where the agent ignores the value (not above 0, a percent above 100)."""
    number = _number(value)
    if number is None or number <= 0 or (setting["unit"] == "percent" and number > 100):
        return None
    if setting["unit"] == "tokens":
        return int(number)
    share = number / 100 if setting["unit"] == "percent" else number
    return int((window - setting["of_tokens_before_window"]) * share)


def _user_setting(agent, setting, project):
    """(value, file) of the user's setting, or None where no file sets it."""
    if "file" not in setting:
        return deciding(agent, project, setting["keys"])
    path = agent.expand(setting["file"], project)
    data, _ = (read_toml if setting.get("format") == "toml" else read_json)(path)
    value = value_at(data, setting["keys"]) if isinstance(data, dict) else None
    return (value, path) if value is not None else None


def compaction_point(agent, project):
    """{"tokens", "pct", "window", "setting", "value", "file", "lowers_only"}:
    where the agent compacts (value and file: the user's setting that moved
    it, else None), or None where its YAML does not say."""
    conf = agent.data["context"]
    spec = conf.get("compaction")
    if not spec:
        return None
    window = conf["window_tokens"]
    tokens = _default_tokens(spec, window)
    point = {"window": window, "setting": None, "value": None, "file": None, "lowers_only": False}
    setting = spec.get("setting")
    if setting:
        point.update(setting=".".join(setting["keys"]), lowers_only=setting["lowers_only"])
        found = _user_setting(agent, setting, project)
        moved = found and _setting_tokens(setting, found[0], window)
        if moved and not (point["lowers_only"] and moved >= tokens):
            tokens = moved
            point.update(value=found[0], file=found[1])
    return dict(point, tokens=tokens, pct=round(tokens * 100 / window, 1))


def unreachable(agent, project, hooks):
    """The compaction point with "monitors": those of the profile's context
    monitors with thresholds at or past it, each with those thresholds
    only; None when every threshold can fire (or the point is not known,
    or the agent compacts beside the turn, its context growing on)."""
    point = compaction_point(agent, project)
    if point is None or agent.data["transcript"].get("compacts_in_background"):
        return None  # unknown, or the context grows past the point until the summary comes
    found = [dict(m, thresholds=[t for t in m["thresholds"] if t >= point["pct"]]) for m in monitors(hooks, agent)]
    found = [m for m in found if m["thresholds"]]
    return dict(point, monitors=found) if found else None


def _pct(value):
    return f"{value:g}%"


def line(agent, found):
    """What the user reads: the thresholds that never fire, where the agent
    compacts and why, and what to do."""
    name = agent.data["display"]
    thresholds = sorted({t for m in found["monitors"] for t in m["thresholds"]})
    if found["file"]:
        why = f"{found['setting']} {found['value']} in {found['file']}"
    else:
        why = "its default" + (f"; {found['setting']} not set" if found["setting"] else "")
    keys = ", ".join(f"hooks.events.{m['event']} {m['name']}" for m in found["monitors"])
    head = (f"context monitor threshold(s) {', '.join(map(_pct, thresholds))} can never fire: {name} compacts its "
            f"context at {found['tokens']:,} of {found['window']:,} tokens ({_pct(found['pct'])}, {why}); "
            f"lower them below {_pct(found['pct'])} in your profile (`thresholds` of {keys})")
    if not found["setting"]:
        return head
    if found["lowers_only"]:
        return f"{head} ({found['setting']} can only make it compact earlier)"
    return f"{head}, or raise {found['setting']} in {name}'s settings"
