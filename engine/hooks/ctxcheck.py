"""`engine validate` for the context-intelligence kinds (tool memory, context
audit and monitor, effort policy, compaction instructions): their templates
parse and use only the variables the handler gives them, a rendering with
sample values works, their regexes compile, and the hooks settings they read
(`memory`, `context`, `effort`) are there after extends."""

# Template key -> variables, per kind.
VARIABLES = {
    "tool_memory_banner": {"template": {"tool", "entries", "total", "more", "cwd", "project", "others",
                                        "others_total"}},
    "context_monitor": {"template": {"fill_pct", "tokens", "window", "threshold", "thresholds", "top",
                                     "total_tokens"}},
    "subagent_effort": {"template": {"effort", "model", "tool"}},
    "compact_instructions": {"template": {"trigger", "custom_instructions"}},
    "effort_guidance": {f"{key}.{e}": {"effort", "source"} for key in ("templates", "model_advice")
                        for e in ("low", "medium", "high")},
}
# The hooks settings each kind reads.
SETTINGS = {
    "tool_memory_record": ("memory",), "tool_memory_scan": ("memory",), "tool_memory_banner": ("memory",),
    "context_monitor": ("context",),
    "effort_guidance": ("effort",), "subagent_effort": ("effort",),
}
MEMORY_KEYS = ("path", "max_kept", "compact_bytes", "sessions_kept", "max_field_chars", "redact", "input_fields", "pattern_tools",
               "error_patterns", "error_wrappers", "strip_patterns", "skip_lines", "signature", "examples_kept")
CONTEXT_KEYS = ("growth_bytes_per_token",)
ENTRY = {"tool": "shell", "error": "kubectl: command not found", "input": "kubectl get pods", "count": 2,
         "first": "2026-01-01 10:00", "last": "2026-01-02 11:00", "project": "/project", "sessions": ["s"], "k": "x",
         "examples": ["kubectl get svc", "kubectl get pods"], "error_quoted": '"kubectl: command not found"',
         "input_quoted": '"kubectl get pods"', "examples_quoted": ['"kubectl get pods"', '"kubectl get svc"'],
         "project_quoted": '"/project"'}
SAMPLES = {"tool": "shell", "entries": [ENTRY], "total": 3, "more": 2, "cwd": "/project",
           "project": "/project", "others": [dict(ENTRY, project="/other", project_quoted='"/other"')], "others_total": 1, "fill_pct": 78,
           "tokens": 156000, "window": 200000, "threshold": 70, "thresholds": [70, 80, 90],
           "top": [{"tool": "shell", "tokens": 5000, "bytes": 20000, "calls": 3, "share": 61.0}],
           "total_tokens": 8200, "effort": "medium", "model": "opus", "trigger": "auto",
           "custom_instructions": "keep the test names", "source": "startup"}


def _get(h, key):
    node = h
    for part in key.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    return node


def check_handler(resolved, h, err):
    """Problems of one handler of these kinds: `err(message, *path)` makes
    the error pointing at the handler (or one of its keys)."""
    kind = h.get("kind")
    errors = []
    hooks = resolved.hooks
    for group in SETTINGS.get(kind, ()):
        if group not in hooks:
            errors.append(err(f"kind {kind} reads hooks.{group}; set it here or extend a profile that does"))
    if kind in SETTINGS and "memory" in SETTINGS[kind] and "memory" in hooks:
        missing = [k for k in MEMORY_KEYS if k not in hooks["memory"]]
        if missing:
            errors.append(err(f"hooks.memory lacks {', '.join(missing)}"))
    if kind in SETTINGS and "context" in SETTINGS[kind] and "context" in hooks:
        missing = [k for k in CONTEXT_KEYS if k not in hooks["context"]]
        if missing:
            errors.append(err(f"hooks.context lacks {', '.join(missing)}"))
    from .banner import check, render

    for key, allowed in VARIABLES.get(kind, {}).items():
        source = _get(h, key)
        if not isinstance(source, str):
            continue
        problems = check(source, allowed)
        if not problems and "templates" in hooks:
            try:
                render(source, hooks["templates"], **{k: SAMPLES[k] for k in allowed})
            except Exception as exc:  # noqa: BLE001 - any failure here is one the hook would meet
                problems = [(1, f"template fails with sample values: {type(exc).__name__}: {exc}")]
        for line, msg in problems:
            errors.append(err(f"{key} (line {line} of the template): {msg}", *key.split(".")))
    return errors


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
        for i, p in enumerate(memory.get(key, ())):
            where = f"hooks.memory.{key}[{i}]"
            if isinstance(p, dict):  # a signature rule: {pattern, replacement}
                p, where = p.get("pattern"), where + ".pattern"
            try:
                re.compile(p)
            except (re.error, TypeError) as exc:
                out.append(err(f"{where} is not a valid regex: {exc}"))
    return out
