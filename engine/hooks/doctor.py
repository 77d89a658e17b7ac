"""`engine doctor`: for each coding agent found on this machine, its version,
whether the engine's hooks are installed (user and project settings),
trusted by the agent, and firing, which mechanism each of the engine's
features uses with that agent, and what is missing.

Everything it says comes from the agent's YAML (pipelines/agents/), the
engine's settings (`doctor:` in pipelines/settings/engine.yaml) and files
it reads without changing them; the one process it starts is the agent's
own `--version`, bounded (versioncmd.py).  A problem in one check is
reported in that check, never raised."""

import os

from engine.base.errors import UserError

from . import agenttrust, compaction, detect, entries, firing, precedence, projectenv, settingsfile, versioncmd
from .install import edited_events, home_or_above, others_line, settings_path, todo
from .install import planted as planted_by
from .pluginstate import plugin_state

SCOPES = ("user", "project")


def settings():
    from engine.core.settings import plain

    return plain()["doctor"]


def active_hooks(profile_ref=None):
    """(hooks settings, why the active profile did not load or None): a
    profile named (--profile) that does not load is the user's error to
    fix, raised as any other; the active one that does not load gives way
    to the built-in's, and the report says why."""
    from engine.core.profile import load_profile

    if profile_ref:
        return load_profile(profile_ref).hooks, None
    try:
        return load_profile(None).hooks, None
    except UserError as exc:
        return load_profile("default").hooks, str(exc)


def doctor(cwd=None, names=None, profile_ref=None):
    """{"project": folder, "agents": [one report per agent]}: the agents
    named, else every agent found."""
    from .install import agent_named

    project = os.path.abspath(cwd or os.getcwd())
    agents = [agent_named(n) for n in names] if names else detect.found()
    from .install import installed_events

    (hooks, profile_error), conf = active_hooks(profile_ref), settings()
    return {"project": project, "profile_error": profile_error,
            "agents": [agent_report(a, project, installed_events(hooks, a), conf, hooks) for a in agents]}


def agent_report(agent, project, events, conf, hooks=None):
    command, home = detect.where(agent)
    version = versioncmd.ask(command, agent, conf["version_timeout_ms"], conf["version_max_bytes"],
                             conf["version_pattern"]) if command else None
    report = {
        "name": agent.name, "display": agent.data["display"], "command": command, "home": home,
        "version": version,
        "hooks": [scope_report(agent, scope, project, events) for scope in SCOPES],
        "plugin": plugin_state(agent, conf["plugin_name"], project),
        "firing": firing.report(agent, conf["recent_sessions"], conf["scan_bytes"]),
        "features": features(agent, version, conf),
        "project_variables": projectenv.named(agent, project),
        "wrapped": wrapped_commands(agent, project),
        "settings_decisions": [dict(d, line=precedence.line(agent, d)) for d in precedence.decisions(agent, project)],
    }
    report["missing"] = missing(agent, report)
    # the profile's context monitor thresholds the agent's own compaction never lets fire
    report["unreachable_thresholds"] = compaction.unreachable(agent, project, hooks) if hooks else None
    report["notes"] = [compaction.line(agent, report["unreachable_thresholds"])] if report["unreachable_thresholds"] \
        else []
    return report


def scope_report(agent, scope, project, events):
    """Installed (which events, which are missing), and trusted, for one scope."""
    out = {"scope": scope, "file": None, "installed": [], "not_installed": [], "named_for": [], "error": None,
           "trust": None, "switched_off": [], "projects_own": [], "edited": [], "twice": [], "foreign": [],
           "gone": []}
    if scope == "project" and home_or_above(project):  # its "project" settings are the user's own
        return dict(out, error="none: the working folder is your home folder or above it, not a project")
    try:
        path = settings_path(scope, project, agent)
    except UserError:
        return dict(out, error="none for this agent")
    out["file"] = str(path)
    try:
        data, _ = settingsfile.load(path, tuple(agent.data["install"]["container"][:-1]), rewrite=False,
                                    comments=agent.data["install"]["comments"])
    except UserError as exc:
        return dict(out, error=str(exc))
    out["switched_off"] = switched_off(agent, data)
    ours, out["projects_own"] = _not_planted(agent, scope, project, entries.ours(agent, data))
    ours, out["gone"] = _runnable(agent, ours)
    named = {(event, entries.named_agent(agent, handler)) for event, _, _, handler in ours}
    out["projects_own"] += [p for p in _not_planted(agent, scope, project, entries.edited(agent, data))[1]
                            if p not in out["projects_own"]]
    foreign, planted = _not_planted(agent, scope, project, entries.foreign(agent, data))
    out["projects_own"] += [p for p in planted if p not in out["projects_own"]]
    out["foreign"] = _foreign_programs(agent, foreign)
    out["edited"] = edited_events(agent, scope, project, data)
    out["twice"] = _twice_at(agent, ours, out["edited"])
    out["unisolated"] = _unisolated_at(agent, ours)
    present = {event for event, name in named if name == agent.name} | set(out["edited"])
    out["named_for"] = sorted({name for _, name in named} - {agent.name})
    wanted, _ = entries.plan(agent, events)
    out["installed"] = [name for _, name in wanted if name in present] + sorted(present - {n for _, n in wanted})
    out["not_installed"] = [name for _, name in wanted if name not in present]
    if named or out["edited"]:
        out["trust"] = agenttrust.check(agent, scope, project, path, data)
        out["todo"] = list(todo(agent, scope, project) + others_line(agent, scope, project))
    return out


def _runnable(agent, ours):
    """(the engine's hooks whose programs are there, [{"program", "events"}]
    of those whose program is not): a hook of a removed install runs
    nothing, and is not counted installed."""
    from .hookcmd import missing_program

    kept, gone = [], {}
    for item in ours:
        program = missing_program(entries.command_of(agent, item[3]))
        if program is None:
            kept.append(item)
        elif item[0] not in gone.setdefault(program, []):
            gone[program].append(item[0])
    return kept, [{"program": program, "events": events} for program, events in gone.items()]


def _foreign_programs(agent, found):
    """[{"program", "events"}] of the hooks of the engine's older shape that
    run another program of its name (entries.foreign), one per program."""
    from .hookcmd import foreign_program

    out = {}
    for event, _, _, handler in found:
        events = out.setdefault(foreign_program(entries.command_of(agent, handler)), [])
        if event not in events:
            events.append(event)
    return [{"program": program, "events": events} for program, events in out.items()]


def _unisolated_at(agent, ours):
    """The events where one of the engine's own hooks is still written as an
    earlier version wrote it, without -I (hookcmd.runs_unisolated)."""
    from .hookcmd import runs_unisolated

    out = []
    for event, _, _, handler in ours:
        if runs_unisolated(entries.command_of(agent, handler)) and event not in out:
            out.append(event)
    return out


def _twice_at(agent, ours, edited):
    """The events of `edited` where one of the engine's own hooks for this
    agent runs too: the engine runs twice at each."""
    own = {event for event, _, _, handler in ours if entries.named_agent(agent, handler) == agent.name}
    return [event for event in edited if event in own]


def _not_planted(agent, scope, project, found):
    """(the engine's hooks, the programs inside the project that hooks shaped
    as the engine's run): in a project's file, a command of the engine's
    shape may run a program the cloned repository holds (its own
    bin/engine-hook); that is no hook of the engine's, and trusting the
    folder for it runs the repository's program.  This engine's own
    programs (a clone of the engine with its .venv) are the engine's."""
    from engine.base.project import project_folder

    if scope != "project":
        return found, []
    root = os.path.realpath(project_folder(project))
    kept, planted = [], []
    for item in found:
        theirs = planted_by(entries.command_of(agent, item[3]), root)
        if theirs:
            planted += [p for p in theirs if p not in planted]
        else:
            kept.append(item)
    return kept, planted


def switched_off(agent, data):
    """What this settings file sets, of the agent's own, that stops the
    engine's hooks from running (install.switched_off): one line each.  A
    value several files set, where the agent declares which wins
    (install.settings_order), is said once for them all (precedence.py)."""
    import json

    out = []
    ordered = bool(agent.data["install"].get("settings_order"))
    for switch in agent.data["install"]["switched_off"]:
        if ordered and "value" in switch:
            continue
        value = data
        for key in switch["keys"]:
            value = value.get(key) if isinstance(value, dict) else None
        name = ".".join(switch["keys"])
        if "value" in switch and type(value) is type(switch["value"]) and value == switch["value"]:
            out.append(f"{name} is {json.dumps(value)}: {agent.data['display']} runs no hook at all, the engine's included")
        elif switch.get("names") and isinstance(value, list):
            ours = [v for v in value if isinstance(v, str) and entries.is_our_name(agent, v)]
            if ours:
                out.append(f"{name} turns off the engine's hooks {', '.join(ours)}: {agent.data['display']} runs "
                           "none of them")
    return out


KEPT = "{original."  # a value of the agent's own kept as it was, not the engine's


def mechanism(spec):
    """How an answer reaches the agent, from its template: the fields that
    carry the engine's text, and the fixed values beside them."""
    if spec.get("plain"):
        return "plain text on the hook's output"
    parts = []

    def walk(node, path):
        for key, value in node.items():
            where = f"{path}.{key}" if path else key
            if isinstance(value, dict):
                walk(value, where)
            elif isinstance(value, str) and value.startswith("{") and value != "{event}" and not value.startswith(KEPT):
                parts.append(where)
            elif not path and not isinstance(value, (dict, list)):
                parts.append(f"{where}={value}")

    if "template" in spec:  # none: the answer is plain text
        walk(spec["template"], "")
    if "decisions" in spec:  # the decisions it takes, where not all
        parts.append(f"only {', '.join(spec['decisions'])}")
    return ", ".join(parts)


def _version_tuple(text):
    try:
        return tuple(int(p) for p in str(text).split("."))
    except ValueError:
        return None


def features(agent, version, conf):
    """Per feature of the engine: the answer it rests on, by which mechanism
    and at which events, or why it does not work with this agent."""
    have = _version_tuple((version or {}).get("value"))
    out = []
    for feature in conf["features"]:
        spec = agent.answer(feature["answer"])
        row = {"name": feature["name"], "answer": feature["answer"], "what": feature["what"],
               "mechanism": None, "events": [], "note": None}
        if spec is None:
            if not feature.get("optional"):  # an optional one: the agent has no need of it
                out.append(dict(row, note=f"{agent.data['display']} has no such answer"))
            continue
        row.update(mechanism=mechanism(spec), events=list(agent.answer_events(feature["answer"])))
        row["note"] = _version_note(spec, have)
        out.append(row)
    return out


def wrapped_commands(agent, project):
    """For an agent that cuts a large shell output (or a failed call's)
    before its hook sees it, the content cache's listed commands split by
    whether its permission rules prove they run without asking: only those
    go through the wrapper, which keeps their output whole.  None for
    another agent, or where the content cache settings cannot be read."""
    from engine.agents.permissions import runs_without_asking
    from engine.ccm import config
    from engine.ccm.intercept import cuts_before_the_hook

    if not cuts_before_the_hook(agent) or "permissions" not in agent.data:
        return None
    try:
        commands = config.load()["intercept"]["bash"]["commands"]
    except UserError:
        return None
    environ = dict(os.environ, **{agent.data["permissions"]["project_env"]: project})
    allowed = [c for c in commands if runs_without_asking(agent, c, "rules", environ) == "yes"]
    return {"allowed": allowed, "not_allowed": [c for c in commands if c not in allowed]}


def _wrapped_line(agent, wrapped):
    """What the user may do so a (failing) command's large output is kept."""
    from engine.agents.permissions import allow_rule
    from engine.ccm.intercept import cuts_only_failures

    if not wrapped or not wrapped["not_allowed"]:
        return []
    what = "a failing command's large output" if cuts_only_failures(agent) else "a large shell output"
    only = f"only {', '.join(wrapped['allowed'])}" if wrapped["allowed"] else "none"
    return [f"{agent.data['display']} cuts {what} before the engine sees it: your permission rules let {only} of the "
            f"commands the content cache lists (intercept.bash.commands) run through its cache, which keeps the "
            f"output whole; not {', '.join(wrapped['not_allowed'])}: allow those you run (a rule such as "
            f"{allow_rule(agent, wrapped['not_allowed'][-1])})"]


def _version_note(spec, have):
    since = _version_tuple(spec.get("since")) if spec.get("since") else None
    if since and have and have < since:
        return f"needs version {spec['since']} or later"
    for broken in spec["broken"]:
        low, high = _version_tuple(broken["from"]), _version_tuple(broken["to"])
        if have and low and high and low <= have <= high:
            return f"broken in this version: {broken['why']}"
    return None


def _not_installed(agent, fired):
    """The line for an agent whose settings hold none of the engine's hooks.
    Where the engine still answered in its recent sessions, its hooks come
    another way (a plugin, an extension), where an install as well would run
    every event twice, or were taken out since: the line says both."""
    install = f"engine install --agent {agent.name} --user (or --project)"
    if fired["answered"]:
        return (f"no hooks of engine install, yet the engine answered in {fired['answered']} of the last "
                f"{fired['sessions']} session(s): from a plugin or an extension (then engine install as well "
                f"would run every event twice), or taken out since (then {install})")
    return f"no hooks installed: {install}"


def _twice(agent, plugin, installed):
    """The line for an agent whose plugin is on and whose settings hold
    engine install's hooks too: it runs both for every event."""
    files = ", ".join(s["file"] for s in installed)
    scopes = " and ".join(f"--{s['scope']}" for s in installed)
    return (f"the engine's plugin is on ({plugin['file']}) and engine install's hooks are in {files}: every event "
            f"runs twice; keep one (engine uninstall --agent {agent.name} {scopes}, or turn the plugin off)")


def _named_for_another(agent, scope):
    """The line for the engine's hooks in this agent's file that name another
    agent (copied from that agent's settings): this agent runs them, and the
    engine stays out of such a run."""
    return (f"{scope['scope']} hooks name {', '.join(scope['named_for'])}, not {agent.name} (copied from that "
            f"agent's settings): the engine does nothing there; engine install --agent {agent.name} "
            f"--{scope['scope']} puts this agent's own in their place")


def _edited_twice(agent, scope):
    """The line for events where the user's edit of the engine's hook runs beside the engine's own."""
    return (f"{scope['file']}: at {', '.join(scope['twice'])} a hook of the engine's command, edited (not as engine "
            "install writes it), runs beside the engine's own: the engine runs twice at each of these events; keep "
            f"one: remove the edited entry (or the engine's own: engine uninstall --agent {agent.name} "
            f"--{scope['scope']} takes out only those, and engine install then adds none where yours runs)")


def _foreign_line(scope, found):
    """The line for hooks shaped as the engine's older command whose program is another of its name."""
    return (f"{scope['file']}: at {', '.join(found['events'])} a hook runs {found['program']}, a program named as "
            "the engine's but not this engine's (not the script engine install writes, nor one an install of this "
            "engine lists in its RECORD): another tool's hook, not counted as installed; engine install and "
            "uninstall leave it as it is")


def _gone_line(agent, scope, gone):
    """The line for the engine's hooks whose program is not there."""
    return (f"{scope['file']}: at {', '.join(gone['events'])} a hook of the engine's shape runs {gone['program']}, "
            "which is not there (an install since removed): it runs nothing, and a file put at that path would run "
            f"in the engine's place; not counted as installed: engine install --agent {agent.name} "
            f"--{scope['scope']} writes the engine's own (engine uninstall takes such entries out)")


def _unisolated_line(agent, scope):
    """The line for the engine's hooks still written as an earlier version wrote them, without -I."""
    return (f"{scope['file']}: at {', '.join(scope['unisolated'])} the engine's hook is written as an earlier "
            "version wrote it, without -I: run in a project's folder, its Python may import the project's own "
            "code first (a folder named engine/, a PYTHONPATH the project's settings set); "
            f"engine install --agent {agent.name} --{scope['scope']} writes it isolated")


def missing(agent, report):
    """What stands between the user and the engine working with this agent, one line each."""
    out = []
    version = report["version"]
    if not report["command"]:
        out.append(f"its command ({', '.join(agent.data['commands'])}) is not on the PATH: version unknown")
    if version and version["error"]:
        out.append(f"version: {version['error']}")
    installed = [s for s in report["hooks"] if s["installed"]]
    fired = report["firing"]
    plugin = report.get("plugin") or {}
    if plugin.get("on") and installed:
        out.append(_twice(agent, plugin, installed))
    elif not installed and not plugin.get("on"):
        out.append(_not_installed(agent, fired))
    out += [_named_for_another(agent, s) for s in report["hooks"] if s.get("named_for")]
    for s in installed:
        if s["not_installed"]:
            out.append(f"{s['scope']} hooks lack {', '.join(s['not_installed'])}: run engine install again")
        if s["trust"] and s["trust"]["state"] not in ("trusted", "not needed"):
            out.append(" ".join([f"{s['scope']} hooks not trusted ({s['trust']['why']}).", *(s.get("todo") or ())]))
    out += [f"{s['scope']} settings: {s['error']}" for s in report["hooks"] if s["error"] and s["file"]]
    out += [f"{s['file']}: {line} (your setting: change it to run them)" for s in report["hooks"]
            for line in s.get("switched_off") or ()]
    out += [f"{d['line']} (your setting: change it to run them)" for d in report.get("settings_decisions") or ()
            if d["off"]]
    out += [_edited_twice(agent, s) for s in report["hooks"] if s.get("twice")]
    out += [f"{s['file']}: hooks shaped as the engine's run {', '.join(s['projects_own'])}, a program inside the "
            "project, not this engine's: not counted as installed; unless you put it there, it is the repository's, "
            "do not trust the folder for it" for s in report["hooks"] if s.get("projects_own")]
    out += [_foreign_line(s, f) for s in report["hooks"] for f in s.get("foreign") or ()]
    out += [_unisolated_line(agent, s) for s in report["hooks"] if s.get("unisolated")]
    out += [_gone_line(agent, s, g) for s in report["hooks"] for g in s.get("gone") or ()]
    if installed and fired["sessions"] and not fired["answered"]:
        out.append(f"no record of the engine answering in the last {fired['sessions']} session(s)")
    out += [f"{f['name']}: {f['note']}" for f in report["features"] if f["note"]]
    out += _wrapped_line(agent, report["wrapped"])
    named = report["project_variables"]
    if named is None or named:
        which = ", ".join(named) if named else "a file too large to look into, so any of the engine's variables"
        out.append(f"this project's agent settings set {which} for the hooks: ignored, as the project's, not yours "
                   "(choose a project's profile with engine trust)")
    return out
