"""The engine's hook entries in one agent's settings, as that agent's YAML
declares them (`install:` in pipelines/agents/NAME.yaml): where an event's
list of hook groups sits (`container`), what one group looks like (`group`,
a template), which events take a matcher (and any other key of a group's
own: `group_keys`), the timeout's unit, and whether the command names its
event.

Which events: the profile's (its hooks.events keys, neutral names or
an agent's own, which stay accepted), each mapped through the agent's own
`events` table; an event the agent lacks is skipped, and said.

Ours are exactly the handlers whose keys are the template's, whose fixed
values are the template's, and whose command is one hook_command writes
(hookcmd.parse) running this engine (hookcmd.runs_this_engine: an older
`/abs/engine hook` of another tool's `engine` is that tool's): removing
them never touches a hook of the user's, even one that shares a group
with ours."""

from engine.agents.answer import fill

from . import hookcmd


def neutral_of(profile_event):
    """The neutral name of a profile's event key (a neutral name, or an
    agent's own name of it), or None."""
    from engine.agents.table import neutral_name

    return neutral_name(profile_event)


def plan(agent, profile_events):
    """([(neutral, the agent's event name)], [profile events it lacks]) in
    the profile's order, each of the agent's events once."""
    wanted, skipped, seen = [], [], set()
    for key in profile_events:
        neutral = neutral_of(key)
        names = agent.agent_events(neutral) if neutral else []
        if not names:
            skipped.append(key)
        for name in names:
            if name not in seen:
                seen.add(name)
                wanted.append((neutral, name))
    return wanted, skipped


def _spec(agent):
    return agent.data["install"]


def group_for(agent, neutral, event, command, timeout_s):
    """One group of ours for the agent's `event`, filled in."""
    spec = _spec(agent)
    timeout = int(timeout_s * 1000) if spec.get("timeout_unit") == "ms" else int(timeout_s)
    group = fill(spec["group"], {"command": command, "timeout": timeout, "event": event})
    matcher = spec.get("matcher")
    if matcher and neutral in matcher["events"]:
        group = {matcher["key"]: matcher["value"], **group}
    for extra in spec["group_keys"]:
        if neutral in extra["events"]:
            group[extra["key"]] = extra["value"]
    return group


def _group_own_keys(agent, matcher):
    """The keys a group that holds only our hook may have besides its list."""
    return {matcher, *(extra["key"] for extra in _spec(agent)["group_keys"])}


def handler_key(template):
    """None when a group is itself the handler (its command at the top),
    else the key of the group's list of handlers."""
    if any(v == "{command}" for v in template.values()):
        return None
    for key, value in template.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            return key
    raise ValueError("the install group template names no {command}")


def _handler_template(template):
    key = handler_key(template)
    return template if key is None else template[key][0]


def is_ours(agent, handler):
    """A handler exactly as install writes it for this agent."""
    tpl = _handler_template(_spec(agent)["group"])
    if not isinstance(handler, dict) or set(handler) - set(tpl):
        return False
    for key, value in tpl.items():
        if value == "{command}":
            if not hookcmd.runs_this_engine(handler.get(key)):
                return False
        elif isinstance(value, str) and "{" not in value and handler.get(key) != value:
            return False
    return True


def is_our_name(agent, text):
    """A hook name the agent gives one of ours (install.switched_off's
    `names`): the name its template gives it at one of the agent's events,
    else, where it has none, its command."""
    tpl = _handler_template(_spec(agent)["group"])
    name = tpl.get("name")
    if not isinstance(name, str):
        return hookcmd.runs_this_engine(text)
    return any(fill(name, {"event": event}) == text for event in agent.data["events"])


def event_lists(agent, data):
    """The object holding {event: [groups]} in `data`, or None."""
    node = data
    for key in _spec(agent)["container"][:-1]:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node if isinstance(node, dict) else None


def add(agent, data, groups):
    """Append {event: group} to `data` (changed in place)."""
    node = data
    for key in _spec(agent)["container"][:-1]:
        node = node.setdefault(key, {})
    for event, group in groups:
        node.setdefault(event, []).append(group)


def without_ours(agent, data):
    """A deep copy of `data` without our handlers; a group that held only
    ours goes, an event list left empty by that goes, and so does the
    container when it held nothing else."""
    import json

    out = json.loads(json.dumps(data))
    lists = event_lists(agent, out)
    if lists is None:
        return out
    key = handler_key(_spec(agent)["group"])
    matcher = (_spec(agent).get("matcher") or {}).get("key")
    for event in list(lists):
        groups = lists[event]
        if not isinstance(groups, list):
            continue
        kept = [g for g in (_group_without_ours(agent, g, key, matcher) for g in groups) if g is not None]
        if kept or not groups:
            lists[event] = kept
        else:
            del lists[event]
    _drop_empty_container(agent, data, out)
    return out


def _group_without_ours(agent, group, key, matcher):
    if key is None:
        return None if is_ours(agent, group) else group
    if not (isinstance(group, dict) and isinstance(group.get(key), list)):
        return group
    inner = [h for h in group[key] if not is_ours(agent, h)]
    if len(inner) < len(group[key]) and not inner and set(group) <= {key, *_group_own_keys(agent, matcher)}:
        return None  # the group held only our hook
    return dict(group, **{key: inner})


def _drop_empty_container(agent, before, out):
    """The container's object goes when our removal left it empty (and it was not empty before)."""
    path = _spec(agent)["container"][:-1]
    if not path:
        return
    parent_out, parent_in = out, before
    for key in path[:-1]:
        parent_out, parent_in = parent_out.get(key), parent_in.get(key)
        if not isinstance(parent_out, dict) or not isinstance(parent_in, dict):
            return
    last = path[-1]
    if parent_out.get(last) == {} and parent_in.get(last):
        del parent_out[last]


def ours(agent, data):
    """[(event, group index, handler index, handler)] of our handlers in `data`."""
    return _handlers(agent, data, is_ours)


def edited(agent, data):
    """The same of the handlers that are edits of ours (is_edited)."""
    return _handlers(agent, data, is_edited)


def _handlers(agent, data, test):
    """[(event, group index, handler index, handler)] of the handlers in `data` that pass `test`."""
    lists = event_lists(agent, data) or {}
    key = handler_key(_spec(agent)["group"])
    found = []
    for event, groups in lists.items():
        for gi, group in enumerate(groups if isinstance(groups, list) else ()):
            handlers = [group] if key is None else (group.get(key) if isinstance(group, dict) else None)
            for hi, handler in enumerate(handlers if isinstance(handlers, list) else ()):
                if test(agent, handler):
                    found.append((event, gi, hi, handler))
    return found


def is_edited(agent, handler):
    """A handler with a command hook_command writes that is not exactly as
    install writes it (a key of the user's added, a fixed value changed):
    the user's edit of one of ours.  It runs the engine all the same, so a
    second one of ours beside it runs every event twice; it is the user's,
    never removed or rewritten (is_ours)."""
    return (isinstance(handler, dict) and not is_ours(agent, handler)
            and hookcmd.runs_this_engine(command_of(agent, handler)))


def foreign(agent, data):
    """[(event, group index, handler index, handler)] of the handlers whose
    command has the engine's older shape but runs another program of its
    name (hookcmd.foreign_program): another tool's hook, never ours."""
    return _handlers(agent, data, lambda a, h: isinstance(h, dict)
                     and hookcmd.foreign_program(command_of(a, h)) is not None)


def named_agent(agent, handler):
    """The agent one of the engine's hook commands names (the default agent
    when it names none)."""
    from engine.agents import DEFAULT_AGENT

    return (hookcmd.parse(command_of(agent, handler)) or {}).get("agent") or DEFAULT_AGENT


def command_of(agent, handler):
    tpl = _handler_template(_spec(agent)["group"])
    return next((handler.get(k) for k, v in tpl.items() if v == "{command}"), None)


def is_empty(agent, data):
    """Nothing left but what a new file starts with (`install.file`)."""
    start = _spec(agent).get("file") or {}
    return not data or data == start
