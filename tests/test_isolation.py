"""The test run never writes outside its temporary folders: HOME, the XDG
folders, the engine's cache and state and the agent's config folder all
point into one temporary folder for the whole run, and the run fails when
the real home's engine folders changed (conftest.pytest_sessionfinish)."""

import os
import subprocess
import sys
import textwrap

from conftest import _REAL_HOME, ISOLATED, REPO


def test_every_process_of_the_run_lives_in_a_temporary_home():
    for name in ISOLATED:
        value = os.environ[name]
        assert not value.startswith(os.path.join(_REAL_HOME, "")), f"{name}={value} is inside the real home"
    assert os.path.expanduser("~") == os.environ["HOME"] != _REAL_HOME
    from engine.base.paths import cache_dir_str, state_dir_str

    assert cache_dir_str() == os.environ["ENGINE_CACHE_DIR"] and state_dir_str() == os.environ["ENGINE_STATE_DIR"]


def test_a_run_that_writes_into_the_real_home_fails(tmp_path):
    """The check itself can fail: a run whose test writes into (what it
    takes as) the real home's cache ends with status 1 and names the path."""
    home = tmp_path / "home"
    (home / ".cache" / "rules-engine").mkdir(parents=True)
    tests = tmp_path / "t"
    tests.mkdir()
    (tests / "conftest.py").write_text((REPO / "tests" / "conftest.py").read_text())
    (tests / "forkrun.py").write_text((REPO / "tests" / "forkrun.py").read_text())
    (tests / "test_bad.py").write_text(textwrap.dedent(f"""
        import os

        import forkrun

        def test_writes_home():
            open({str(home / '.cache' / 'rules-engine' / 'leak')!r}, "w").write("x")

        def test_the_zygote_lives_in_the_temporary_home_too():
            # a run without workers imports forkrun before the home is isolated
            assert forkrun.completed(["--version"]).returncode == 0
            if not forkrun.ENABLED:
                return  # no zygote: every call was a fresh interpreter
            environ = open(f"/proc/{{forkrun._ZYGOTE['proc'].pid}}/environ", "rb").read().split(b"\\0")
            assert ("HOME=" + os.environ["HOME"]).encode() in environ and os.environ["HOME"] != {str(home)!r}
        """))
    # no plugin of this interpreter's is loaded: the run's conftest is what is tested (0.9 s -> 0.2 s of CPU)
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(REPO), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    env.pop("ENGINE_TESTS_REAL_HOME")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          "-p", "no:randomly", str(tests)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "real-home check" in run.stdout and "leak" in run.stdout, run.stdout
    assert "2 passed" in run.stdout, run.stdout  # the zygote's test too
