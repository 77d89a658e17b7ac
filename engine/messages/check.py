"""`engine validate` for message documents: a pipeline must compile (every
step, detector, protect category and marker it names), a detector must
compile and pass its own examples, and no user pattern may run away."""

from functools import lru_cache
from pathlib import Path

from engine.base.errors import UserError, ValidationErrors

# params holding patterns, per detector kind: key -> is it a list
PATTERN_PARAMS = {"patterns": True, "line_pattern": False, "prose_line": False, "statement_patterns": True,
                  "ignore_patterns": True}


def _errors(exc):
    return exc.errors if isinstance(exc, ValidationErrors) else [exc]


def _runaway(doc, data, base, samples=()):
    from engine.core.patterncheck import pattern_problems

    problems = []
    for key, is_list in PATTERN_PARAMS.items():
        if key not in data:
            continue
        values = data[key] if is_list else [data[key]]
        for i, pat in enumerate(values):
            if isinstance(pat, str):
                path = base + ((key, i) if is_list else (key,))
                problems.extend(pattern_problems(doc, pat, path, samples))
    return problems


@lru_cache(maxsize=1)
def _default_settings():
    """word_pattern and pattern_timeout_ms of the built-in profile, which
    detector self-tests run with (resolved once per run)."""
    from engine.core.profile import resolve

    resolved, _ = resolve("default")
    return resolved.settings["word_pattern"], resolved.settings["pattern_timeout_ms"]


def check_detector(doc):
    from engine.core.documents import Library

    from .load import Context, compile_detector

    data = doc.data
    ex = data.get("examples", {})
    samples = ex.get("fire", []) + ex.get("quiet", [])
    problems = _runaway(doc, data["params"], ("params",), samples)
    if problems:
        return problems
    ctx = Context(Library(), doc, *_default_settings())
    try:
        det = compile_detector(doc, ctx)
        ctx.finish()
    except UserError as exc:
        return _errors(exc)
    for i, text in enumerate(ex.get("fire", [])):
        if not det.fires(text, {}):
            problems.append(doc.error(f"self-test: the detector should fire on {text[:60]!r}, but does not", ("examples", "fire", i)))
    for i, text in enumerate(ex.get("quiet", [])):
        if det.fires(text, {}):
            problems.append(doc.error(f"self-test: the detector should stay quiet on {text[:60]!r}, but fires", ("examples", "quiet", i)))
    return problems


def check_pipeline(doc):
    from .load import build

    problems = []
    for i, step in enumerate(doc.data.get("steps", ())):
        for j, p in enumerate(step.get("patterns", ()) if step.get("kind") == "patterns" else ()):
            from engine.core.patterncheck import pattern_problems

            problems.extend(pattern_problems(doc, p["pattern"], ("steps", i, "patterns", j, "pattern")))
    for name, params in doc.data.get("step_params", {}).items():
        for j, p in enumerate(params["patterns"] if isinstance(params.get("patterns"), list) else ()):
            if isinstance(p, dict) and isinstance(p.get("pattern"), str):
                from engine.core.patterncheck import pattern_problems

                problems.extend(pattern_problems(doc, p["pattern"], ("step_params", name, "patterns", j, "pattern")))
    if problems:
        return problems
    try:
        build(str(Path(doc.file).resolve()))
    except UserError as exc:
        return _errors(exc)
    return []
