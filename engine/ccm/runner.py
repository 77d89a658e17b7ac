"""`engine cache run -- COMMAND`: the wrapper a rewritten Bash call runs
(only for agents that cannot replace a Bash output at PostToolUse).

It runs inside the agent's Bash tool, so the tool's sandbox, timeout and
working folder all still apply; the hook that rewrote the call never runs
anything.  The rule kept: the command behaves as the agent's Bash tool
would run it.
- It runs once, with `bash -c` (bash as the Bash tool uses, never `$SHELL`:
  `[[ ]]` and other bash syntax work whatever the user's login shell is), in
  the folder given by --cwd (the event's).
- stdout and stderr stay apart: the command's stdout goes to the wrapper's
  stdout, its stderr to the wrapper's stderr.  Each stream is judged on its
  own: at or under the threshold, or holding a secret, it is written back
  unchanged, byte for byte; over it, it is stored and its stub is written in
  its place on the same stream (a large stderr is as costly as a large
  stdout, and keeping it on stderr keeps the agent's view of which is which).
- The streams go to unlinked temporary files, not pipes: a background job
  (`server &`) inherits them and may hold them open for hours, so the
  wrapper waits for the shell to exit, never for end of file, and then reads
  what the files hold at that moment (a bound: what a background job writes
  later is not waited for, as with the agent's own Bash).
- The exit status is the command's (128 + N when a signal N ended it).
"""

import os
import shutil
import subprocess
import sys
import tempfile

# The shell the agent's Bash tool runs (its interface, not a setting).
BASH = "bash"


def shell():
    return shutil.which(BASH) or "/bin/bash"


def _captured(fh):
    """What the file holds now (its size at this moment, read to there)."""
    size = os.fstat(fh.fileno()).st_size
    fh.seek(0)
    chunks, left = [], size
    while left > 0:
        chunk = fh.read(min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def run(command, cwd=None, session=None, tool_use_id=None, settings=None, out=None, err=None):
    """Run `command`; write what the agent reads to `out` (stdout) and `err`
    (stderr); return the exit status."""
    out = out or sys.stdout.buffer
    err = err or sys.stderr.buffer
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        proc = subprocess.Popen([shell(), "-c", command], cwd=cwd or None, stdout=fo, stderr=fe)
        rc = proc.wait()
        status = 128 - rc if rc < 0 else rc
        data, errdata = _captured(fo), _captured(fe)
    for stream, blob, name in ((out, data, "stdout"), (err, errdata, "stderr")):
        text = None
        if blob:
            try:
                text = cached_text(blob, command, cwd, session, tool_use_id, status, settings, name)
            except Exception as exc:  # noqa: BLE001 - the output itself is always better than nothing
                sys.stderr.write(f"engine cache: {name} not cached ({type(exc).__name__}: {exc}); it follows\n")
                sys.stderr.flush()
        stream.write(blob if text is None else text.encode("utf-8"))
        stream.flush()
    return status


def cached_text(data, command, cwd, session, tool_use_id, status, settings=None, stream="stdout"):
    """The stub for an output over the threshold, or None to show it as it is."""
    from . import config
    from .store import Store
    from .stub import render

    settings = settings or config.load()
    if len(data) <= settings["intercept"]["bash"]["threshold_bytes"]:
        return None
    store = Store(settings)
    pin = pins = None
    if session:
        from .pins import SessionPins

        pins = SessionPins(store, session)
        pin = pins.take()
    source = {"tool": "Bash", "command": command, "cwd": cwd, "exit": status, "tool_use_id": tool_use_id}
    if stream != "stdout":
        source["stream"] = stream
    key = store.put(data, source, session=session, pin=pin)
    if key is None:
        return None  # a secret: never cached
    if pins is not None:
        pins.stored(key)
    return render(settings, "template", key, store, store.meta(key), status, command) + "\n"
