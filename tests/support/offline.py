"""Run a real coding agent (Codex CLI, Gemini CLI, Copilot CLI) offline: in a
network namespace of its own with only a loopback device, talking to a
stand-in of its model API that listens inside that namespace, with a
throwaway HOME, output and exit status captured and a timeout that kills it.

The rule it keeps: nothing leaves the machine and nothing is written outside
the test's folders. The agent process, its hooks and its tools live in a
namespace where no address but 127.0.0.1 exists; the stand-in's listening
socket is created inside that namespace (a socket stays in the namespace it
was made in), so the agent reaches it and nothing else.

How: a single worker thread calls unshare(CLONE_NEWNET) (a thread's namespace
is its own; the rest of the process stays where it was), brings `lo` up,
creates the stand-in's socket and starts the agent, which inherits the
thread's namespace. This needs root (CAP_SYS_ADMIN): without it the test is
skipped, and failed under CI (env CI set), as a missing agent binary is.

The per-agent parts are codex.py, gemini.py and copilot.py; hooks.py has the
logging hook the smoke tests install.
"""

import ctypes
import fcntl
import json
import os
import socket
import struct
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .nodns import NoDNS

REPO = Path(__file__).resolve().parents[2]
AGENT_DIR = REPO / ".agent" / "node_modules"  # where .ci/run (npm --prefix .agent) installs the agents
CLONE_NEWNET, CLONE_NEWNS = 0x40000000, 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
# Variables of this process an agent run never inherits: the engine's, the
# XDG folders, and every agent's or model vendor's (keys, base URLs, homes).
DROPPED_PREFIXES = ("ENGINE_", "XDG_", "CLAUDE", "ANTHROPIC", "OPENAI", "CODEX", "GEMINI", "GOOGLE", "COPILOT",
                    "GH_", "GITHUB_", "AI_AGENT", "PYTHONWARNINGS", "NODE_OPTIONS", "NPM_CONFIG", "HTTP_PROXY",
                    "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "NO_PROXY", "no_proxy")
# ... and by name: a CI's marker. Gemini CLI 0.61.0 runs headless where CI is
# "true", even in a terminal (its isHeadlessMode), so its interactive session
# would answer once and end where CI sets CI=true and run here where it does not.
DROPPED_NAMES = ("CI",)


def missing(why):
    """Skip the test, or fail it under CI, where the agents are installed."""
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


def find_binary(env_var, relative, package):
    """Path of an agent's entry point: $env_var, else AGENT_DIR/relative.
    Skips the test when absent (fails it under CI)."""
    given = os.environ.get(env_var)
    path = Path(given) if given else AGENT_DIR / relative
    if path.is_file():
        return path
    missing(f"no {package} at {path}: `npm install --no-audit --no-fund --prefix .agent {package}` "
            f"in the checkout, or set {env_var}")


# ---------------------------------------------------------------- the namespace


def _check(ret, what):
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _enter_netns():
    """Move the calling thread into a new network namespace with `lo` up,
    and a mount namespace where /etc/resolv.conf names no server (a name
    lookup then fails at once instead of retrying a server it cannot reach
    for seconds; the agents look up their vendors' hosts at start and exit)."""
    libc = ctypes.CDLL(None, use_errno=True)
    _check(libc.unshare(CLONE_NEWNET | CLONE_NEWNS), "unshare(CLONE_NEWNET | CLONE_NEWNS)")
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    _check(libc.mount(b"/dev/null", b"/etc/resolv.conf", None, MS_BIND, None), "mount --bind /dev/null /etc/resolv.conf")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH14x", b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


class Netns:
    """A loopback-only network namespace, entered by one worker thread; what
    `run` calls (a server's socket, a Popen) is made inside it."""

    def __init__(self):
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="netns")
        try:
            self._pool.submit(_enter_netns).result()
        except OSError as err:
            self._pool.shutdown()
            missing(f"no network namespace for the agent (run the tests as root): {err}")

    def run(self, fn, *args, **kw):
        return self._pool.submit(fn, *args, **kw).result()

    def close(self):
        self._pool.shutdown()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------- the environment


def home_env(home, dropped_prefixes, own, extra=None):
    """An agent's environment under `home`: this process's without the
    variables starting with `dropped_prefixes` or named in DROPPED_NAMES;
    HOME, the XDG and engine folders under `home`, this checkout's engine
    first on PYTHONPATH (for hooks that run it); then `own`, the agent's
    own variables; then `extra`, which adds variables, or removes them where
    its value is None."""
    home = Path(home)
    out = {k: v for k, v in os.environ.items() if not k.startswith(dropped_prefixes) and k not in DROPPED_NAMES}
    out.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"), XDG_CACHE_HOME=str(home / ".cache"),
        XDG_STATE_HOME=str(home / ".local" / "state"), XDG_DATA_HOME=str(home / ".local" / "share"),
        ENGINE_STATE_DIR=str(home / ".engine-state"), ENGINE_CACHE_DIR=str(home / ".engine-cache"),
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        **own,
    )
    for k, v in (extra or {}).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = str(v)
    return out


def base_env(home, extra=None):
    """The environment of Codex, Gemini and Copilot (home_env): without
    DROPPED_PREFIXES, a plain terminal, and TMPDIR under `home`."""
    home = Path(home)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    own = {"TERM": "dumb", "NO_COLOR": "1",
           "TMPDIR": str(home / "tmp")}  # Copilot saves a large tool output in the temporary folder
    return home_env(home, DROPPED_PREFIXES, own, extra)


def merge_json(path, update):
    """Read the JSON object at `path` (or {}), let `update` change it, write
    it back; a file with comments (Gemini CLI's may hold some) keeps them."""
    from engine.base.jsonc import blank_comments, has_comments
    from engine.hooks.jsonsplice import splice

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(blank_comments(text))
    except (OSError, ValueError):
        text, data = None, {}
    new = json.loads(json.dumps(data))
    update(new)
    if text is not None and has_comments(text):
        path.write_text(splice(text, data, new, 2, "\n"), encoding="utf-8")
    else:
        path.write_text(json.dumps(new, indent=2) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- one run


@dataclass
class AgentRun:
    agent: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    api: object  # the stand-in: .requests (main-loop bodies), .summaries, .log (every Request)
    home: Path = None
    cwd: Path = None
    extra: dict = field(default_factory=dict)  # per agent: the session file found, ...

    @property
    def requests(self):
        return self.api.requests

    def json_lines(self):
        """stdout's JSON lines (Codex --json, Copilot --output-format json), parsed."""
        out = []
        for line in self.stdout.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out

    def __str__(self):
        return (f"{self.agent} -> exit {self.returncode} in {self.seconds:.1f} s\nstdout: {self.stdout[-3000:]}\n"
                f"stderr: {self.stderr[-3000:]}\nrequests: {[(r.method, r.path, r.kind) for r in self.api.log]}")


def run_offline(agent, cmd, cwd, setup, api, timeout):
    """Start `api` and then `cmd` (in `cwd`, stdin closed) inside one fresh
    loopback-only namespace; `setup(api)`, called once the stand-in's URL is
    known, writes the agent's configuration and returns its environment.
    Waits at most `timeout` seconds (then kills its process group and fails
    the test). Returns an AgentRun."""
    dns = NoDNS()
    with Netns() as ns, closing(dns):
        ns.run(dns.bind)
        dns.start()
        ns.run(api.bind)
        env = setup(api)
        with api:
            start = time.monotonic()
            proc = ns.run(subprocess.Popen, [str(c) for c in cmd], cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
            try:
                out, err = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                out, err = proc.communicate()
                pytest.fail(f"{agent} ran past {timeout} s and was killed\nstdout: {out[-2000:]}\n"
                            f"stderr: {err[-2000:]}\nrequests: {[(r.method, r.path) for r in api.log]}")
            seconds = time.monotonic() - start
            _reap(proc.pid)
    return AgentRun(agent, proc.returncode, out, err, seconds, api, cwd=Path(cwd), extra={"dns": list(dns.names)})


def _reap(pgid):
    """Kill what the agent left running in its process group (a shell it
    started, a hook still going): nothing outlives the run."""
    try:
        os.killpg(pgid, 9)
    except ProcessLookupError:
        pass
