"""`engine validate` of the hooks settings the context-intelligence kinds
share: the regexes of `hooks.memory` compile and do not run away (once per
profile).  What each
kind reads and renders is declared on its class (handlers/base.py)."""


def check_settings(resolved):
    """The regexes of `hooks.memory`, once per profile (not per handler)."""
    from engine.base.errors import UserError

    memory = resolved.hooks.get("memory")
    if not isinstance(memory, dict):
        return []
    return _check_regexes(memory, lambda message: UserError(message, resolved.file, 1, 1))


def _check_regexes(memory, err):
    import re

    out = []
    for key in ("error_patterns", "strip_patterns", "skip_lines", "signature", "generic_errors"):
        if key not in memory:  # before defaults: a key not set has nothing to check
            continue
        for i, p in enumerate(memory[key]):
            where = f"hooks.memory.{key}[{i}]"
            if isinstance(p, dict):  # a signature rule: {pattern, replacement}
                p, where = p.get("pattern"), where + ".pattern"
            try:
                re.compile(p)
            except (re.error, TypeError) as exc:
                out.append(err(f"{where} is not a valid regex: {exc}"))
                continue
            reason = _runaway(p)
            if reason:
                out.append(err(f"{where}: {reason}"))
    return out


def _runaway(pattern):
    """Why a pattern the hooks run with Python's re over tool output runs
    away (probed with the regex module, the same backtracking), or None."""
    import regex

    from engine.core.patterncheck import runaway_reason

    try:
        compiled = regex.compile(pattern, regex.V0)
    except regex.error:
        return None  # only re reads it: nothing to probe with
    return runaway_reason(compiled)
