"""Run `engine ARGS` as a child process forked from the test worker.

The child is a real process: its own pid, file descriptors 0/1/2 on pipes,
working folder, environment, exit status and signals, exactly as with
`python -m engine.cli`; what it saves is the interpreter start and the
imports (YAML, JSON Schema, regex, Jinja2, the tokenizer's 200K-entry
table), which the worker has done once.  That is most of the test suite's
time, since most end-to-end tests run the engine many times.

Tests that are about a fresh interpreter (what the hook path imports, the
installed command, many processes at once) keep using subprocess.
ENGINE_TEST_FORK=0 turns this off: every call is a real `python -m
engine.cli` subprocess again.
"""

import io
import os
import selectors
import signal
import subprocess
import sys
import time

ENABLED = os.environ.get("ENGINE_TEST_FORK", "1") != "0" and hasattr(os, "fork")

_warm = False
# Parent-side pipe ends of children still running: a child forked later must
# not hold copies of them (an earlier child would wait for its stdin's end
# until every later child had exited).
_OPEN = set()


def _warm_up():
    """Import what engine commands load, once per worker, before forking."""
    global _warm
    if _warm:
        return
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
    # then finds the schemas' validators and the built-in patterns compiled,
    # as a second compile in one process does (caches of pure functions:
    # schema files of the package, pattern texts), 0.47 s -> 0.14 s each.
    from engine.core.profile import build, choice

    build(chosen=choice("default"))
    # Children would otherwise walk (and so copy) every object the worker
    # holds at their first collection: park them out of the collector.
    gc.collect()
    gc.freeze()
    _warm = True


def run(args, input=b"", cwd=None, env=None, timeout=180):
    """(returncode, stdout bytes, stderr bytes) of `engine *args`."""
    if not ENABLED:
        proc = subprocess.run([sys.executable, "-m", "engine.cli", *args], input=input, capture_output=True,
                              cwd=cwd, env=env, timeout=timeout)
        return proc.returncode, proc.stdout, proc.stderr
    return spawn(args, cwd, env).communicate(input or b"", timeout)


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
    def __init__(self, pid, in_w, out_r, err_r, args):
        self.pid, self.in_w, self.out_r, self.err_r, self.args = pid, in_w, out_r, err_r, args

    def feed(self, data):
        """Write all of stdin now (blocking) and close it."""
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.in_w, view[:65536]):]
        except BrokenPipeError:
            pass
        _close(self.in_w)
        self.in_w = None

    def communicate(self, data, timeout):
        return _parent(self.pid, data, self.in_w, self.out_r, self.err_r, timeout, self.args)


def spawn(args, cwd=None, env=None):
    _warm_up()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(list(args), cwd, env, (in_r, in_w, out_r, out_w, err_r, err_w))
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    _OPEN.update((in_w, out_r, err_r))
    return Child(pid, in_w, out_r, err_r, args)


def _close(fd):
    _OPEN.discard(fd)
    os.close(fd)


def _child(args, cwd, env, fds):
    rc = 1
    try:
        in_r, in_w, out_r, out_w, err_r, err_w = fds
        os.dup2(in_r, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        for fd in fds:
            os.close(fd)
        for fd in _OPEN:
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


def _parent(pid, data, in_w, out_r, err_r, timeout, args):
    out, err = [], []
    sel = selectors.DefaultSelector()
    sel.register(out_r, selectors.EVENT_READ, out)
    sel.register(err_r, selectors.EVENT_READ, err)
    pos = 0
    if in_w is None:  # already fed
        pass
    elif data:
        os.set_blocking(in_w, False)
        sel.register(in_w, selectors.EVENT_WRITE, None)
    else:
        _close(in_w)
    deadline = time.monotonic() + timeout
    try:
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise subprocess.TimeoutExpired(["engine", *args], timeout)
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
                        _close(in_w)
                    continue
                chunk = os.read(key.fd, 65536)
                if chunk:
                    key.data.append(chunk)
                else:
                    sel.unregister(key.fd)
                    _close(key.fd)
    finally:
        for key in list(sel.get_map().values()):
            sel.unregister(key.fd)
            _close(key.fd)
        sel.close()
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(out), b"".join(err)
