"""An agent's version, asked of the agent itself (`<command> --version`, the
arguments its YAML gives under version.command), for `engine doctor`.

The rule it keeps: asking never holds the user up and never reaches the
network.  The command runs with no input, in its own process group, with
the variables its YAML lists to keep it offline (version.quiet_env); it is
killed when the time is up, and at most `max_bytes` of what it prints are
read.  A command that is not there, fails or prints no version is an
answer too ("error"), never an exception."""

import os
import re
import select
import signal
import subprocess
import time


def ask(command, agent, timeout_ms, max_bytes, pattern):
    """{"value": the version or None, "text": the line it was read from (else
    the first line printed), "error": why there is no version, or None}.
    The version is the first one on a line of the standard output, else of
    the error output: an agent may warn before it (Codex 0.169.0 warns on
    its error output first when its home is in a temporary folder)."""
    spec = agent.data["version"]
    argv = [command, *spec["command"]]
    env = dict(os.environ, **spec["quiet_env"])
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env, start_new_session=True)
    except OSError as exc:
        return {"value": None, "text": "", "error": f"cannot run {command}: {exc.strerror or exc}"}
    (out, err), timed_out = _read_bounded(proc, timeout_ms / 1000, max_bytes)
    _end(proc)
    lines = _lines(out) + _lines(err)
    line, found = _first_match(lines, pattern)
    text = line if line is not None else (lines[0] if lines else "")
    if timed_out:
        return {"value": found.group(0) if found else None, "text": text,
                "error": f"`{' '.join(argv[1:])}` took more than {timeout_ms} ms; stopped"}
    if found is None:
        return {"value": None, "text": text, "error": f"no version in what `{' '.join(argv[1:])}` printed"
                                                       f" (exit status {proc.returncode})"}
    return {"value": found.group(0), "text": text, "error": None}


def _lines(data):
    """The non-blank lines of what was printed, stripped."""
    return [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]


def _first_match(lines, pattern):
    """(the first line holding `pattern`, its match), or (None, None)."""
    for line in lines:
        found = re.search(pattern, line)
        if found:
            return line, found
    return None, None


def _read_bounded(proc, seconds, max_bytes):
    """((standard output, error output), whether the time ran out): at most
    max_bytes of the two together."""
    streams = {proc.stdout.fileno(): [], proc.stderr.fileno(): []}
    open_fds, size = list(streams), 0
    until = time.monotonic() + seconds
    while open_fds and size < max_bytes:
        left = until - time.monotonic()
        if left <= 0:
            return _joined(proc, streams), True
        ready, _, _ = select.select(open_fds, [], [], left)
        for fd in ready:
            data = os.read(fd, min(65536, max_bytes - size))
            if not data:
                open_fds.remove(fd)
                continue
            streams[fd].append(data)
            size += len(data)
    return _joined(proc, streams), False


def _joined(proc, streams):
    return b"".join(streams[proc.stdout.fileno()]), b"".join(streams[proc.stderr.fileno()])


def _end(proc):
    """Stop the command and whatever it started (its own process group)."""
    try:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.stdout.close()
    proc.stderr.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
