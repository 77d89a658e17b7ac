"""Input a user may throw at the engine: wrong encodings, binary files,
missing paths, folders, a 10 MB file, empty input, and a user pattern that
would backtrack for ever.  Each ends with a clear message and exit 1 (or
success), never a traceback or a hang."""

import gzip
import json

import pytest

from conftest import write
from testdata import corpus_files

READERS = [
    ("compress",),
    ("compress", "--json"),
    ("diff",),
    ("explain",),
    ("stats",),
]


def _run(cli, reader, path, **kw):
    cmd, *flags = reader
    return cli(cmd, path, *flags, **kw)


@pytest.mark.parametrize("reader", READERS, ids=" ".join)
def test_latin1_file(cli, reader):
    (cli.cwd / "latin.md").write_bytes("Le café est prêt.\nÇa marche.\n".encode("latin-1"))
    r = _run(cli, reader, "latin.md")
    assert r.returncode == 1, r
    assert r.out == ""
    [line] = r.err.splitlines()
    assert line.startswith("latin.md:"), line
    assert "UTF-8" in line and "convert" in line.lower(), line


def test_latin1_file_error_points_at_the_first_bad_byte(cli):
    (cli.cwd / "latin.md").write_bytes("ok line\nLe café\n".encode("latin-1"))
    r = cli("compress", "latin.md")
    assert r.returncode == 1
    col = "Le café".index("é") + 1  # columns count characters from 1
    assert r.err.startswith(f"latin.md:2:{col}: "), r.err


def test_latin1_on_stdin(cli):
    r = cli("compress", "-", input="café\n".encode("latin-1"))
    assert r.returncode == 1
    assert r.out == ""
    assert "<stdin>" in r.err and "UTF-8" in r.err


def test_utf16_file_is_told_to_convert_to_utf8(cli):
    """A file saved as UTF-16 (Windows "Unicode") is text in another encoding,
    and the fix is the same as for latin-1."""
    (cli.cwd / "wide.md").write_bytes("Never push to main.\n".encode("utf-16"))
    r = cli("compress", "wide.md")
    assert r.returncode == 1
    assert "wide.md" in r.err
    assert "UTF-8" in r.err, r.err


@pytest.mark.parametrize("reader", READERS, ids=" ".join)
def test_binary_file_with_nul_bytes(cli, reader):
    (cli.cwd / "blob.md").write_bytes(b"PK\x03\x04\x00\x00binary\x00\x01\x02 but mostly ascii\n")
    r = _run(cli, reader, "blob.md")
    assert r.returncode == 1, r
    assert r.out == ""
    [line] = r.err.splitlines()
    assert line.startswith("blob.md"), line
    assert "binary" in line.lower(), line


def test_gzip_file(cli):
    (cli.cwd / "rules.md.gz").write_bytes(gzip.compress(corpus_files()[0].read_bytes()))
    r = cli("compress", "rules.md.gz")
    assert r.returncode == 1
    assert r.out == ""
    assert "rules.md.gz" in r.err and len(r.err.splitlines()) == 1


def test_binary_on_stdin(cli):
    r = cli("compress", "-", input=b"\x00\x01\x02\x03")
    assert r.returncode == 1
    assert "<stdin>" in r.err


@pytest.mark.parametrize("reader", READERS, ids=" ".join)
def test_missing_file(cli, reader):
    r = _run(cli, reader, "nosuch.md")
    assert r.returncode == 1, r
    assert r.out == ""
    [line] = r.err.splitlines()
    assert line.startswith("nosuch.md: "), line


@pytest.mark.parametrize("reader", [r for r in READERS if r[0] != "stats"], ids=" ".join)
def test_folder_instead_of_file(cli, reader):
    (cli.cwd / "rules").mkdir()
    r = _run(cli, reader, "rules")
    assert r.returncode == 1, r
    assert r.out == ""
    [line] = r.err.splitlines()
    assert line.startswith("rules: "), line
    assert "folder" in line or "directory" in line, line


def test_stats_stops_at_a_bad_file_in_a_folder(cli):
    write(cli.cwd, "rules/good.md", "Keep the tests green.\n")
    (cli.cwd / "rules" / "bad.md").write_bytes("café\n".encode("latin-1"))
    r = cli("stats", "rules")
    assert r.returncode == 1
    assert "bad.md" in r.err and "UTF-8" in r.err


# ---------------------------------------------------------------- empty and large


def test_empty_stdin(cli):
    r = cli("compress", "-", input=b"")
    assert r.returncode == 0, r
    assert r.out_bytes == b"" and r.err == ""
    fig = json.loads(cli("compress", "-", "--json", input=b"").out)
    assert fig["text"] == ""
    assert fig["chars_before"] == fig["chars_after"] == fig["tokens_before"] == fig["tokens_after"] == 0


@pytest.mark.parametrize("level", ["off", "aggressive"])
def test_empty_file(cli, level):
    (cli.cwd / "empty.md").write_bytes(b"")
    r = cli("compress", "empty.md", "--level", level)
    assert r.returncode == 0, r
    assert r.out_bytes == b""


@pytest.mark.slow
def test_a_large_file_compresses(cli):
    """A few megabytes of real rules in one file (the 10 MB figures, time
    and linearity, are bench/speed.py's: `python3 bench/speed.py --only big`)."""
    files = corpus_files()
    parts, size = [], 0
    while size < 2_000_000:
        for f in files:
            data = f.read_bytes()
            parts.append(data)
            size += len(data)
    data = b"".join(parts)
    (cli.cwd / "big.md").write_bytes(data)
    r = cli("compress", "big.md", "--level", "standard", "-o", "out.md", timeout=900)
    assert r.returncode == 0, r
    assert r.err == ""
    out = (cli.cwd / "out.md").read_bytes()
    assert 0 < len(out) < len(data)


# ---------------------------------------------------------------- runaway user patterns at run time

SLOW_LEVEL = """kind: level
name: slow
extends: light
description: a transform that backtracks for ever on a long run of a
transforms:
  - name: runaway
    kind: regex
    pattern: '(?:a|aa)+$'
    replace: 'z'
"""

SLOW_CATEGORY = """kind: protect
name: slowcat
description: a category that backtracks for ever on a long run of a
patterns: ['(?:a|aa)+$']
examples: {match: [aa]}
"""


@pytest.mark.parametrize("where", ["level transform", "protect category"])
def test_runaway_user_pattern_is_stopped_and_reported(cli, where):
    if where == "level transform":
        write(cli.cwd, "slow.yaml", SLOW_LEVEL)
        extra = "level: ./slow.yaml\n"
    else:
        write(cli.cwd, "slow.yaml", SLOW_CATEGORY)
        extra = "protect:\n  add: [./slow.yaml]\n"
    write(cli.cwd, "p.yaml", "kind: profile\nname: slowp\nextends: default\npattern_timeout_ms: 50\n" + extra)
    crafted = "a" * 60 + "!\n"
    # harmless input: the profile works
    ok = cli("compress", "-", "--profile", "p.yaml", input="Keep the tests green.\n", timeout=60)
    assert ok.returncode == 0, ok
    # crafted input: stopped by the time budget, reported, no hang
    r = cli("compress", "-", "--profile", "p.yaml", input=crafted, timeout=60)
    assert r.returncode == 1, r
    assert r.out == ""
    [line] = r.err.splitlines()
    assert "slowp" in line and "time" in line and "validate" in line, line
