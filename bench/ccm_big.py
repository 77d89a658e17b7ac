#!/usr/bin/env python3
"""`engine cache run` and `engine cache show` on a very large output (issue
15): peak memory (RSS of the engine process and what it waited for) and
time, with the output stored through the streaming store.

    python3 bench/ccm_big.py [--mb 200] [--tree DIR] [--out-dir DIR]

--tree measures another checkout of the engine (for example an export of
an older commit: `git archive 3bf441d | tar -x -C /tmp/old`), to compare.
Writes its section (`ccm_big`) of bench/results.json and bench/results.md.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, arguments, fmt_table, loadavg, log, machine, publish

GOAL_MB = 100  # peak RSS of `cache run` on any output size: tens of MB
LINE = "2025-01-01T00:00:00 INFO worker-7 processed request id=12345 status=200 in 3.2 ms path=/api/items"


def measured(cmd, env, cwd, stdout=subprocess.DEVNULL):
    """(exit status, peak RSS in MB of the process and its waited children, seconds)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode("utf-8", "replace")
    if proc.returncode:
        log(f"{' '.join(cmd[:6])}... exited {proc.returncode}: {err[-400:]}")
    return proc.returncode, usage.ru_maxrss / 1024, seconds  # ru_maxrss: KB on Linux


def main(argv=None):
    ap = arguments("Content cache: cache run / cache show peak memory on a large output.")
    ap.add_argument("--mb", type=int, default=200, help="output size in MB (default 200)")
    ap.add_argument("--tree", default=str(REPO), help="the engine checkout to measure (default: this one)")
    args = ap.parse_args(argv)
    before = loadavg()
    tree = str(Path(args.tree).resolve())
    work = Path(tempfile.mkdtemp(prefix="ccm-big-"))
    env = dict(os.environ, PYTHONPATH=tree, ENGINE_CACHE_DIR=str(work / "cache"), ENGINE_STATE_DIR=str(work / "state"),
               HOME=str(work / "home"), XDG_CACHE_HOME=str(work / "xdg-cache"), XDG_CONFIG_HOME=str(work / "xdg-config"),
               XDG_STATE_HOME=str(work / "xdg-state"), CLAUDE_CONFIG_DIR=str(work / "claude"))
    nbytes = args.mb * 1024 * 1024
    producer = f"yes {LINE!r} | head -c {nbytes}"
    engine = [sys.executable, "-m", "engine.cli"]
    try:
        log(f"engine cache run on {args.mb} MB of output ({tree})")
        with open(work / "stub.txt", "wb") as out:
            rc, run_mb, run_s = measured(engine + ["cache", "run", "--", producer], env, tree, stdout=out)
        stub = (work / "stub.txt").read_text("utf-8", "replace")
        key = next((w[len("sha256:"):] for w in stub.split() if w.startswith("sha256:")), None)
        show_mb = show_s = None
        if key:
            log("engine cache show of it")
            _rc, show_mb, show_s = measured(engine + ["cache", "show", key], env, tree)
        disk = sum(f.stat().st_size for f in work.rglob("*") if f.is_file() and f.name != "stub.txt")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [["cache run", f"{args.mb} MB", f"{run_mb:.0f}", f"{run_s:.2f}"]]
    if show_mb is not None:
        rows.append(["cache show", f"{args.mb} MB", f"{show_mb:.0f}", f"{show_s:.2f}"])
    headers = ["Command", "Output", "Peak RSS MB", "Seconds"]
    head = (f"`engine cache run -- \"yes LINE | head -c {nbytes}\"`, then `engine cache show KEY > /dev/null`; "
            f"peak RSS of the engine process (os.wait4, includes what it waited for); cache on disk after: "
            f"{disk / 1024:.0f} KB. Tree: {tree}.")
    targets = [{"target": f"cache run on {args.mb} MB of output, peak RSS", "measured": f"{run_mb:.0f} MB",
                "goal": f"< {GOAL_MB} MB (bounded, whatever the size)", "ok": rc == 0 and run_mb < GOAL_MB}]
    sec = {"mb": args.mb, "tree": tree, "run_rss_mb": run_mb, "run_s": run_s, "show_rss_mb": show_mb, "show_s": show_s,
           "stored": bool(key), "machine": machine(before), "targets": targets,
           "markdown": "\n".join(["#### Content cache: a very large output", head, "", fmt_table(headers, rows, md=True)]),
           "text": "\n".join(["== Content cache: a very large output", head, "", fmt_table(headers, rows)])}
    publish(args.out_dir, {"ccm_big": sec})
    return 0


if __name__ == "__main__":
    sys.exit(main())
