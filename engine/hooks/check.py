"""Semantic checks of a profile's `hooks` after extends are merged: every
handler complete for its kind, templates valid with known variables, levels
that exist, reinject targets that are refresh handlers."""

from pathlib import Path

from engine.base.errors import UserError, ValidationErrors

DEFAULTS_REQUIRED = ("scope", "max_injection_chars", "install_timeout_seconds", "install_backups_kept", "deadline_ms",
                     "kill_after_ms", "max_files", "max_compress_chars", "compress_share_of_deadline",
                     "compress_slowest_chars_per_s", "omitted_names_max", "templates", "transcript", "log", "trust",
                     "state", "events")
NESTED_REQUIRED = {"state": ("redis_url", "ttl_hours", "prune_every_minutes", "connect_timeout_ms", "call_timeout_ms"),
                   "templates": ("max_output_chars", "max_range_items"),
                   "transcript": ("max_tail_bytes",), "log": ("max_bytes",), "trust": ("allow_read", "vcs_metadata")}
# A refresh handler's templates and the variables each may use (banner.VARIABLES).
TEMPLATE_KEYS = (("template", "refresh"), ("omitted_template", "omitted"), ("pending_template", "omitted"),
                 ("digest_template", "digest"))
# Handlers of the built-in profile renamed since (a profile written for the
# old name changes nothing of the new one): old name -> new name.
RENAMED = {"claude_md": "instructions"}


def check_hooks(resolved):
    hooks = resolved.hooks
    if not hooks:
        return
    errors = []
    missing = [k for k in DEFAULTS_REQUIRED if k not in hooks] + [
        f"{group}.{k}" for group, keys in NESTED_REQUIRED.items() for k in keys if k not in hooks.get(group, {})
    ]
    from engine.core.compile import resolved_error

    from .ctxcheck import check_settings

    if missing:
        errors.append(resolved_error(resolved, f"hooks: set {', '.join(missing)} here or extend a profile that does",
                                     "hooks"))
    from .compiled import with_defaults
    from .handlers import events_of

    if "events" not in hooks:
        raise ValidationErrors(errors)  # events is missing: said above
    names = {h["name"]: with_defaults(h) for hs in hooks["events"].values() for h in hs}
    for event, handlers in events_of(hooks).items():
        for h in handlers:
            if h.get("enabled") is not False:
                errors.extend(_check_handler(resolved, event, h, names))
    if not missing:
        errors.extend(_check_limits(resolved, hooks, names))
    errors.extend(check_settings(resolved))
    if errors:
        raise ValidationErrors(errors)


def _check_limits(resolved, hooks, names):
    """Settings that cannot all be honoured: a deadline past the time the
    agent gives a hook."""
    from engine.core.compile import resolved_error

    errors = []
    install_ms = hooks["install_timeout_seconds"] * 1000
    if not hooks["deadline_ms"] < hooks["kill_after_ms"] < install_ms:
        errors.append(resolved_error(
            resolved,
            f"hooks: deadline_ms ({hooks['deadline_ms']}) < kill_after_ms ({hooks['kill_after_ms']}) < "
            f"install_timeout_seconds ({install_ms} ms) must hold, so a hook ends before the agent gives up on it",
            "hooks", "deadline_ms"))
    return errors


def _where(resolved, name, *path):
    doc, base = resolved.hook_origins[name]
    return doc, base + path


def _err(resolved, name, message, *path):
    doc, p = _where(resolved, name, *path)
    return doc.error(message, p)


def _check_handler(resolved, event, h, names):
    """One handler: complete after extends, on an event its kind takes, and
    what its kind checks (handlers/base.py: declared settings and templates,
    a kind's own checks)."""
    import jsonschema

    from engine.core.schema import _validator

    from .handlers import kind_class

    name = h["name"]
    schema = _validator("profile").schema["$defs"]["complete_handler"]
    problems = list(jsonschema.Draft202012Validator(schema).iter_errors(h))
    if problems:
        kind = h.get("kind", "?")
        hint = f" (the built-in {name!r} is now named {RENAMED[name]!r}: use that name)" if name in RENAMED else ""
        return [_err(resolved, name, f"handler {name!r} (kind {kind}) is incomplete after merging the profiles: "
                                     f"{_missing(h)}; add them or extend a profile that has them{hint}")]
    cls = kind_class(h["kind"])
    if event not in cls.events:
        return [_err(resolved, name, f"handler {name!r} (kind {h['kind']}) works only under "
                                     f"{' or '.join(cls.events)}, not {event}; move it there")]

    def err(message, *path):
        return _err(resolved, name, message, *(path if path and path[0] in _own_keys(resolved, name) else ()))

    return cls.check(resolved, names[name], names, err)


def refresh_problems(resolved, h):
    """A refresh handler's templates and level."""
    errors = []
    name = h["name"]
    from .banner import VARIABLES, check

    for key, group in TEMPLATE_KEYS:
        if key not in h:
            continue
        for line, msg in check(h[key], VARIABLES[group]):
            doc, p = _where(resolved, name)
            if key in _own_keys(resolved, name):
                errors.append(UserError(f"{key}: {msg}", doc.file, doc.text_line(p + (key,), line), 1))
            else:  # inherited template: point at the handler that inherits it
                errors.append(doc.error(f"{key} (inherited): {msg}", p))
    if not errors:
        errors.extend(_trial_render(resolved, h))
    errors.extend(_check_level(resolved, h))
    return errors


def _trial_render(resolved, h):
    """Render the templates once with sample values, under the limits and
    the deadline the hook has: a template that would fail there (a value too
    large, endless loops) fails here first."""
    from . import deadline as hook_deadline
    from .banner import trial
    from .plan import Item

    hooks = resolved.hooks
    if hook_deadline.IN_HOOK or not all(k in hooks for k in ("templates", "deadline_ms", "kill_after_ms")):
        return []  # a hook renders under the same limits and its own deadline anyway
    item = Item("sample.md", "/project/rules/sample.md", 5, 40, 30, "Sample rule text.", 30)
    counts = dict(omitted=["late.md"], omitted_count=3, omitted_more=2)
    values = dict(turn=20, event="prompt", handler=h["name"], level=h["level"], cwd="/project",
                  session_id="sample", source="", items=[item], omitted_line="[omitted]", **counts)
    digest = dict(handler=h["name"], turn=20, name="late.md", title="Late rule", path="rules/late.md",
                  priority=5, chars=4000)
    trials = (("template", values), ("omitted_template", dict(handler=h["name"], turn=20, **counts)),
              ("pending_template", dict(handler=h["name"], turn=20, **counts)), ("digest_template", digest))
    problems = [(key, trial(h[key], hooks, **vals)) for key, vals in trials if key in h]
    own = _own_keys(resolved, h["name"])
    return [_err(resolved, h["name"], f"{key}: {msg}", *((key,) if key in own else ()))
            for key, msg in problems if msg]


def _own_keys(resolved, name):
    doc, p = resolved.hook_origins[name]
    node = doc.data
    for k in p:
        node = node[k]
    return set(node)


def _missing(h):
    from engine.core.schema import _validator

    for alt in _validator("profile").schema["$defs"]["complete_handler"]["oneOf"]:
        kinds = alt["properties"]["kind"].get("enum") or [alt["properties"]["kind"].get("const")]
        if h.get("kind") in kinds:
            missing = [k for k in alt["required"] if k not in h]
            choices = [" or ".join(a["required"]) for a in alt.get("anyOf", ()) if not any(k in h for k in a["required"])]
            if alt.get("anyOf") and len(choices) == len(alt["anyOf"]):
                missing.append(" or ".join(choices))
            return "missing " + ", ".join(missing)
    return "missing kind"


def _check_level(resolved, h):
    from engine.core.documents import Library

    try:
        Library().locate(h["level"], "level", Path(resolved.hook_origins[h["name"]][0].file).parent,
                         _where(resolved, h["name"], "level") if "level" in _own_keys(resolved, h["name"]) else None)
    except UserError as exc:
        return [exc]
    return []
