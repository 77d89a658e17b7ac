"""`engine validate`: schema, compiled patterns, self-tests, runaway patterns.

Every problem is a UserError carrying FILE:LINE:COL; nothing stops at the
first one, so a user sees all that is wrong in one run.
"""

from pathlib import Path

import regex

from engine.base.errors import UserError, ValidationErrors, display
from engine.base.paths import builtin_dir
from engine.text import regexutil

from . import schema
from .checks import CHECKS, checker
from .documents import FOLDERS, Library
from .patterncheck import pattern_problems
from .yamlload import MalformedYAML, load_file

# How long one pattern may take over one probe text before it is called a runaway.


def builtin_files():
    from .settings import path as settings_path

    files = []
    for kind, folder in FOLDERS.items():
        files.extend(sorted(builtin_dir(folder).glob("*.yaml")))
    return files + [Path(settings_path())] + sorted(builtin_dir("pipelines/reports").glob("*.yaml"))


def validate_paths(paths, profile=None):
    """All problems found in the given YAML files (default: the built-in ones
    plus the active profile), as a list of UserError."""
    from .profile import choose_to_check as choose
    from .profile import warm_compiles

    warm_compiles()
    targets = [Path(p) for p in paths] or builtin_files()
    word_pattern = _word_pattern(profile)
    if paths:
        problems = [e for path in targets for e in _check_file(path, word_pattern, profile)]
    else:
        problems = _check_builtin(targets, word_pattern, profile)
    if not paths:
        ref, base = choose(profile)
        try:
            active = Library().locate(ref, "profile", base)
        except UserError as exc:
            return problems + [exc]
        levels = sorted(p.stem for p in builtin_dir(FOLDERS["level"]).glob("*.yaml"))
        if active not in [t.resolve() for t in targets]:
            problems.extend(_check_file(active, word_pattern, profile))
        for lv in levels:
            problems.extend(_compile_errors(str(active), lv))
    return _dedupe(problems)


def _check_builtin(files, word_pattern, profile):
    """The built-in documents' problems.  They pass in every release, and
    checking them takes most of a plain `engine validate` (self-tests of
    every pattern), so a pass is remembered in the cache, keyed by the
    engine's code and the word pattern, with the digest of every built-in
    file: an edited or added file is checked again."""
    from . import cache

    key = ("validated-builtin", word_pattern, *map(str, files))
    if cache.load_plain(key) == "ok":
        return []
    problems = [e for path in files for e in _check_file(path, word_pattern, profile)]
    if not problems:
        # the folders too: a file added to one changes its mtime
        sources = [str(p) for p in files] + sorted({str(p.parent) for p in files})
        cache.store_plain(key, "ok", [(src, cache.file_digest(src)) for src in sources])
    return problems


def _dedupe(problems):
    seen, out = set(), []
    for p in problems:
        key = str(p)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _word_pattern(profile):
    """The word runs the self-tests use: the active profile's, or the built-in
    default's when the active profile is itself broken (its own errors are
    reported separately)."""
    from .profile import resolve

    for ref in (profile, "default"):
        try:
            resolved, _ = resolve(ref)
            return resolved.settings["word_pattern"]
        except UserError:
            continue
    return r"[\w'\u2019\u02bc-]+"  # both profiles broken: still keep apostrophe words whole


def _errors_of(exc):
    return exc.errors if isinstance(exc, ValidationErrors) else [exc]


def _check_file(path, word_pattern, profile):
    try:
        doc = load_file(path)
    except MalformedYAML as exc:
        return [_not_a_document(path) or exc]
    except UserError as exc:
        return [exc]
    errors = schema.check(doc)
    if errors:
        if not (isinstance(doc.data, dict) and "kind" in doc.data):
            return [_not_a_document(path) or errors[0]]
        return errors
    kind = doc.data["kind"]
    check = _pattern_check(kind, word_pattern)
    if check is not None:
        return _checked(check, doc)
    if kind == "golden":  # its profile and levels, looked up as engine golden does
        from .golden import reference_errors

        return reference_errors(doc, Path(path).parent)
    if kind in ("meaning", "settings", "message_cases", "kind_cases"):
        return []
    return _compile_errors(str(path), None, word_pattern)


def _pattern_check(kind, word_pattern):
    """The check of a document kind with patterns of its own, or None."""
    if kind == "protect":
        return lambda doc: _check_protect(doc, word_pattern)
    if kind == "dictionary":
        return _check_dictionary
    if kind == "level":
        return _check_level
    if kind in CHECKS:  # a subsystem's own document kind: its own check (checks.py)
        return checker(kind)
    return None


def _checked(check, doc):
    """check(doc); for a user's file in a compile box (compilebox.py), as a
    profile compiles: its patterns are hostile input, and one that asks the
    regex module for gigabytes, or never ends, fails there with its
    FILE:LINE:COL instead of taking the machine's memory (the engine's own
    files ship checked)."""
    from . import compilebox
    from .documents import is_builtin

    if is_builtin(doc.file):
        return check(doc)

    def boxed():
        found = check(doc)
        if found:
            raise ValidationErrors(found)  # said back as errors with their places
        return []

    try:
        return compilebox.run(boxed, str(doc.file), doing="checking this file")
    except UserError as exc:
        return _errors_of(exc)


def _not_a_document(path):
    """The one error for a file that is not named as YAML (a rule file such as
    CLAUDE.md) and is no engine document, or None for a YAML-named file
    (its own syntax or `kind:` error says more)."""
    from .settings import yaml_limits

    suffix = Path(path).suffix
    if suffix.lower() in yaml_limits()["suffixes"]:
        return None
    what = f"a {suffix} file" if suffix else "a file without a YAML suffix"
    return UserError(f"not a YAML document ({what}): validate checks the engine's YAML documents, of kind "
                     f"{', '.join(schema.KINDS)}; to see what compression does to a rule file, "
                     f"run `engine explain {display(str(path))}`", str(path))


def _compile_errors(profile_path, level, word_pattern=None):
    """Errors of resolving and compiling a profile, plus the checks of every
    user-written protect, dictionary and level file it names (self-tests,
    runaway patterns), which compiling alone does not run."""
    from .documents import is_builtin
    from .profile import load_profile, resolve

    errors = []
    try:
        # Through the compiled-profile cache: a profile whose files (and the
        # engine) are unchanged since it last compiled compiles again the same.
        load_profile(profile_path, level)
    except UserError as exc:
        errors.extend(_errors_of(exc))
    try:
        resolved, lib = resolve(profile_path, level)
    except UserError:
        return errors
    if level is None and not errors:  # compiled, so it compiles; once per profile, not per level
        errors.extend(_word_pattern_problems(resolved))
    for f in lib.files:
        if is_builtin(f) or f == resolved.file:
            continue
        try:
            kind = load_file(f).data.get("kind")
        except UserError:
            continue
        if kind in ("protect", "dictionary", "level"):
            errors.extend(_check_file(Path(f), word_pattern or resolved.settings["word_pattern"], None))
    return errors


def _word_pattern_problems(resolved):
    """A user's word_pattern probed for runaways where it is set, as a
    protect pattern is: it runs over every text compressed."""
    from .documents import is_builtin

    doc, path = resolved.setting_origins.get("word_pattern", (None, None))
    if doc is None or is_builtin(doc.file):
        return []
    return pattern_problems(doc, resolved.settings["word_pattern"], path)


def _line_break_problems(doc):
    """`from_line_break` names patterns of an opaque category that match
    only where a line starts: the scan finds them from the line break before."""
    from engine.text.regexutil import only_at_line_start

    data = doc.data
    patterns = data.get("patterns", ())
    errors = []
    for j, i in enumerate(data.get("from_line_break", ())):
        if data.get("stage", "token") != "opaque":
            errors.append(doc.error("from_line_break: only an opaque category's patterns are found from a line break", ("from_line_break", j)))
        elif i >= len(patterns):
            errors.append(doc.error(f"from_line_break: there is no pattern {i} (patterns are counted from 0)", ("from_line_break", j)))
        elif not only_at_line_start(patterns[i]):
            errors.append(doc.error(f"from_line_break: pattern {i} must open with (?m)^ and have no top-level |: "
                                    "it must match only where a line starts", ("from_line_break", j)))
    return errors


def _check_protect(doc, word_pattern):
    from engine.text.protect import category_matcher

    from .protectsource import source

    data = doc.data
    ex = data.get("examples", {})
    samples = ex.get("match", []) + ex.get("no_match", [])
    errors = []
    for i, pat in enumerate(data.get("patterns", ())):
        errors.extend(pattern_problems(doc, pat, ("patterns", i), samples))
    errors.extend(_line_break_problems(doc))
    if data.get("rules") or data.get("allow"):
        from .rulecheck import rule_problems

        errors.extend(rule_problems(doc))
    if errors:
        return errors
    matcher = category_matcher(source(data, "c_"), word_pattern)
    for i, sample in enumerate(ex.get("match", [])):
        spans = [(s, e) for s, e, _ in matcher.scan(sample)]
        if (0, len(sample)) not in spans:
            got = ", ".join(repr(sample[s:e]) for s, e in spans) or "nothing"
            errors.append(doc.error(f"self-test: {sample!r} should be matched whole, but the category finds {got}", ("examples", "match", i)))
    for i, case in enumerate(ex.get("match_within", [])):
        sample, want = case["text"], case["match"]
        found = [sample[s:e] for s, e, _ in matcher.scan(sample)]
        if want not in found:
            got = ", ".join(repr(f) for f in found) or "nothing"
            errors.append(doc.error(f"self-test: in {sample!r} the category should find {want!r} whole, but finds {got}",
                                    ("examples", "match_within", i)))
    for i, sample in enumerate(ex.get("no_match", [])):
        spans = [(s, e) for s, e, _ in matcher.scan(sample)]
        if spans:
            got = ", ".join(repr(sample[s:e]) for s, e in spans)
            errors.append(doc.error(f"self-test: {sample!r} should not match, but the category finds {got}", ("examples", "no_match", i)))
    return errors


_GUARD_PATTERNS = (("unless_preceded_by", "before"), ("unless_followed_by", "after"), ("only_followed_by", "after"))


def _check_dictionary(doc):
    """The guard patterns of every word and entry compile (with the
    dictionary's own named lists) and do not run away."""
    errors = []
    lists = doc.data.get("lists")
    guarded = [(("words", i), w) for i, w in enumerate(doc.data.get("words", ())) if isinstance(w, dict)]
    guarded += [(("entries", k), e) for k, e in (doc.data.get("entries") or {}).items() if isinstance(e, dict)]
    for path, spec in guarded:
        for key, anchored in _GUARD_PATTERNS:
            if key in spec:
                errors.extend(pattern_problems(doc, spec[key], path + (key,), anchored=anchored, lists=lists))
    return errors


def _check_level(doc):
    from engine.text.transforms.regex_replace import parse_template

    from .resolve import _level_chain

    errors = []
    if "extends" in doc.data:  # the chain below must exist and not loop
        try:
            _level_chain(Library(), doc.data["extends"], Path(doc.file).parent, (doc, ("extends",)))
        except UserError as exc:
            errors.extend(_errors_of(exc))
    for i, t in enumerate(doc.data["transforms"]):
        for key, anchored in (("pattern", None), ("word_pattern", None), ("unless_preceded_by", "before"), ("unless_followed_by", "after")):
            if key in t:
                errors.extend(pattern_problems(doc, t[key], ("transforms", i, key), anchored=anchored))
        if t["kind"] == "regex" and "replace" in t and not errors:
            try:
                pieces = parse_template(t["replace"])
                groups = regex.compile(regexutil.scoped(t["pattern"])).groupindex
                unknown = [g for g in pieces[1::2] if g not in groups and not g.isdigit()]
                if unknown:
                    errors.append(doc.error(f"replace names group(s) {', '.join(unknown)} that the pattern does not define",
                                            ("transforms", i, "replace")))
            except regexutil.PatternError as exc:
                errors.append(doc.error(str(exc), ("transforms", i, "replace")))
    return errors
