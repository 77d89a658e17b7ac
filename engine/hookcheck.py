"""Semantic checks of a profile's `hooks` after extends are merged: every
handler complete for its kind, templates valid with known variables, levels
that exist, reinject targets that are refresh handlers."""

from pathlib import Path

from .errors import UserError, ValidationErrors

DEFAULTS_REQUIRED = ("scope", "max_injection_chars", "install_timeout_seconds", "install_backups_kept", "state", "events")
STATE_REQUIRED = ("redis_url", "ttl_hours", "connect_timeout_ms")


def check_hooks(resolved):
    hooks = resolved.hooks
    if not hooks:
        return
    errors = []
    missing = [k for k in DEFAULTS_REQUIRED if k not in hooks] + [
        f"state.{k}" for k in STATE_REQUIRED if k not in hooks.get("state", {})
    ]
    if missing:
        errors.append(UserError(f"hooks: set {', '.join(missing)} here or extend a profile that does", resolved.file, 1, 1))
    names = {h["name"]: h for hs in hooks.get("events", {}).values() for h in hs}
    for event, handlers in hooks.get("events", {}).items():
        for h in handlers:
            if h.get("enabled", True) is False:
                continue
            errors.extend(_check_handler(resolved, h, names))
    if errors:
        raise ValidationErrors(errors)


def _where(resolved, name, *path):
    doc, base = resolved.hook_origins[name]
    return doc, base + path


def _err(resolved, name, message, *path):
    doc, p = _where(resolved, name, *path)
    return doc.error(message, p)


def _check_handler(resolved, h, names):
    import jsonschema

    from .schema import _validator

    name = h["name"]
    schema = _validator("profile").schema["$defs"]["complete_handler"]
    problems = list(jsonschema.Draft202012Validator(schema).iter_errors(h))
    if problems:
        kind = h.get("kind", "?")
        return [_err(resolved, name, f"handler {name!r} (kind {kind}) is incomplete after merging the profiles: "
                                     f"{_missing(h)}; add them or extend a profile that has them")]
    errors = []
    if h["kind"] in ("rule_refresh", "file_refresh"):
        from .hooks.banner import VARIABLES, check

        for key, allowed in (("template", VARIABLES["refresh"]), ("omitted_template", VARIABLES["omitted"])):
            for line, msg in check(h[key], allowed):
                doc, p = _where(resolved, name)
                if key in _own_keys(resolved, name):
                    errors.append(UserError(f"{key}: {msg}", doc.file, doc.text_line(p + (key,), line), 1))
                else:  # inherited template: point at the handler that inherits it
                    errors.append(doc.error(f"{key} (inherited): {msg}", p))
        errors.extend(_check_level(resolved, h))
    if h["kind"] == "reinject":
        for i, target in enumerate(h["handlers"]):
            t = names.get(target)
            if t is None or t.get("kind") not in ("rule_refresh", "file_refresh"):
                errors.append(_err(resolved, name, f"reinject names {target!r}, which is not a refresh handler of this profile", "handlers", i))
    return errors


def _own_keys(resolved, name):
    doc, p = resolved.hook_origins[name]
    node = doc.data
    for k in p:
        node = node[k]
    return set(node)


def _missing(h):
    from .schema import _validator

    for alt in _validator("profile").schema["$defs"]["complete_handler"]["oneOf"]:
        kinds = alt["properties"]["kind"].get("enum") or [alt["properties"]["kind"].get("const")]
        if h.get("kind") in kinds:
            return "missing " + ", ".join(k for k in alt["required"] if k not in h)
    return "missing kind"


def _check_level(resolved, h):
    from .documents import Library

    try:
        Library().locate(h["level"], "level", Path(resolved.hook_origins[h["name"]][0].file).parent,
                         _where(resolved, h["name"], "level") if "level" in _own_keys(resolved, h["name"]) else None)
    except UserError as exc:
        return [exc]
    return []
