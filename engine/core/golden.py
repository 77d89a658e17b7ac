"""`engine golden`: golden cases, reviewed like code.

A case is a folder:
    input.md            the rule file (bytes as they are: CRLF, BOM, anything)
    case.yaml           optional (kind: golden): description, profile, levels, expect
                        (defaults: schemas/golden.schema.json)
    off.md, light.md, standard.md, aggressive.md   expected output per level
Without --update, every difference is printed as a unified diff and the exit
status is 1.  With --update the expected files are rewritten, so the change
shows up in `git diff` for review.  `expect` assertions (texts that must or
must not appear) are checked either way: --update cannot bless a broken trap.
"""

import sys
from pathlib import Path

from engine.base.errors import UserError


def find_cases(root):
    root = Path(root)
    if not root.is_dir():
        raise UserError("no golden folder here; pass the folder of cases (engine golden DIR)", str(root))
    cases = sorted(p.parent for p in root.rglob("input.md"))
    if not cases:
        raise UserError("no cases found (a case is a folder holding input.md)", str(root))
    return cases


def load_case(folder):
    """The case's case.yaml (none: nothing said), the schema's defaults filled in."""
    from . import defaults, schema
    from .yamlload import load_file

    spec = {}
    path = folder / "case.yaml"
    if path.is_file():
        doc = load_file(path)
        schema.require_valid(doc, "golden")
        errors = reference_errors(doc, folder)
        if errors:
            from engine.base.errors import ValidationErrors

            raise ValidationErrors(errors)
        spec = doc.data
    return defaults.fill(defaults.schema("golden"), spec)


def reference_errors(doc, folder):
    """The profile and the level names case.yaml gives, looked up as
    run_case will: an error for each missing one, at its place in case.yaml
    (engine golden said it by its name alone, 'nosuch: no built-in level
    ...', or at the missing file's own path; engine validate not at all)."""
    from engine.base.refs import is_path

    from .documents import Library

    lib, errors = Library(), []
    refs = [(_profile_ref(folder, doc.data), "profile", ("profile",))]
    refs += [(level, "level", ("levels", i)) for i, level in enumerate(doc.data.get("levels", [])) if not is_path(level)]
    for ref, kind, where in refs:
        try:
            if ref:
                lib.locate(ref, kind, Path.cwd(), (doc, where))
        except UserError as exc:
            errors.append(exc)
    return errors


def _profile_ref(folder, spec):
    """case.yaml's profile: a name, or a path relative to the case folder."""
    ref = spec.get("profile")
    return str((folder / ref).resolve()) if ref and "/" in ref else ref


def run_case(folder, spec):
    """[(level, expected_path, produced_text, failures)] for one case."""
    from engine.base.textio import decode
    from engine.text.pipeline import compress

    from .profile import load_profile

    data = (folder / "input.md").read_bytes()
    text = decode(data, str(folder / "input.md"))
    profile_ref = _profile_ref(folder, spec)
    out = []
    for level in spec["levels"]:
        profile = load_profile(profile_ref, level)
        produced = compress(profile, text).text
        failures = _check_expect(spec["expect"], level, produced)
        out.append((level, folder / f"{level}.md", produced, failures))
    return out


def _check_expect(expect, level, produced):
    failures = []
    for scope in ("all", level):
        rules = expect.get(scope, {})
        for s in rules.get("contains", []):
            if s not in produced:
                failures.append(f"expected to contain {s!r}")
        for s in rules.get("not_contains", []):
            if s in produced:
                failures.append(f"expected not to contain {s!r}")
    return failures


def run_golden(root=None, update=False, out=None):
    from .profile import warm_compiles
    from .report import unified_diff

    warm_compiles()  # a case compiles its profile at each of its levels
    out = out or sys.stdout  # at call time: the command's writer (it escapes control characters)
    root = Path(root) if root else Path("tests/golden")
    cases = find_cases(root)
    changed = failed = 0
    for folder in cases:
        spec = load_case(folder)
        for level, path, produced, failures in run_case(folder, spec):
            name = f"{folder.relative_to(root)}/{level}.md"
            for f in failures:
                print(f"{path}: {f}", file=out)
                failed += 1
            want = path.read_bytes().decode("utf-8") if path.is_file() else None
            if want == produced:
                continue
            if update:
                path.write_bytes(produced.encode("utf-8"))
                print(f"updated {name}", file=out)
                continue
            changed += 1
            if want is None:
                print(f"{path}: missing; run engine golden --update to create it", file=out)
            else:
                out.write(unified_diff(want, produced, f"{name} (expected)", f"{name} (now)"))
    total = sum(len(load_case(c)["levels"]) for c in cases)
    print(f"{len(cases)} cases, {total} outputs: {changed} differ, {failed} expectation(s) failed", file=out)
    return 1 if (changed and not update) or failed else 0
