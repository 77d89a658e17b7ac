"""Where the run keeps its scratch (tests/conftest.py): a memory file system
when it has room and runs programs, the user's own choice of TMPDIR or
--basetemp always, and every process the run starts has a TMPDIR inside the
run's folder."""

import os
import shutil
import subprocess
import sys
import tempfile
from types import SimpleNamespace

import pytest

from conftest import IN_MEMORY, REPO, RUN_PREFIX, remove_stale_runs, roomy_and_executable, scratch_root

# Mounts made in a mount namespace of their own (`unshare -rm`): nothing
# outside the test sees them, and they go when the process ends.
CHECK = "import sys; sys.path.insert(0, sys.argv[2]); import conftest; print(conftest.roomy_and_executable(sys.argv[1]))"


def _verdict_on_a_mount(tmp_path, options):
    if not shutil.which("unshare"):
        pytest.skip("no unshare(1) to mount a file system of the test's own")
    folder = tmp_path / "mnt"
    folder.mkdir()
    script = 'mount -t tmpfs -o "$1" none "$2" && exec "$3" -c "$4" "$2" "$5"'
    run = subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", options, str(folder), sys.executable, CHECK,
                          str(REPO / "tests")], capture_output=True, text=True, timeout=60)
    if run.returncode != 0 and "Traceback" not in run.stderr:  # unshare or mount refused, before any Python ran
        pytest.skip(f"this machine does not let a test mount in a namespace of its own: {run.stderr.strip()}")
    assert run.returncode == 0, run
    return run.stdout.strip()


def test_a_roomy_memory_folder_that_runs_programs_is_taken(tmp_path):
    assert _verdict_on_a_mount(tmp_path, "size=3g") == "True"


def test_a_noexec_memory_folder_is_not(tmp_path):
    assert _verdict_on_a_mount(tmp_path, "size=3g,noexec") == "False"


def test_a_small_memory_folder_is_not(tmp_path):
    assert _verdict_on_a_mount(tmp_path, "size=1g") == "False"


def test_a_folder_that_is_not_there_is_not(tmp_path):
    assert roomy_and_executable(str(tmp_path / "nowhere")) is False


def test_the_users_tmpdir_or_basetemp_is_kept(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    assert scratch_root(SimpleNamespace(option=SimpleNamespace(basetemp=None))) == str(tmp_path)
    monkeypatch.delenv("TMPDIR")
    monkeypatch.setattr(tempfile, "tempdir", None)
    chosen = scratch_root(SimpleNamespace(option=SimpleNamespace(basetemp=str(tmp_path / "b"))))
    assert chosen == tempfile.gettempdir() != IN_MEMORY


def test_every_process_of_the_run_has_a_temporary_folder_inside_the_runs_own():
    tmpdir = os.environ["TMPDIR"]
    assert os.path.isdir(tmpdir) and os.path.basename(tmpdir) == "tmpdir"
    assert os.path.dirname(tmpdir) == os.path.dirname(os.environ["HOME"])  # the run's folder, removed at its end
    out = subprocess.run([sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"],
                         capture_output=True, text=True, timeout=60).stdout.strip()
    assert out == tmpdir


def test_the_folder_of_a_killed_run_is_removed_and_no_other(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # its pid names no process now
    killed, alive, unsaid = (tmp_path / f"{RUN_PREFIX}{n}" for n in ("killed", "alive", "unsaid"))
    for folder, owner in ((killed, gone.pid), (alive, os.getpid()), (unsaid, None)):
        (folder / "home").mkdir(parents=True)
        if owner is not None:
            (folder / "owner").write_text(str(owner))
    (tmp_path / "someone-elses").mkdir()
    (tmp_path / "someone-elses" / "owner").write_text(str(gone.pid))
    remove_stale_runs(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, unsaid.name, "someone-elses"])
