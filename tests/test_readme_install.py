"""The README's install-and-run command, exactly as written, works with the
system Python of Debian and Ubuntu as they ship: /usr/bin/python3 first on
the PATH, marked externally managed (PEP 668), whose pip refuses to install
outside a virtual environment. Run in a copy of the checkout as a clone has
it, in a throwaway HOME; the dependencies come from the package index pip is
configured with (PyPI in CI). Slow: a venv and a pip install (about 20 s).
"""

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support.agent import REPO, agent_env

pytestmark = pytest.mark.slow

SYSTEM_PYTHON = Path("/usr/bin/python3")


def readme_install_command():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return re.search(r"## Install and run.*?```sh\n(.*?)\n```", readme, re.S).group(1).strip()


def _debian_env(home):
    if not SYSTEM_PYTHON.exists() or not glob.glob("/usr/lib/python3*/EXTERNALLY-MANAGED"):
        pytest.skip("needs a system /usr/bin/python3 marked EXTERNALLY-MANAGED (Debian 12, Ubuntu 23.04 and later)")
    env = agent_env(home, {"PYTHONPATH": None, "VIRTUAL_ENV": None, "PYENV_VERSION": None, "PYTHONPYCACHEPREFIX": None})
    env["PATH"] = "/usr/bin:/bin"  # python3 is the distribution's
    # (no PYTHONPYCACHEPREFIX, as on the user's machine: the engine the command runs reads the bytecode
    # pip compiled into the venv, instead of compiling it all again into the run's folder)
    return env


def _clone(dest):
    skip = shutil.ignore_patterns(".git", ".agent", "__pycache__", "*.egg-info", "build", "dist", ".venv",
                                  ".pytest_cache", ".hypothesis", "results")
    shutil.copytree(REPO, dest, ignore=skip)
    return dest


def test_the_readme_install_and_run_command_works_with_the_system_python(tmp_path):
    env = _debian_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    clone = _clone(tmp_path / "clone")
    # the machine is what the README speaks of: its pip refuses a plain install
    refused = subprocess.run(["sh", "-c", "python3 -m pip install --dry-run --no-deps ."], cwd=clone, env=env,
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stderr, refused

    command = readme_install_command()
    assert "\n" not in command  # one command, as the heading says
    run = subprocess.run(["sh", "-c", command], cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, f"{command}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    # the engine installed in the clone's venv, on the system Python, printed the example compressed
    assert os.path.realpath(clone / ".venv" / "bin" / "python").startswith("/usr/bin/")
    again = subprocess.run([str(clone / ".venv" / "bin" / "engine"), "compress", "examples/CLAUDE.md", "--level",
                            "standard"], cwd=clone, env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stdout.strip(), again
    assert run.stdout.endswith(again.stdout)
    assert "make test   # at least 80% coverage" in again.stdout  # the example's code block, kept
