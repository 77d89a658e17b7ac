"""`engine cache run -- COMMAND`: the wrapper a rewritten Bash call runs
(only for agents that cannot replace a Bash output at PostToolUse).

It runs inside the agent's Bash tool, so the tool's sandbox, timeout and
working folder all still apply; the hook that rewrote the call never runs
anything.  The rule kept: the command behaves as the agent's Bash tool
would run it.
- It runs once, with `bash -c` (bash as the Bash tool uses, never `$SHELL`:
  `[[ ]]` and other bash syntax work whatever the user's login shell is), in
  the folder given by --cwd (the event's), with the environment the agent's
  shell gave the wrapper: the engine's variables a project set (which the
  engine itself ignores, engine/hooks/projectenv.py) included.
- stdout and stderr stay apart: the command's stdout goes to the wrapper's
  stdout, its stderr to the wrapper's stderr.  Each stream is judged on its
  own: at or under the threshold, or holding a secret, it is written back
  unchanged, byte for byte; over it, it is stored and its stub is written in
  its place on the same stream (a large stderr is as costly as a large
  stdout, and keeping it on stderr keeps the agent's view of which is which).
- Memory stays bounded whatever the output's size: the streams go to
  files, their sizes decide, and an output is copied back or stored
  (Store.put_stream) a chunk at a time, never read whole.
- The streams go to unlinked temporary files, not pipes: a background job
  (`server &`) inherits them and may hold them open for hours, so the
  wrapper waits for the shell to exit, never for end of file, and then reads
  what the files hold at that moment (a bound: what a background job writes
  later is not waited for, as with the agent's own Bash).
- The exit status is the command's (128 + N when a signal N ended it).
- A command whose output was over the threshold is learned again
  (engine/ccm/learned.py): the hook learns only from calls not wrapped, and
  a learned command in use must not be the first to leave the bounded file.
- The command runs in a process group apart from the wrapper's, and the signals in
  `run.forward_signals` (SIGTERM, SIGINT, SIGHUP, ...) that reach the
  wrapper are passed on to that whole group: the command and everything it
  started (a pipeline, a background job) get them, and the wrapper ends as
  the command does.  A signal that comes before the command has started is
  passed on as soon as it has.  A wrapper killed outright (SIGKILL, or
  the agent killing its shell's group at its timeout) forwards nothing: a
  watchdog that leads the command's group, started before the command,
  then kills that group (Watchdog).  (The command is then not in a
  terminal's foreground: the wrapper is made for the agent's Bash tool,
  whose commands read no terminal.)
- A command that calls a function or alias of the agent's shell snapshot is
  never routed here (intercept.py, snapshot.py): this bash has none of them.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

# The shell the agent's Bash tool runs (its interface, not a setting).
BASH = "bash"


def shell():
    return shutil.which(BASH) or "/bin/bash"


def _copy(fh, size, out, chunk):
    """Write the first `size` bytes of file `fh` to `out`, `chunk` at a time."""
    fh.seek(0)
    left = size
    while left > 0:
        data = fh.read(min(left, chunk))
        if not data:
            break
        out.write(data)
        left -= len(data)


class Forwarding:
    """While entered, the named signals (`TERM`, ...) that reach this process
    go to the process group `to(pgid)` names; any that came before it was
    named go as soon as it is.  The previous handlers come back on exit."""

    def __init__(self, names):
        self.signals = [getattr(signal, "SIG" + n) for n in names]
        self.group, self.pending, self.saved = None, [], {}

    def __enter__(self):
        for sig in self.signals:
            self.saved[sig] = signal.signal(sig, self._got)
        return self

    def _got(self, sig, _frame):
        if self.group is None:
            self.pending.append(sig)
        else:
            _kill_group(self.group, sig)

    def to(self, group):
        self.group = group
        while self.pending:
            _kill_group(group, self.pending.pop(0))

    def __exit__(self, *exc):
        for sig, handler in self.saved.items():
            signal.signal(sig, handler)


# The watchdog's program: it waits for the end of its stdin (the wrapper's
# pipe), then kills its whole process group: the command's.
WATCHDOG = "read -r _; kill -KILL 0"


class Watchdog:
    """While entered, a process that leads the process group the command
    then joins (join), and kills that group should this wrapper end without
    leaving the block: killed itself (SIGKILL, or its group killed by the
    agent's timeout), it can forward nothing, and the command, in a group
    apart from the wrapper's, would run on.  It learns of that as the pipe
    only this process holds closes; it ignores the `signals` forwarded to
    the group.  It starts before the command, so no moment of the command's
    run goes unwatched (started after it, a wrapper killed in between left
    the command running).  Left normally, it is ended quietly (a background
    job may stay, as with the agent's own shell)."""

    def __init__(self, signals):
        self.signals, self.proc, self.write = signals, None, None

    def __enter__(self):
        read, self.write = os.pipe()
        try:
            self.proc = subprocess.Popen([shell(), "-c", WATCHDOG], stdin=read, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, preexec_fn=self._lead)
        except (OSError, subprocess.SubprocessError):
            pass  # no watchdog: the command leads a group of its own
        finally:
            os.close(read)
        return self

    def _lead(self):
        for sig in self.signals:
            signal.signal(sig, signal.SIG_IGN)  # kept across exec: a forwarded signal is not for it
        os.setpgrp()

    def join(self):
        """The command's preexec_fn: into the watched group, or a group of
        its own when there is no watchdog."""
        if self.proc is None:
            return os.setpgrp
        group = self.proc.pid
        return lambda: os.setpgid(0, group)

    def group(self, command_pid):
        """The command's process group."""
        return command_pid if self.proc is None else self.proc.pid

    def __exit__(self, *exc):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        os.close(self.write)


def _kill_group(group, sig):
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        pass  # the group has ended


def run(command, cwd=None, session=None, tool_use_id=None, settings=None, out=None, err=None, env=None):
    """Run `command` (in environment `env`, else this process's); write what
    the agent reads to `out` (stdout) and `err` (stderr); return the exit status.  An output is never read whole into
    memory: its size decides, then it is copied or stored in chunks."""
    from . import config

    settings = settings or config.load()
    chunk = settings["store"]["chunk_bytes"]
    out = out or sys.stdout.buffer
    err = err or sys.stderr.buffer
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        with Forwarding(settings["run"]["forward_signals"]) as forward, Watchdog(forward.signals) as watchdog:
            # a process group apart from the wrapper's: a forwarded signal reaches all it started, never the wrapper
            proc = subprocess.Popen([shell(), "-c", command], cwd=cwd or None, stdout=fo, stderr=fe,
                                    env=env, preexec_fn=watchdog.join())
            forward.to(watchdog.group(proc.pid))
            rc = proc.wait()
        status = 128 - rc if rc < 0 else rc
        # what the files hold now: a background job may write more later
        sizes = os.fstat(fo.fileno()).st_size, os.fstat(fe.fileno()).st_size
        kept = []  # (bytes the command wrote, bytes of the stub in their place)
        for stream, fh, size, name in ((out, fo, sizes[0], "stdout"), (err, fe, sizes[1], "stderr")):
            text = None
            if size:
                try:
                    text = cached_text(fh, size, command, cwd, session, tool_use_id, status, settings, name)
                except Exception as exc:  # noqa: BLE001 - the output itself is always better than nothing
                    sys.stderr.write(f"engine cache: {name} not cached ({type(exc).__name__}: {exc}); it follows\n")
                    sys.stderr.flush()
            if text is None:
                _copy(fh, size, stream, chunk)
            else:
                data = text.encode("utf-8", "surrogateescape")  # a command line not UTF-8: its own bytes
                stream.write(data)
                kept.append((size, len(data)))
            stream.flush()
    _learn(command, cwd, sum(sizes), settings)
    _record(session, kept)
    return status


def _learn(command, cwd, size, settings):
    """Learn the command when its output was large, as the hook does from
    calls not wrapped: a learned command run through this wrapper is one in
    use, the last to leave the bounded learned file."""
    from .intercept import reads_back
    from .learned import learn_command

    if reads_back(command):
        return  # the engine's read-back of a cached output: never learned
    try:
        learn_command(settings, cwd, command, size)
    except Exception as exc:  # noqa: BLE001 - a hint not kept: the command's output and status are what matter
        from engine.core.log import Log

        Log()(f"engine cache run: the command not learned again ({type(exc).__name__}: {exc})")


def _record(session, kept):
    """The outputs kept out, in the session's records (engine/core/records.py):
    this wrapper, not a hook, replaced them."""
    if session and kept:
        from engine.core import records

        conf = records.settings()
        records.append(session, "cache run", [], [records.kept_out("cache_run", b, a, conf) for b, a in kept], conf)


def cached_text(fh, size, command, cwd, session, tool_use_id, status, settings=None, stream="stdout"):
    """The stub for an output over the threshold (the first `size` bytes of
    file `fh`, stored in chunks), or None to show it as it is."""
    from . import config
    from .intercept import reads_back
    from .store import Store
    from .stub import render

    settings = settings or config.load()
    if size <= settings["intercept"]["bash"]["threshold_bytes"] or reads_back(command):
        return None  # small, or the engine's read-back of a cached output: the bytes asked for
    store = Store(settings)
    pin = pins = None
    if session:
        from .pins import SessionPins

        pins = SessionPins(store, session)
        pin = pins.take()
    source = {"tool": "shell", "command": command, "cwd": cwd, "exit": status, "tool_use_id": tool_use_id}
    if stream != "stdout":
        source["stream"] = stream
    fh.seek(0)
    key = store.put_stream(fh, source, session=session, pin=pin, size=size)
    if key is None:
        if pins is not None:
            pins.give_back()  # `ccm:pin next` waits for the next output cached
        return None  # a secret: never cached
    if pins is not None:
        pins.stored(key)
    return render(settings, "template", key, store, store.meta(key), status, command) + "\n"
