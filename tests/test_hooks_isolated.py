"""The engine's own commands run the engine, whatever the project holds.

An agent runs its hooks, and the commands the engine writes for it (a stub's
read-back, Codex's `engine cache run` rewrite, Gemini's tail call), in the
project's folder; a project's agent settings may set their environment
(Claude Code's `env`, Gemini CLI's `.env`: tests/test_project_env.py).
`python -m engine.cli` puts the working folder first on the import path, and
$PYTHONPATH (an empty entry meaning the working folder) comes before the
installed engine: a cloned repository holding an `engine/` package would run
its own code as the engine's hook.  And an interpreter that is not isolated
(a script started by its `#!` line, as pip writes them) imports the
`sitecustomize.py` $PYTHONPATH names before the script's first line.  Here
such a package or module writes a marker when imported, and each command
the engine writes runs in its folder with PYTHONPATH pointing at it.
"""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from engine.ccm import selfcmd
from engine.hooks import hookcmd
from support.agent import REPO
from support.plugin import HOOK, START, plugin_env, run_hook, wait_for, wait_gone, warm_cache

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX")


def _hostile_project(tmp_path):
    """A project with its own `engine`, `pip` and `venv` packages and its own
    `sitecustomize` module, each writing tmp_path/PWNED-<name> when imported."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "sitecustomize.py").write_text(f"open({str(tmp_path / 'PWNED-sitecustomize')!r}, 'w').write('ran')\n",
                                              encoding="utf-8")
    for name in ("engine", "engine/cli", "pip", "venv"):
        pkg = project / name
        pkg.mkdir(parents=True, exist_ok=True)
        marker = tmp_path / f"PWNED-{name.replace('/', '.')}"
        code = f"open({str(marker)!r}, 'w').write('ran')\n"
        (pkg / "__init__.py").write_text(code, encoding="utf-8")
        (pkg / "__main__.py").write_text(code, encoding="utf-8")
    (project / "engine" / "cli" / "main.py").write_text(
        f"open({str(tmp_path / 'PWNED-engine.cli.main')!r}, 'w').write('ran')\ndef main(argv=None):\n    return 0\n",
        encoding="utf-8")
    return project


def _markers(tmp_path):
    return sorted(p.name for p in tmp_path.glob("PWNED-*"))


def _env(project, **extra):
    """The test's environment, with PYTHONPATH naming the project (and, by
    its empty entry, the working folder) as a project's settings could."""
    env = dict(os.environ, PYTHONPATH=os.pathsep + str(project), **extra)
    env.pop("ENGINE_PROFILE", None)
    return env


def _start(project, cwd):
    return json.dumps({**START, "cwd": str(cwd), "transcript_path": str(project / "t.jsonl")})


@pytest.mark.parametrize("form", ["as installed", "python -I -m"])
def test_the_hook_command_runs_the_engine_not_the_projects_package(tmp_path, monkeypatch, form):
    project = _hostile_project(tmp_path)
    if form == "python -I -m":  # no script beside the interpreter (a --user install of the system Python)
        monkeypatch.setattr(hookcmd, "_runs_this_python", lambda script: False)
    command = hookcmd.hook_command(agent="claude-code")
    proc = subprocess.run(command, shell=True, cwd=project, input=_start(project, project), capture_output=True,
                          text=True, timeout=60, env=_env(project))
    assert _markers(tmp_path) == [], command
    assert proc.returncode == 0 and not proc.stderr, proc
    assert "rules-engine" in proc.stdout, proc  # the engine answered (its effort guidance)
    argv = shlex.split(command)
    base = [sys.executable, *selfcmd.interpreter_options()]
    assert argv[:len(base)] == base and base[1] == "-I", command  # isolated, whichever form
    rest = argv[len(base):]
    assert (form == "python -I -m") == (rest[:3] == ["-m", "engine.cli", "hook"]), command
    if form == "as installed":  # pip copied scripts/engine-hook at install time: the copy is this checkout's
        installed = Path(rest[0]).read_text().split("\n", 1)[1]
        assert installed == (REPO / "scripts" / "engine-hook").read_text().split("\n", 1)[1], \
            "the installed engine-hook is not this checkout's: reinstall (pip install -e .)"


@pytest.mark.parametrize("form", ["as installed", "python -I -m"])
def test_the_engines_own_command_in_a_stub_runs_the_engine(tmp_path, monkeypatch, form):
    project = _hostile_project(tmp_path)
    if form == "python -I -m":  # no `engine` script beside the interpreter
        monkeypatch.setattr(selfcmd.os.path, "isfile", lambda path: False)
    proc = subprocess.run(selfcmd.engine_shell() + " --version", shell=True, cwd=project, capture_output=True,
                          text=True, timeout=60, env=_env(project))
    assert _markers(tmp_path) == [], selfcmd.engine_shell()
    assert proc.returncode == 0 and proc.stdout.startswith("engine "), proc
    script = Path(sys.executable).parent / "engine"
    base = [sys.executable, *selfcmd.interpreter_options()]
    assert selfcmd.engine_argv() == ([*base, str(script)] if form == "as installed" else [*base, "-m", "engine.cli"])


def test_the_engines_commands_keep_their_bytecode_where_this_python_does(tmp_path, monkeypatch):
    """-I drops PYTHONPYCACHEPREFIX: a command the engine writes names the
    folder itself, and the engine it runs writes no bytecode beside its
    sources (here: this checkout), whichever variables the project sets."""
    prefix = tmp_path / "pycache"
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    command = hookcmd.hook_command(agent="claude-code")
    argv = shlex.split(command)
    assert argv[1:4] == ["-I", "-X", f"pycache_prefix={prefix}"], command
    assert hookcmd.parse(command) == {"agent": "claude-code", "event": None, "profile": None}
    assert selfcmd.engine_argv()[1:4] == ["-I", "-X", f"pycache_prefix={prefix}"]
    project = _hostile_project(tmp_path)
    env = _env(project, PYTHONPYCACHEPREFIX=str(project / "theirs"), PYTHONDONTWRITEBYTECODE="")
    proc = subprocess.run(command, shell=True, cwd=project, input=_start(project, project), capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 0 and "rules-engine" in proc.stdout, proc
    assert (prefix / str(REPO).lstrip("/") / "engine" / "hooks").is_dir(), sorted(prefix.rglob("*"))[:5]
    assert not (project / "theirs").exists()
    monkeypatch.setattr(sys, "pycache_prefix", None)
    assert shlex.split(hookcmd.hook_command(agent="claude-code"))[1:3] != ["-I", "-X"]


def test_uninstall_still_knows_the_hook_command_written_before_isolation(tmp_path):
    bindir = Path(sys.executable).parent
    shapes = ([sys.executable, "-m", "engine.cli", "hook"], [sys.executable, "-I", "-m", "engine.cli", "hook"],
              [str(bindir / "engine-hook")], [sys.executable, "-I", str(bindir / "engine-hook")],
              [str(bindir / "engine"), "hook"], [sys.executable, "-I", str(bindir / "engine"), "hook"])
    for shape in shapes:
        assert hookcmd.parse(shlex.join([*shape, "--agent", "codex"])) == {"agent": "codex", "event": None,
                                                                         "profile": None}, shape
    for prefixed in ([sys.executable, "-I", "-X", "pycache_prefix=/p", str(bindir / "engine-hook")],
                     [sys.executable, "-I", "-X", "pycache_prefix=/p", "-m", "engine.cli", "hook"]):
        assert hookcmd.parse(shlex.join(prefixed)) == {"agent": None, "event": None, "profile": None}, prefixed
    for shape in ([sys.executable, "-I", "-m", "engine.cli", "hook-x"], [sys.executable, "-I", "engine-hook"],
                  [sys.executable, "-I", "-X", "pycache_prefix=p", str(bindir / "engine-hook")],
                  [sys.executable, "-I", "-X", "dev", str(bindir / "engine-hook")],
                  [sys.executable, "-I", str(bindir / "engine")], [sys.executable, "-I", str(bindir / "other")],
                  [sys.executable, "-E", str(bindir / "engine-hook")]):
        assert hookcmd.parse(shlex.join(shape)) is None, shape


@pytest.mark.slow
def test_the_plugin_builds_and_runs_the_engine_not_the_projects_packages(tmp_path):
    project = _hostile_project(tmp_path)
    # a warm compiled-profile cache: the engine answers without compiling the built-in profile first
    env = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=sys.executable, PYTHONPATH=os.pathsep + str(project),
                     ENGINE_CACHE_DIR=warm_cache(tmp_path))
    data = tmp_path / "data"
    rc, out, _ = run_hook(env, json.loads(_start(project, project)), cwd=project)  # starts the build
    assert rc == 0 and "preparing" in out, out
    wait_for(data / "bootstrap.log")
    wait_gone(data / "bootstrap.lock")
    assert (data / "venv" / ".plugin-ready").is_file(), (data / "bootstrap.log").read_text()
    rc, out, err = run_hook(env, json.loads(_start(project, project)), cwd=project)
    assert rc == 0 and "rules-engine" in out, (out, err)
    assert _markers(tmp_path) == []


def _ready_pip_environment(data):
    """The plugin's environment as its build leaves it (bin/plugin-hook,
    build): a venv, its `engine-hook` the script pip writes (`#!` naming the
    venv's interpreter), the ready file naming that interpreter.  Its
    packages are this checkout's engine copied as its wheel lays it out (the
    YAML folders under engine/builtin/; the engine writes its bytecode
    beside it) and this interpreter's (a .pth file), not pip-installed: the
    suite stays offline."""
    import shutil
    import sysconfig

    venv = data / "venv"
    subprocess.run([sys.executable, "-I", "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    shutil.copytree(REPO / "engine", Path(site) / "engine", ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("pipelines", "protect", "dictionaries", "schemas"):
        shutil.copytree(REPO / folder, Path(site) / "engine" / "builtin" / folder)
    Path(site, "engine.pth").write_text(f"{sysconfig.get_paths()['purelib']}\n", encoding="utf-8")
    script = (REPO / "scripts" / "engine-hook").read_text(encoding="utf-8").replace("#!python", f"#!{python}", 1)
    (venv / "bin" / "engine-hook").write_text(script, encoding="utf-8")
    (venv / "bin" / "engine-hook").chmod(0o755)
    version = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
    (venv / ".plugin-ready").write_text(f"{version}\n{python}\n", encoding="utf-8")


def test_the_plugins_ready_environment_runs_isolated(tmp_path):
    """pip's engine-hook started by its `#!` line would import the
    sitecustomize.py the project's PYTHONPATH names, before its first line."""
    project = _hostile_project(tmp_path)
    _ready_pip_environment(tmp_path / "data")
    env = plugin_env(tmp_path, ENGINE_CACHE_DIR=warm_cache(tmp_path))
    env["PYTHONPATH"] = os.pathsep + str(project)  # as the project's settings `env` gives it
    rc, out, err = run_hook(env, json.loads(_start(project, project)), cwd=project)
    assert _markers(tmp_path) == []
    assert rc == 0 and "rules-engine" in out, (out, err)  # the engine answered (its effort guidance)


@pytest.mark.parametrize("settings", ["names", "over-a-megabyte"])
def test_a_projects_settings_never_choose_the_plugins_interpreter(tmp_path, settings):
    """ENGINE_PLUGIN_PYTHON (and the venv and pip arguments) are the user's
    dev overrides; Claude Code hands a project's settings `env` to every
    hook, so where the project's settings name one, or are too large to look
    into, the plugin drops them and builds as usual (here: a python3 that
    fails)."""
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    chosen = tmp_path / "projects-python"
    chosen.write_text(f"#!/bin/sh\necho ran > '{tmp_path}/PWNED-interpreter'\nexec {sys.executable} \"$@\"\n")
    chosen.chmod(0o755)
    if settings == "names":
        (project / ".claude" / "settings.json").write_text(json.dumps({"env": {"ENGINE_PLUGIN_PYTHON": str(chosen)}}))
    else:  # too large to look into: may name anything
        (project / ".claude" / "settings.json").write_text(json.dumps({"env": {}}) + " " * (1 << 20))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").write_text("#!/bin/sh\necho no venv here >&2\nexit 1\n")
    (bindir / "python3").chmod(0o755)
    env = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=chosen, CLAUDE_PROJECT_DIR=project,
                     PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}",
                     PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS="")
    rc, out, _ = run_hook(env, json.loads(_start(project, project)), cwd=project)
    assert rc == 0 and "preparing" in out, out
    wait_for(tmp_path / "data" / "bootstrap.failed", 300)
    assert _markers(tmp_path) == []
    # a file too large to look into may name PATH too: then the system's python3
    # builds (and finds no package here), not the one first on this PATH
    log = (tmp_path / "data" / "bootstrap.log").read_text()
    assert ("no venv here" in log) == (settings == "names"), log


def _project_commands(tmp_path, project, names):
    """The project's own `names` in project/.x, each writing
    tmp_path/PWNED-<name> and then running the system's."""
    folder = project / ".x"
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_text(f"#!/bin/sh\necho ran > '{tmp_path}/PWNED-{name}'\nexec /usr/bin/env -i "
                                   f"PATH=/usr/bin:/bin {name} \"$@\"\n")
        (folder / name).chmod(0o755)


def test_a_projects_path_never_chooses_the_plugins_commands(tmp_path):
    """Claude Code gives the hooks a project's PATH (measured with 2.1.330):
    here `.x` first, relative to the project's folder where the hooks run.
    bin/plugin-hook's own commands (wc and grep looking at the settings,
    head, mkdir ... while the environment is not ready) are the system's."""
    project = tmp_path / "project"
    names = ("wc", "grep", "head", "mkdir", "date", "find", "rm", "python3")
    _project_commands(tmp_path, project, names)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"env": {"PATH": f".x{os.pathsep}/usr/bin:/bin"}}))
    env = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=sys.executable, CLAUDE_PROJECT_DIR=project,
                     PATH=f".x{os.pathsep}{os.environ['PATH']}")  # the user's interpreter; the project's PATH
    rc, out, err = run_hook(env, json.loads(_start(project, project)), cwd=project)
    assert rc == 0 and "preparing" in out, (out, err)
    wait_for(tmp_path / "data" / "bootstrap.log")
    wait_gone(tmp_path / "data" / "bootstrap.lock")
    assert _markers(tmp_path) == []


def test_a_json_escape_in_the_projects_settings_hides_no_variable_from_the_plugin(tmp_path):
    """"\u0045NGINE_PLUGIN_PYTHON" is ENGINE_PLUGIN_PYTHON to the agent, which
    gives it to the hooks: a file holding an escape may name any variable.
    The one named is dropped (and PATH is the system's): the build runs the
    system's python3, which finds no package here (PIP_NO_INDEX) and fails."""
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    chosen = tmp_path / "projects-python"
    chosen.write_text(f"#!/bin/sh\necho ran > '{tmp_path}/PWNED-interpreter'\nexec {sys.executable} \"$@\"\n")
    chosen.chmod(0o755)
    (project / ".claude" / "settings.json").write_text('{"env": {"\\u0045NGINE_PLUGIN_PYTHON": "%s"}}' % chosen)
    assert json.loads((project / ".claude" / "settings.json").read_text()) == {"env": {"ENGINE_PLUGIN_PYTHON": str(chosen)}}
    env = plugin_env(tmp_path, ENGINE_PLUGIN_PYTHON=chosen, CLAUDE_PROJECT_DIR=project, PIP_NO_INDEX="1",
                     PIP_CONFIG_FILE=os.devnull, PIP_FIND_LINKS="")
    rc, out, _ = run_hook(env, json.loads(_start(project, project)), cwd=project)
    assert rc == 0 and "preparing" in out, out
    wait_for(tmp_path / "data" / "bootstrap.log")
    wait_gone(tmp_path / "data" / "bootstrap.lock", 300)
    assert _markers(tmp_path) == []
    assert (tmp_path / "data" / "bootstrap.failed").is_file(), (tmp_path / "data" / "bootstrap.log").read_text()


def test_a_projects_env_file_never_chooses_where_the_gemini_extension_runs_from(tmp_path):
    """Gemini CLI runs bin/plugin-hook for its extension and loads a project's
    `.env` into every hook's environment for what is not set, and it sets no
    CLAUDE_PLUGIN_DATA: a project naming one there, with a planted ready
    environment whose engine-hook writes a marker, would run it.  The
    variable is dropped: the default data folder serves (not ready there: a
    build starts, with a python3 that fails)."""
    project = tmp_path / "project"
    planted = project / "fakedata"
    (planted / "venv" / "bin").mkdir(parents=True)
    version = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
    (planted / "venv" / ".plugin-ready").write_text(f"{version}\n{sys.executable}\n")
    hook = planted / "venv" / "bin" / "engine-hook"
    hook.write_text(f"#!/bin/sh\necho ran > '{tmp_path}/PWNED-planted'\n")
    hook.chmod(0o755)
    (project / ".env").write_text(f"CLAUDE_PLUGIN_DATA={planted}\n")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").write_text("#!/bin/sh\necho no venv here >&2\nexit 1\n")
    (bindir / "python3").chmod(0o755)
    env = plugin_env(tmp_path, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}", GEMINI_PROJECT_DIR=project,
                     CLAUDE_PLUGIN_ROOT=None, CLAUDE_PLUGIN_DATA=planted)  # as Gemini gives it: the .env's value
    proc = subprocess.run([str(HOOK), "--agent", "gemini"], input=_start(project, project), cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "preparing" in proc.stdout, proc
    wait_for(tmp_path / "home" / ".local" / "share" / "rules-engine-plugin" / "bootstrap.failed")
    assert _markers(tmp_path) == []
