"""The suite's data lives in the repository, with its sources and licences,
and nothing reads data from outside it.

- Every file under tests/data/corpus and tests/data/transcripts is listed in
  its SOURCES.tsv (repository, path, commit), its bytes are the ones listed
  (SHA-256), it names an SPDX licence expression and its licence files are
  there; nothing listed is missing.
- tests/testdata.py unpacks a transcript to exactly the recorded bytes,
  the same file for every caller.
- No test, fixture or bench module names a path outside the repository
  (an absolute path of a developer's machine, or a folder beside the
  checkout): a clone alone runs the suite.
"""

import csv
import hashlib
import re
from pathlib import Path

import pytest

import testdata

REPO = Path(__file__).resolve().parent.parent
SPDX = re.compile(r"^[A-Za-z0-9.+-]+(?: (?:AND|OR) [A-Za-z0-9.+-]+)*$")
KNOWN = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "GPL-2.0-only", "GPL-3.0-only", "AGPL-3.0-only",
         "CC-BY-4.0"}


def _rows(folder):
    with open(testdata.DATA / folder / "SOURCES.tsv", encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


@pytest.mark.parametrize("folder,files,unpack", [
    ("corpus", lambda: testdata.corpus_files(), lambda name: testdata.CORPUS / name),
    ("transcripts", lambda: [Path(n) for n in testdata.transcript_names()], testdata.transcript),
])
def test_every_recorded_file_has_its_source_bytes_and_licence(folder, files, unpack):
    rows = _rows(folder)
    assert sorted(r["file"] for r in rows) == sorted(p.name for p in files())
    for r in rows:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", r["repo"]) and re.fullmatch(r"[0-9a-f]{40}", r["commit"]), r
        assert r["path"] and not r["path"].startswith("/"), r
        assert hashlib.sha256(unpack(r["file"]).read_bytes()).hexdigest() == r["sha256"], r["file"]
        assert SPDX.match(r["license"]), r
        assert set(re.split(r" (?:AND|OR) ", r["license"])) <= KNOWN, r["license"]
        licences = r["license_files"].split()
        assert licences, r
        for rel in licences:
            path = testdata.DATA / rel
            assert path.is_file() and path.stat().st_size > 0, rel
            assert path.parent.name == r["repo"].replace("/", "+"), (rel, r["repo"])


def test_every_agent_session_is_listed_with_its_bytes_and_version():
    """The sessions recorded from other agents (tests/support/samples.py):
    every file under transcripts/<agent>/ listed once (each agent's own
    session, and variants of it), its bytes the ones listed, the version its
    name says the version of its agent's harness."""
    rows = testdata.agent_rows()
    on_disk = sorted(str(p.relative_to(testdata.PACKED)) for p in testdata.PACKED.glob("*/*") if p.is_file())
    assert sorted(r["file"] for r in rows) == on_disk
    assert sorted(testdata.agent_samples()) == sorted({r["agent"] for r in rows})  # each agent's own session
    for r in rows:
        agent = r["agent"]
        variant = re.fullmatch(rf"{re.escape(agent)}/session-{re.escape(r['version'])}(?:-([a-z-]+))?\.jsonl", r["file"])
        assert variant, r["file"]
        data = testdata.agent_transcript(agent, variant.group(1)).read_bytes()
        assert hashlib.sha256(data).hexdigest() == r["sha256"] and len(data) == int(r["bytes"]), r["file"]
        assert data.count(b"\n") == int(r["lines"])
        harness = (REPO / "tests" / "support" / f"{agent}.py").read_text(encoding="utf-8")
        assert f'VERSION = "{r["version"]}"' in harness, (agent, r["version"])


def test_every_licence_file_belongs_to_a_recorded_file():
    named = {rel for folder in ("corpus", "transcripts") for r in _rows(folder) for rel in r["license_files"].split()}
    present = {str(p.relative_to(testdata.DATA)) for p in (testdata.DATA / "licenses").rglob("*") if p.is_file()}
    assert present == named


def test_a_transcript_unpacks_once_to_its_recorded_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_TESTS_DATA", str(tmp_path / "unpacked"))
    name = "13-sessionshare-v2115-api-errors.jsonl"
    first = testdata.transcript(name)
    assert first.parent == tmp_path / "unpacked" and first.read_bytes().count(b"\n") == 86
    stamp = first.stat().st_mtime_ns
    assert testdata.transcript(name) == first and first.stat().st_mtime_ns == stamp  # not unpacked again
    assert sorted(p.name for p in (tmp_path / "unpacked").iterdir()) == [name]  # no temporary file left
    with pytest.raises(FileNotFoundError, match="no recorded transcript"):
        testdata.transcript("99-not-recorded.jsonl")


# Where the data was read from before it lived here: an absolute path outside
# the system's folders that is opened, globbed or made a Path; a module
# constant or an argument's default naming an absolute corpus, transcript or
# shared folder; or a "shared" folder joined to a path (the folder beside the
# checkout on the developers' machines).
SYSTEM = ("/usr/", "/etc/", "/proc/", "/dev/", "/bin/", "/sys/", "/tmp/", "/var/", "/opt/")
OPENED = re.compile(r"""\b(?:Path|glob|open|exists|isfile|isdir|listdir|scandir)\(\s*f?["'](/[^"']*)["']""")
NAMED = re.compile(r"""(?:^\s*[A-Z][A-Z0-9_]*\s*=\s*|\bdefault=)f?["'](/[^"']*(?:corpus|transcript|shared)[^"']*)["']""")
BESIDE = re.compile(r"""/\s*["']shared["']""")


def outside_paths(root):
    """`FILE:LINE: text` of every line under root/tests and root/bench that
    reads data from outside the repository."""
    found = []
    for folder in ("tests", "bench"):
        for path in sorted((Path(root) / folder).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = OPENED.search(line)
                if (m and not m.group(1).startswith(SYSTEM)) or NAMED.search(line) or BESIDE.search(line):
                    found.append(f"{path.relative_to(root)}:{n}: {line.strip()[:100]}")
    return found


def test_no_test_or_bench_reads_a_path_outside_the_repository():
    found = [f for f in outside_paths(REPO) if not f.startswith("tests/test_testdata.py:")]
    assert found == [], "\n".join(found)
