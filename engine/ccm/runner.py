"""`engine cache run -- COMMAND`: the wrapper a rewritten Bash call runs.

It runs inside the agent's Bash tool, so the tool's sandbox, timeout and
working folder all still apply; the hook that rewrote the call never runs
anything.  The command runs once, in the folder given by --cwd (the
event's), with stdout and stderr merged as the Bash tool shows them.  The
output is read as bytes until end of file (nothing lost: the seed read 4,096
bytes through a text pipe and then lost them to communicate()).  At or under
the threshold, or holding a secret, the output is written back unchanged;
over it, it is stored and the stub is printed instead.  The exit status is
the command's (128 + N when a signal N ended it).
"""

import os
import subprocess
import sys


def shell():
    return os.environ.get("SHELL") if os.path.isabs(os.environ.get("SHELL") or "") else "/bin/sh"


def run(command, cwd=None, session=None, tool_use_id=None, settings=None, out=None):
    """Run `command`; write what the agent reads to `out`; return the exit status."""
    out = out or sys.stdout.buffer
    proc = subprocess.Popen([shell(), "-c", command], cwd=cwd or None, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    chunks = []
    fd = proc.stdout.fileno()
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    proc.stdout.close()
    rc = proc.wait()
    status = 128 - rc if rc < 0 else rc
    data = b"".join(chunks)
    text = None
    try:
        text = cached_text(data, command, cwd, session, tool_use_id, status, settings)
    except Exception as exc:  # noqa: BLE001 - the output itself is always better than nothing
        print(f"engine cache: not cached ({type(exc).__name__}: {exc}); output follows", file=sys.stderr)
    if text is None:
        out.write(data)
    else:
        out.write(text.encode("utf-8"))
    out.flush()
    return status


def cached_text(data, command, cwd, session, tool_use_id, status, settings=None):
    """The stub for an output over the threshold, or None to show it as it is."""
    from . import config
    from .store import Store
    from .stub import render

    settings = settings or config.load()
    if len(data) <= settings["intercept"]["bash"]["threshold_bytes"]:
        return None
    store = Store(settings)
    pin = None
    if session:
        from .pins import SessionPins

        pins = SessionPins(store, session)
        pin = pins.take()
    key = store.put(data, {"tool": "Bash", "command": command, "cwd": cwd, "exit": status,
                           "tool_use_id": tool_use_id}, session=session, pin=pin)
    if key is None:
        return None  # a secret: never cached
    if session:
        pins.stored(key)
    return render(settings, "template", key, store, store.meta(key), status, command) + "\n"
