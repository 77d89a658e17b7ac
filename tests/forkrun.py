"""Run `engine ARGS` as a child process forked from a warmed zygote.

The child is a real process: its own pid, file descriptors 0/1/2 on pipes,
working folder, environment, exit status and signals, exactly as with
`python -m engine.cli`; what it saves is the interpreter start and the
imports (YAML, JSON Schema, regex, Jinja2, the tokenizer's 200K-entry
table), which the zygote has done once.  That is most of the test suite's
time, since most end-to-end tests run the engine many times.

The zygote is one small process per test worker, started on first use,
that has imported the engine and nothing of the tests: forking costs this
machine's kernel time in proportion to the memory the forking process
maps, and a test worker maps two to three times what the zygote does
(a quiet hook: 24 ms forked from a worker, 12 ms from the zygote).  The
worker sends each request (arguments, folder, environment, and the pipe
ends for 0/1/2 and a status socket) over a Unix socket; the zygote forks,
says the child's pid on the status socket, and its exit status when it has
reaped it.

Tests that are about a fresh interpreter (what the hook path imports, the
installed command, many processes at once) keep using subprocess.
ENGINE_TEST_FORK=0 turns this off: every call is a real `python -m
engine.cli` subprocess again.
"""

import io
import os
import pickle
import selectors
import signal
import socket
import subprocess
import sys
import time


def _can_watch_children():
    """The zygote learns that a child ended from a pidfd (Linux 5.3 and
    later); without one, every call is a fresh interpreter instead."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


ENABLED = os.environ.get("ENGINE_TEST_FORK", "1") != "0" and hasattr(os, "fork") and _can_watch_children()

# The environment the zygote starts with: the run's isolated one, as
# tests/conftest.py's pytest_configure made it (before any test changed it;
# forkrun is imported earlier, with the real HOME, when the run has no
# workers).  glibc's malloc asks for huge pages there: fewer page-table
# entries for each fork to copy and each child's exit to tear down (a quiet
# hook's child 14 ms -> 11.5 ms of wall time).
_START_ENV = {}


def start_environment(env):
    """Say which environment the zygote starts with (tests/conftest.py)."""
    _START_ENV.clear()
    _START_ENV.update(env)


_ZYGOTE = {}  # "proc", "sock": the running zygote of this worker
# CPU seconds of the children this worker has waited for (they are the
# zygote's children, so not in this process's RUSAGE_CHILDREN): bench/pertest.py.
CHILD_CPU = [0.0]
# The same by command (`engine hook`, `engine validate`...): [children, CPU seconds].
CHILD_CPU_BY_COMMAND = {}


def _warm_up():
    """Import what engine commands load, once, in the zygote before it forks."""
    import gc
    import pkgutil

    import engine

    # Every module of the engine (a child imports nothing of its own), none run as a script.
    for mod in pkgutil.walk_packages(engine.__path__, "engine."):
        if not mod.name.endswith("__main__"):
            __import__(mod.name)
    for name in ("jinja2", "jsonschema", "regex", "yaml", "zstandard"):
        __import__(name)
    from engine.text.tokens import encoding

    encoding("o200k_base")
    # One compile of the built-in profile, written nowhere: a child's compile
    # then finds the schemas' validators, the built-in patterns compiled and
    # the built-in documents read, as a second compile in one process does
    # (caches of what ships with the engine: schema files, pattern texts,
    # documents), 0.47 s -> 0.14 s each.
    from engine.core.profile import build, choice

    default = build(chosen=choice("default"))
    from engine.core import profile

    profile._WARM["done"] = True  # what warm_compiles() would do first in a child: done here already
    # The agents' YAML files read once: a child writes its own cache folder's
    # copy from them (engine/agents/table.py), as a hook on a cold cache does.
    from engine.agents.table import agents

    agents(settle=False)
    # The redactors of the built-in secret rules, as a second call in one
    # process finds them (engine/core/redact.py redactor): the default one
    # every log line goes through, the tool memory's (hooks.memory.redact
    # of the built-in profile; the content cache's is the same), and the
    # session report's, which the context monitor reads.  A child built its
    # own otherwise, from the rules its cache folder keeps: 5.5 ms of CPU
    # for each of most hooks, 80 ms where its cache has no copy of them.
    from engine.core.redact import redactor
    from engine.memory.record import redactor as memory_redactor
    from engine.session.report import _redactor as report_redactor

    redactor()
    memory_redactor(default.hooks["memory"])
    report_redactor()
    # The fingerprint of the engine's own files (a stat of each module, once
    # per process): the code does not change under a test run.
    from engine.core.cache import code_fingerprint

    code_fingerprint()
    # Children would otherwise walk (and so copy) every object the zygote
    # holds at their first collection: park them out of the collector.
    gc.collect()
    gc.freeze()


def run(args, input=b"", cwd=None, env=None, timeout=180):
    """(returncode, stdout bytes, stderr bytes) of `engine *args`."""
    if not ENABLED:
        proc = subprocess.run([sys.executable, "-m", "engine.cli", *args], input=input, capture_output=True,
                              cwd=cwd, env=env, timeout=timeout)
        return proc.returncode, proc.stdout, proc.stderr
    return spawn(args, cwd, env).communicate(input or b"", timeout)


def completed(args, input=None, cwd=None, env=None, timeout=180, text=True):
    """`engine *args` as `subprocess.run([python, "-m", "engine.cli", *args],
    capture_output=True, text=text)` returns it, for tests written that way
    whose point is not a fresh interpreter."""
    data = input.encode("utf-8") if isinstance(input, str) else (input or b"")
    rc, out, err = run([str(a) for a in args], data, None if cwd is None else str(cwd), env, timeout)
    if text:
        out, err = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    return subprocess.CompletedProcess(["engine", *map(str, args)], rc, out, err)


def run_many(args, inputs, cwd=None, env=None, timeout=180):
    """Start one `engine *args` per input at once, feed each its input, then
    wait for all: [(returncode, stdout, stderr)] in the order of inputs."""
    if not ENABLED:
        procs = [subprocess.Popen([sys.executable, "-m", "engine.cli", *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env)
                 for _ in inputs]
        for p, data in zip(procs, inputs):  # every stdin first, so they all run together
            p.stdin.write(data)
            p.stdin.close()
        out = []
        for p in procs:
            o, e = p.stdout.read(), p.stderr.read()
            p.wait(timeout=timeout)
            out.append((p.returncode, o, e))
        return out
    children = [spawn(args, cwd, env) for _ in inputs]
    for child, data in zip(children, inputs):
        child.feed(data)
    return [child.communicate(b"", timeout) for child in children]


class Child:
    def __init__(self, pid, in_w, out_r, err_r, status, args):
        self.pid, self.in_w, self.out_r, self.err_r, self.status, self.args = pid, in_w, out_r, err_r, status, args
        self.timeout = None  # seconds communicate() gives it, said when it is killed

    def feed(self, data):
        """Write all of stdin now (blocking) and close it."""
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.in_w, view[:65536]):]
        except BrokenPipeError:
            pass
        os.close(self.in_w)
        self.in_w = None

    def communicate(self, data, timeout):
        self.timeout = timeout
        try:
            out, err = _pipes(self, data, time.monotonic() + timeout)
            return _exit_status(self, time.monotonic() + timeout), out, err
        finally:
            _PENDING.pop(self.status.fileno(), None)
            self.status.close()


def spawn(args, cwd=None, env=None):
    """Ask the zygote for a child running `engine *args`."""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    request = pickle.dumps((list(args), cwd or os.getcwd(), dict(os.environ) if env is None else dict(env)))
    try:
        socket.send_fds(_zygote(), [request], [in_r, out_w, err_w, theirs.fileno()])
    finally:
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        theirs.close()
    pid = int(_line(mine, time.monotonic() + 60))
    return Child(pid, in_w, out_r, err_r, mine, args)


def _zygote():
    """The control socket of this worker's zygote, started on first use."""
    proc = _ZYGOTE.get("proc")
    if proc is not None and proc.poll() is None:
        return _ZYGOTE["sock"]
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    code = f"import sys; sys.path[:0] = {sys.path!r}; import forkrun; forkrun.serve({theirs.fileno()})"
    env = dict(_START_ENV or os.environ, GLIBC_TUNABLES="glibc.malloc.hugetlb=1")
    _ZYGOTE["proc"] = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()], env=env,
                                       stdin=subprocess.DEVNULL)
    theirs.close()
    _ZYGOTE["sock"] = mine
    return mine


def _line(sock, deadline):
    """One line the zygote wrote on a status socket, without its newline
    (the pid, then the exit status and CPU: both may come in one read)."""
    pending = _PENDING.pop(sock.fileno(), b"")
    while b"\n" not in pending:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        chunk = sock.recv(64)
        if not chunk:
            raise RuntimeError("the test zygote closed a status socket early")
        pending += chunk
    line, rest = pending.split(b"\n", 1)
    if rest:
        _PENDING[sock.fileno()] = rest
    return line


_PENDING = {}  # status socket's descriptor -> what was read past its last line


def _exit_status(child, deadline):
    try:
        code, cpu = _line(child.status, deadline).split()
        CHILD_CPU[0] += float(cpu)
        tally = CHILD_CPU_BY_COMMAND.setdefault(_command(child.args), [0, 0.0])
        tally[0] += 1
        tally[1] += float(cpu)
        return int(code)
    except TimeoutError:
        os.kill(child.pid, signal.SIGKILL)
        _line(child.status, time.monotonic() + 60)
        raise subprocess.TimeoutExpired(["engine", *child.args], child.timeout) from None


def _command(args):
    """The command a child ran: its first argument that is no option."""
    return next((str(a) for a in args if not str(a).startswith("-")), "(none)")


# The zygote's side.

def serve(control_fd):
    """Fork a child per request on `control_fd`, until the worker closes it."""
    _warm_up()
    control = socket.socket(fileno=control_fd)
    sel = selectors.DefaultSelector()
    sel.register(control, selectors.EVENT_READ, None)
    held = {}  # pidfd -> (pid, status fd) of each child not yet reaped
    while True:
        for key, _ in sel.select():
            if key.data is None:
                if not _fork_one(control, sel, held):
                    return
            else:
                _reap(key.fd, sel, held)


def _fork_one(control, sel, held):
    request, fds, _flags, _addr = socket.recv_fds(control, 1 << 22, 4)
    if not request:
        return False
    args, cwd, env = pickle.loads(request)
    in_r, out_w, err_w, status = fds
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(args, cwd, env, (in_r, out_w, err_w), [control.fileno(), status, *held, *(s for _, s in held.values())])
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    os.write(status, b"%d\n" % pid)
    pidfd = os.pidfd_open(pid)
    held[pidfd] = (pid, status)
    sel.register(pidfd, selectors.EVENT_READ, "child")
    return True


def _reap(pidfd, sel, held):
    pid, status = held.pop(pidfd)
    sel.unregister(pidfd)
    os.close(pidfd)
    _, wait_status, usage = os.wait4(pid, 0)
    try:
        os.write(status, b"%d %r\n" % (os.waitstatus_to_exitcode(wait_status), usage.ru_utime + usage.ru_stime))
    except OSError:
        pass  # the worker gave up on it
    os.close(status)


def _child(args, cwd, env, stdio, others):
    """Run `engine *args` on the standard streams `stdio`, with every other
    descriptor of the zygote's in `others` closed; exits, never returns."""
    rc = 1
    try:
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)
        for fd in (*stdio, *others):
            try:
                os.close(fd)
            except OSError:
                pass
        import faulthandler

        faulthandler.disable()
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if cwd is not None:
            os.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        # Fresh standard streams on the new descriptors, as a new interpreter has.
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)),
                                                     encoding="utf-8")
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
                                                       encoding="utf-8")
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
                                                       encoding="utf-8", errors="backslashreplace",
                                                       line_buffering=True)
        sys.argv = [os.path.join(os.path.dirname(sys.executable), "engine"), *args]
        from engine.base import errors
        from engine.core import settings
        from engine.hooks import deadline

        # Process-wide state the worker set, which a new process starts without.
        errors._GIVEN.clear()
        settings._plain = None  # a new process reads (and writes) its cache folder's copy of the engine settings
        deadline.STARTED = time.monotonic()  # the hook deadline counts from the process start
        deadline.IN_HOOK = False
        from engine.cli.main import main

        try:
            rc = main(args)
        except SystemExit as exc:
            code = exc.code
            if code is None:
                rc = 0
            elif isinstance(code, int):
                rc = code
            else:
                print(code, file=sys.stderr)
                rc = 1
        if rc is None:
            rc = 0
        try:
            sys.stdout.flush()
        except (OSError, ValueError):  # what the interpreter's last flush reports
            try:
                sys.stderr.write("Exception ignored on flushing sys.stdout\n")
            except Exception:
                pass
            rc = 120
    except BaseException:  # noqa: BLE001 - the test sees it on stderr, as with a real interpreter
        try:
            import traceback

            traceback.print_exc()
        except Exception:
            pass
        rc = 1
    finally:
        try:
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(rc if isinstance(rc, int) else 1)


def _pipes(child, data, deadline):
    """Feed the child's stdin with `data` and read its stdout and stderr to
    their end (killing it at `deadline`): (stdout bytes, stderr bytes)."""
    out, err = [], []
    sel = selectors.DefaultSelector()
    sel.register(child.out_r, selectors.EVENT_READ, out)
    sel.register(child.err_r, selectors.EVENT_READ, err)
    pos, in_w = 0, child.in_w
    if in_w is None:  # already fed
        pass
    elif data:
        os.set_blocking(in_w, False)
        sel.register(in_w, selectors.EVENT_WRITE, None)
    else:
        os.close(in_w)
    child.in_w = None
    try:
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(child.pid, signal.SIGKILL)
                _line(child.status, time.monotonic() + 60)
                raise subprocess.TimeoutExpired(["engine", *child.args], child.timeout)
            for key, _ in sel.select(remaining):
                if key.data is None:  # stdin
                    try:
                        pos += os.write(in_w, data[pos:pos + 65536])
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        pos = len(data)
                    if pos >= len(data):
                        sel.unregister(in_w)
                        os.close(in_w)
                    continue
                chunk = os.read(key.fd, 65536)
                if chunk:
                    key.data.append(chunk)
                else:
                    sel.unregister(key.fd)
                    os.close(key.fd)
    finally:
        for key in list(sel.get_map().values()):
            sel.unregister(key.fd)
            os.close(key.fd)
        sel.close()
    return b"".join(out), b"".join(err)
