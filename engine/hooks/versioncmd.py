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
    """{"value": the version or None, "text": its first line, "error": why
    there is no version, or None}."""
    spec = agent.data["version"]
    argv = [command, *spec["command"]]
    env = dict(os.environ, **spec["quiet_env"])
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=env, start_new_session=True)
    except OSError as exc:
        return {"value": None, "text": "", "error": f"cannot run {command}: {exc.strerror or exc}"}
    out, timed_out = _read_bounded(proc, timeout_ms / 1000, max_bytes)
    _end(proc)
    text = out.decode("utf-8", "replace").strip()
    first = text.splitlines()[0] if text else ""
    found = re.search(pattern, first)
    if timed_out:
        return {"value": found.group(0) if found else None, "text": first,
                "error": f"`{' '.join(argv[1:])}` took more than {timeout_ms} ms; stopped"}
    if found is None:
        return {"value": None, "text": first, "error": f"no version in what `{' '.join(argv[1:])}` printed"
                                                        f" (exit status {proc.returncode})"}
    return {"value": found.group(0), "text": first, "error": None}


def _read_bounded(proc, seconds, max_bytes):
    """(at most max_bytes of the output, whether the time ran out)."""
    fd, chunks, size = proc.stdout.fileno(), [], 0
    until = time.monotonic() + seconds
    while size < max_bytes:
        left = until - time.monotonic()
        if left <= 0:
            return b"".join(chunks), True
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        data = os.read(fd, min(65536, max_bytes - size))
        if not data:
            return b"".join(chunks), False
        chunks.append(data)
        size += len(data)
    return b"".join(chunks), False


def _end(proc):
    """Stop the command and whatever it started (its own process group)."""
    try:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.stdout.close()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
