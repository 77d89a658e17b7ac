"""Checking one user-written pattern before it is used: it compiles under
the engine's rules, and it does not run away on adversarial texts made to
make it backtrack (and on the document's own examples).  Every validator of
a document with patterns (protect, dictionaries, levels, a subsystem's own
documents) uses this one check."""

import regex

from engine.text import regexutil

from . import compilebox
from .settings import compile_limits


def _probe_bounds():
    """(seconds, characters) of one runaway probe (compile: in the engine's settings)."""
    limits = compile_limits()
    return limits["probe_ms"] / 1000, limits["probe_chars"]


def pattern_problems(doc, pattern, path, probes=(), anchored=None, lists=None):
    """Compile errors and runaway behaviour of one user pattern.

    anchored: None for a pattern scanned over a whole text; "after" for a
    guard tried where a word ends; "before" for a guard tried backwards from
    where a word starts.  Each is probed the way it runs.  lists: the named
    word lists a guard's \\L<name> uses (its dictionary's `lists:`).
    """
    return _noted(doc, path, lambda: _problems(doc, pattern, path, probes, anchored, lists))


def re_pattern_problems(doc, pattern, path):
    """The problems of a pattern the engine runs with Python's `re` (a
    report style's, a pricing family's, an agent's transcript fields): its
    syntax, and in a user's own file the runaway probe, run with the regex
    module (the same backtracking; a pattern only `re` reads is not probed).
    The engine's own files are probed by the test suite instead, so that
    loading them costs no probe."""
    return _noted(doc, path, lambda: _re_problems(doc, pattern, path))


def _noted(doc, path, check):
    """check(), with the pattern's place noted to the compile box it may run
    in: one that ends the box past its time is said there; one past its
    memory cap is this pattern's error."""
    here = doc.error("", path)
    compilebox.note((here.file, here.line, here.col))
    try:
        return check()
    except MemoryError:
        return [doc.error(compilebox.pattern_memory_message(compile_limits()["memory_mb"]), path)]
    finally:
        compilebox.note(None)


def _problems(doc, pattern, path, probes, anchored, lists):
    try:
        regexutil.check(pattern, lists)
    except regexutil.PatternError as exc:
        return [doc.error(str(exc), path)]
    body = regexutil.scoped(pattern)
    compiled = regex.compile(f"(?<=(?:{body}))" if anchored == "before" else body, regex.V0,
                             ignore_unused=True, **(lists or {}))
    return _runaway(doc, compiled, path, probes, anchored)


def _re_problems(doc, pattern, path):
    import re

    from .documents import is_builtin

    try:
        re.compile(pattern)
    except re.error as exc:
        return [doc.error(f"not a valid regular expression: {exc}", path)]
    reason = None if is_builtin(doc.file) else re_runaway_reason(pattern)
    return [doc.error(reason, path)] if reason else []


def re_runaway_reason(pattern):
    """Why a pattern the engine runs with Python's `re` runs away, probed
    with the regex module (the same backtracking), or None; a pattern only
    `re` reads is not probed.  Probed once per pattern and probe bounds in
    a process: every profile compiled checks the same `hooks.memory`
    patterns (`engine validate` compiles up to seven)."""
    if not isinstance(pattern, str):
        return _re_runaway_reason(pattern)
    key = (pattern, *_probe_bounds())
    if key not in _RE_REASONS:
        _RE_REASONS[key] = _re_runaway_reason(pattern)
    return _RE_REASONS[key]


_RE_REASONS: dict = {}  # (pattern, probe seconds, probe characters) -> re_runaway_reason


def _re_runaway_reason(pattern):
    try:
        compiled = regex.compile(pattern, regex.V0)
    except regex.error:
        return None
    return runaway_reason(compiled)


def _runaway(doc, compiled, path, probes, anchored):
    """The error of a pattern slower than the probe budget over one probe text, or none."""
    reason = runaway_reason(compiled, probes, anchored)
    return [doc.error(reason, path)] if reason else []


def runaway_reason(compiled, probes=(), anchored=None):
    """Why `compiled` (a regex-module pattern) runs away: slower than the
    probe budget over one probe text; None when it does not."""
    seconds, chars = _probe_bounds()
    for probe in _probes(probes, chars):
        try:
            if anchored == "after":
                compiled.match(probe, timeout=seconds)
            elif anchored == "before":
                compiled.match(probe, len(probe), timeout=seconds)
            else:
                for _ in compiled.finditer(probe, timeout=seconds):
                    pass
        except TimeoutError:
            return (f"pattern runs away: it took over {seconds:g}s on a {len(probe)}-character text "
                    f"({_describe_probe(probe)}); it backtracks too much - remove nested repetition such as (a+)+ "
                    "or make the alternatives exclusive")
    return None


def _probes(examples, n):
    base = ["a" * n, "a" * n + "!", "a " * (n // 2), " " * n + "x", "-" * n, "/" * n, "_" * n, "`" * n,
            "*" * n, "." * n, "1" * n, "aA1_-./@ " * (n // 9), "\n" * n, "\n    x" * (n // 6)]
    for ex in examples:
        if ex:
            base.append((ex * (n // len(ex) + 1))[:n])
            base.append((ex[:-1] * (n // max(1, len(ex) - 1) + 1))[:n] + "!")
    return base


def _describe_probe(probe):
    head = probe[:12].replace("\n", "\\n")
    return f"starting {head!r}"
