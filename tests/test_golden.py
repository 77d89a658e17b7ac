"""Golden cases (tests/golden/<case>/): the expected output of every level is
reviewed like code, and each case's `expect` assertions pin the meaning that
must survive.  These tests run the cases and check that the golden runner
itself notices a change."""

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import position, problems
from engine.core import defaults
from engine.core.golden import find_cases, load_case, run_case, run_golden

GOLDEN = Path(__file__).resolve().parent / "golden"
CASES = find_cases(GOLDEN)
# The levels a case without `levels:` is run at (the schema's default).
DEFAULT_LEVELS = defaults.at(defaults.schema("golden"), "/properties/levels")["default"]


@pytest.fixture(autouse=True)
def builtin_profile(monkeypatch, tmp_path):
    """Cases without a `profile:` use the built-in default: no profile from the
    environment or from a .engine/ folder of the working directory."""
    monkeypatch.delenv("ENGINE_PROFILE", raising=False)
    monkeypatch.chdir(tmp_path)


def test_every_case_has_a_description_and_an_expected_file_per_level():
    assert len(CASES) >= 17
    for folder in CASES:
        spec = load_case(folder)
        assert spec.get("kind") == "golden", folder
        assert spec.get("description", "").strip(), folder
        for level in spec["levels"]:
            assert (folder / f"{level}.md").is_file(), f"{folder.name}/{level}.md missing; run engine golden --update"


def test_run_golden_passes(tmp_path):
    """The runner over a folder of passing cases (two of them: every case is
    run one at a time below) says so and exits 0."""
    folder = tmp_path / "golden"
    for case in CASES[:2]:
        shutil.copytree(case, folder / case.name)
    out = io.StringIO()
    status = run_golden(folder, out=out)
    assert status == 0, out.getvalue()
    assert out.getvalue().startswith("2 cases, "), out.getvalue()
    assert "outputs: 0 differ, 0 expectation(s) failed" in out.getvalue()


@pytest.mark.parametrize("folder", CASES, ids=[c.name for c in CASES])
def test_case(folder):
    """One case at a time, so a failure names the case, the level and the assertion."""
    problems = []
    for level, path, produced, failures in run_case(folder, load_case(folder)):
        problems += [f"{level}: {f}" for f in failures]
        want = path.read_bytes().decode("utf-8")
        if want != produced:
            problems.append(f"{level}: output differs from {path.name} (engine golden {GOLDEN} shows the diff)")
    assert not problems, "\n".join(problems)


def test_off_level_is_byte_for_byte_passthrough():
    for folder in CASES:
        assert (folder / "off.md").read_bytes() == (folder / "input.md").read_bytes(), folder.name


def test_crlf_case_keeps_crlf_at_every_level():
    folder = GOLDEN / "trap-crlf"
    assert b"\r\n" in (folder / "input.md").read_bytes(), "the input lost its CRLF bytes (check .gitattributes)"
    for level in DEFAULT_LEVELS:
        data = (folder / f"{level}.md").read_bytes()
        assert data.count(b"\n") > 3, level
        assert data.count(b"\n") == data.count(b"\r\n"), f"{level}: a bare LF in a CRLF file"


def test_bom_case_keeps_one_bom_at_every_level():
    folder = GOLDEN / "trap-bom"
    for level in DEFAULT_LEVELS:
        data = (folder / f"{level}.md").read_bytes()
        assert data.startswith(b"\xef\xbb\xbf"), level
        assert data.count(b"\xef\xbb\xbf") == 1, level


def test_empty_case_stays_empty():
    for level in DEFAULT_LEVELS:
        assert (GOLDEN / "trap-empty" / f"{level}.md").read_bytes() == b""


def _copy_case(tmp_path, name="trap-globs"):
    root = tmp_path / "golden"
    shutil.copytree(GOLDEN / name, root / name)
    return root, root / name


def test_a_changed_expected_file_is_reported_with_a_diff(tmp_path):
    root, case = _copy_case(tmp_path)
    # first the untouched copy passes (the case's own expectations included)
    if run_golden(root, out=io.StringIO()) != 0:
        pytest.skip("the case itself fails; see test_case")
    path = case / "standard.md"
    original = path.read_bytes()
    path.write_bytes(original.replace(b"src/**/*.ts", b"src/*.ts", 1))
    assert path.read_bytes() != original

    out = io.StringIO()
    assert run_golden(root, out=out) == 1
    report = out.getvalue()
    assert "trap-globs/standard.md (expected)" in report
    assert "trap-globs/standard.md (now)" in report
    assert any(line.startswith("-") and "src/*.ts" in line for line in report.splitlines()), report
    assert any(line.startswith("+") and "src/**/*.ts" in line for line in report.splitlines()), report
    assert "1 differ" in report
    assert path.read_bytes() != original, "a run without --update must not touch the expected files"

    # --update rewrites the file back to what the engine produces, and the next run is clean
    assert run_golden(root, update=True, out=io.StringIO()) == 0
    assert path.read_bytes() == original
    assert run_golden(root, out=io.StringIO()) == 0


def test_a_missing_expected_file_fails(tmp_path):
    root, case = _copy_case(tmp_path)
    (case / "light.md").unlink()
    out = io.StringIO()
    assert run_golden(root, out=out) == 1
    assert "missing" in out.getvalue()


def test_update_cannot_bless_a_broken_expectation(tmp_path):
    root = tmp_path / "golden"
    case = root / "broken"
    case.mkdir(parents=True)
    (case / "input.md").write_text("Keep the firewall on at all times.\n")
    (case / "case.yaml").write_text(
        "kind: golden\ndescription: an assertion no level can meet\n"
        "expect:\n  all:\n    contains: ['this text is nowhere']\n    not_contains: ['firewall']\n"
    )
    out = io.StringIO()
    assert run_golden(root, update=True, out=out) == 1
    report = out.getvalue()
    assert "expected to contain 'this text is nowhere'" in report
    assert "expected not to contain 'firewall'" in report
    assert (case / "standard.md").is_file()  # the outputs were still written for review


def test_cli_reports_a_changed_case_and_exits_1(tmp_path):
    root, case = _copy_case(tmp_path)
    engine = shutil.which("engine")
    cmd = [engine] if engine else [sys.executable, "-m", "engine.cli"]
    base = subprocess.run([*cmd, "golden", str(root)], capture_output=True, text=True, cwd=tmp_path)
    if base.returncode != 0:
        pytest.skip("the case itself fails; see test_case\n" + base.stdout + base.stderr)
    path = case / "light.md"
    path.write_bytes(path.read_bytes() + b"an extra line\n")
    proc = subprocess.run([*cmd, "golden", str(root)], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "+++ trap-globs/light.md (now)" in proc.stdout
    assert "-an extra line" in proc.stdout


def test_a_missing_profile_or_level_is_said_at_its_place_in_case_yaml(cli):
    """case.yaml naming a level or a profile that is not there: engine golden
    said it by the name alone ('nosuch: no built-in level named ...') or at
    the missing profile's own path, and engine validate passed the file."""
    text = "kind: golden\ndescription: x\nprofile: ./nope.yaml\nlevels: [light, standrd]\n"
    case = cli.cwd / "cases" / "c"
    case.mkdir(parents=True)
    (case / "input.md").write_text("# Rules\n\nNever push.\n")
    (case / "case.yaml").write_text(text)
    for args in (("golden", "cases"), ("validate", "cases/c/case.yaml")):
        r = cli(*args)
        assert r.returncode == 1, r
        found = problems(r)
        assert [(p.line, p.col) for p in found] == [position(text, "./nope"), position(text, "standrd")], r.err
        assert all(p.is_in(case / "case.yaml", cli.cwd) for p in found), r.err
        assert "no profile file at" in found[0].msg and "did you mean 'standard'?" in found[1].msg, r.err
