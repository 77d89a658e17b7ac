"""A text too large for glibc to keep its freed copies makes the process keep
them (engine/text/heap.py): whole-text copies of a 10 MB text with an emoji
reuse memory instead of faulting in fresh pages at every stage."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.core.profile import load_profile
from engine.text import pipeline

REPO = Path(__file__).resolve().parent.parent

GLIBC = sys.platform.startswith("linux") and bool(os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else "")


def test_the_command_holds_freed_blocks_and_the_library_does_not(monkeypatch):
    """A process-wide malloc setting is a command's to choose (engine
    compress), never imposed by the library on its caller's process."""
    from engine.cli.fastpath import as_command
    from engine.text import heap

    seen = []
    monkeypatch.setattr(heap, "hold_freed_blocks", lambda text, *_: seen.append(len(text)))
    pipeline.compress(load_profile(None, "standard"), "Some text.\n")
    assert seen == []
    as_command(lambda text: text, "Some text.\n")
    assert seen == [len("Some text.\n")]


def test_small_text_changes_nothing_and_loads_no_ctypes(tmp_path):
    code = (
        "import sys; from engine.text.heap import hold_freed_blocks; "
        "r = hold_freed_blocks('x' * 9_000_000 + 'é', 8, 1024); "  # 1 byte a character: 9 MB, below the ceiling
        "print(r, 'ctypes' in sys.modules)"
    )
    out = _run(code, tmp_path)
    assert out.split() == ["False", "False"]


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_copies_of_a_huge_text_reuse_freed_memory(tmp_path):
    # 9 M characters with one above U+FFFF: a 36 MB buffer, above glibc's
    # 32 MiB ceiling.  Five copies made and freed in turn: with the blocks
    # held, only the first is faulted in (about 9,000 pages), not all five.
    code = (
        "import resource; from engine.text.heap import hold_freed_blocks\n"
        "t = 'a' * 9_000_000 + '\\U0001F600'\n"
        "held = hold_freed_blocks(t, 8, 1024)\n"
        "r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "for i in range(5):\n"
        "    c = t.replace('a', 'b')\n"
        "    del c\n"
        "print(held, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0)\n"
    )
    held, faults = _run(code, tmp_path).split()
    assert held == "True"
    assert int(faults) < 2 * 9_000_000 * 4 // 4096, faults  # not five copies' worth


def _run(code, tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), ENGINE_CACHE_DIR=str(tmp_path / "c"), ENGINE_STATE_DIR=str(tmp_path / "s"),
               XDG_CACHE_HOME=str(tmp_path / "x"), CLAUDE_CONFIG_DIR=str(tmp_path / "cl"), PYTHONPATH=str(REPO))
    env.pop("MALLOC_MMAP_THRESHOLD_", None)
    env.pop("MALLOC_TRIM_THRESHOLD_", None)
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout
