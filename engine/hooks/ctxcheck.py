"""`engine validate` of the hooks settings the context-intelligence kinds
share: the regexes of `hooks.memory` compile and do not run away (once per
profile).  What each kind reads and renders is declared on its class
(handlers/base.py)."""


def check_settings(resolved):
    """The regexes of `hooks.memory`, once per profile (not per handler),
    each problem at its place in the profile's file where that file sets
    it (else at the nearest key it has: `memory:`, `hooks:`, its start)."""
    memory = resolved.hooks.get("memory")
    if not isinstance(memory, dict):
        return []

    from engine.core.compile import resolved_error

    def err(message, *path):
        return resolved_error(resolved, message, "hooks", "memory", *path)

    return _check_regexes(memory, err) + _check_path(memory, err)


def _check_path(memory, err):
    """The store's path is absolute once ~ and {state} are expanded: a
    relative one ('$HOME/mem.ndjson': $VARs are not expanded) was taken from
    each working folder, and a hook wrote the store into every project."""
    import os

    from engine.memory.store import store_path

    if "path" not in memory or os.path.isabs(store_path(memory)):
        return []
    return [err(f"hooks.memory.path {memory['path']!r} is relative ($VARs are not expanded); start it with ~, "
                "{state} (the engine's state folder) or /", "path")]


def _check_regexes(memory, err):
    import re

    from engine.core.patterncheck import re_runaway_reason

    out = []
    for key in ("error_patterns", "strip_patterns", "skip_lines", "failure_lines", "error_lead_ins", "signature",
                "generic_errors", "own_answers"):
        if key not in memory:  # before defaults: a key not set has nothing to check
            continue
        for i, p in enumerate(memory[key]):
            where, path = f"hooks.memory.{key}[{i}]", (key, i)
            if isinstance(p, dict):  # a signature rule: {pattern, replacement}
                p, where, path = p.get("pattern"), where + ".pattern", (*path, "pattern")
            try:
                re.compile(p)
            except (re.error, TypeError) as exc:
                out.append(err(f"{where} is not a valid regex: {exc}", *path))
                continue
            reason = re_runaway_reason(p)  # the hooks run it over every failed tool call's output
            if reason:
                out.append(err(f"{where}: {reason}", *path))
    return out

