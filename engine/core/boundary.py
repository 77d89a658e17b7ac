"""The trust boundary: what an approved project profile may set.

A project profile shapes text from its project (levels, protect categories,
dictionaries, templates, cadences); it never configures the user's machine.
The profile schema says which keys a project may set (`"x-project": true`);
every other key is machine-level (a path outside the project, a host or URL,
a deadline, timeout, TTL or size bound, install settings) and is taken from
the user's own resolved profile, whatever the project wrote.  A key nobody
marked is machine-level: a new setting is safe until someone decides
otherwise.

Handlers follow the same rule field by field: a project handler's
machine-level fields (compact_instructions' `file`, a scan's byte bounds)
come from the user's handler of the same name, else of the same kind, else
they are dropped.  A handler the user switched off stays off, and a handler
`level` that is a path outside the project is replaced like a machine key.

Called once, from engine/core/profile.py resolve, for a project profile only.
"""

import copy
import json
import os

from engine.base.paths import builtin_dir, inside

MARK = "x-project"


def _schema():
    with open(builtin_dir("schemas") / "profile.schema.json", encoding="utf-8") as fh:
        return json.load(fh)


def _marked(node):
    return isinstance(node, dict) and node.get(MARK) is True


def _has_mark(node):
    """True when the node or something below it is project-settable."""
    if _marked(node):
        return True
    props = node.get("properties") if isinstance(node, dict) else None
    return bool(props) and any(_has_mark(v) for v in props.values())


def _merge(project, own, node):
    """The value of one key: the project's where the schema marks it, the
    user's elsewhere (_ABSENT: the key is left out)."""
    if _marked(node):
        return project
    props = node.get("properties") if isinstance(node, dict) else None
    if props and _has_mark(node) and isinstance(project, dict):
        out = {}
        mine = own if isinstance(own, dict) else {}
        for key in dict.fromkeys([*project, *mine]):
            value = _merge(project.get(key, _ABSENT), mine.get(key, _ABSENT), props.get(key, {}))
            if value is not _ABSENT:
                out[key] = value
        return out
    return copy.deepcopy(own)


_ABSENT = object()


def _machine_paths(data, node, prefix):
    """Dotted names of the machine-level keys present in `data`."""
    out = []
    if not isinstance(data, dict):
        return out
    props = node.get("properties", {}) if isinstance(node, dict) else {}
    for key, value in data.items():
        sub = props.get(key, {})
        if _marked(sub):
            continue
        if _has_mark(sub):
            out.extend(_machine_paths(value, sub, f"{prefix}{key}."))
        else:
            out.append(f"{prefix}{key}")
    return out


def _handlers(hooks):
    return [h for hs in hooks.get("events", {}).values() for h in hs]


def _counterpart(h, own_handlers):
    by_name = [x for x in own_handlers if x["name"] == h["name"]]
    if by_name:
        return by_name[0]
    kind = h.get("kind")
    return next((x for x in own_handlers if x.get("kind") == kind), None)


def bound(project, own, project_docs, root):
    """Apply the boundary to `project` (a Resolved) in place, with `own` the
    user's resolved profile; returns the dotted names of the machine-level
    keys the project documents set (ignored)."""
    schema = _schema()
    ignored = _set_by_project(project_docs, schema)
    _own_scalars(project, own, schema["properties"])
    _own_hooks_settings(project.hooks, own.hooks, schema["properties"]["hooks"]["properties"])
    own_handlers = _handlers(own.hooks)
    fields = schema["$defs"]["handler"]["properties"]
    for h in _handlers(project.hooks):
        other = _counterpart(h, own_handlers) or {}
        _own_handler_fields(h, other, fields)
        if _level_outside(h, root):
            ignored.append(f"hooks.events.{h['name']}.level")
            if "level" in other:
                h["level"] = other["level"]
            else:
                h["level"] = own.settings["level"]  # resolved: every scalar is set, or resolve_profile raised
    return list(dict.fromkeys(ignored))


def _set_by_project(project_docs, schema):
    """Dotted names of the machine-level keys the project documents set:
    at the top, in hooks, and in each handler."""
    top = schema["properties"]
    handler_node = schema["$defs"]["handler"]
    ignored = []
    for doc in project_docs:
        data = doc.data if isinstance(doc.data, dict) else {}
        ignored.extend(_machine_paths({k: v for k, v in data.items() if k != "hooks"}, {"properties": top}, ""))
        hooks = data.get("hooks") if isinstance(data.get("hooks"), dict) else {}
        ignored.extend(_machine_paths({k: v for k, v in hooks.items() if k != "events"}, top["hooks"], "hooks."))
        for event, hs in (hooks.get("events") or {}).items():
            for h in hs or ():
                if isinstance(h, dict):
                    ignored.extend(_machine_paths(h, handler_node, f"hooks.events.{event}.{h.get('name')}."))
    return ignored


def _own_scalars(project, own, top):
    """The scalar settings the project may not set: the user's (or none)."""
    from .resolve import SCALARS

    for key in SCALARS:
        if _marked(top.get(key)):
            continue
        if key in own.settings:
            project.settings[key] = copy.deepcopy(own.settings[key])
            if key in own.setting_origins:
                project.setting_origins[key] = own.setting_origins[key]
        else:
            project.settings.pop(key, None)
            project.setting_origins.pop(key, None)


def _merge_keys(target, other, props, skip):
    """`target` merged key by key with `other` (_merge, each key's schema in
    `props`), in place; the keys in `skip` are left as they are."""
    for key in dict.fromkeys([*target, *other]):
        if key in skip:
            continue
        value = _merge(target.get(key, _ABSENT), other.get(key, _ABSENT), props.get(key, {}))
        if value is _ABSENT:
            target.pop(key, None)
        else:
            target[key] = value


def _own_hooks_settings(hooks, mine, hook_props):
    """The hooks settings other than events, merged key by key (_merge)."""
    _merge_keys(hooks, mine, hook_props, ("events",))


def _own_handler_fields(h, other, fields):
    """A project handler `h`, field by field with its counterpart `other`
    in the user's profile; a project may switch a handler off, not on again."""
    _merge_keys(h, other, fields, ("name", "kind"))
    if other.get("enabled", True) is False and other.get("name") == h["name"]:
        h["enabled"] = False


def _level_outside(h, root):
    """True when handler `h` names a level file whose real path leaves the project `root`."""
    from engine.base.refs import is_path

    level = h.get("level")
    if not (isinstance(level, str) and is_path(level) and root):
        return False
    real = os.path.realpath(os.path.expanduser(level))
    if not os.path.isabs(os.path.expanduser(level)):
        real = os.path.realpath(os.path.join(root, level))
    return not inside(real, root)
