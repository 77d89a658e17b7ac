#!/usr/bin/env python3
"""Commands that compile several profiles, on a cold cache: a user's first
`engine validate`, `engine stats` over several levels and `engine golden`,
beside `engine compress` (one compile) for scale.  Each run is a fresh
`python -m engine.cli` process with an empty HOME and cache folder; the
figures are the median wall time and the median CPU of the process and its
children (the compile boxes included).

    python3 bench/cold_commands.py [--repo DIR]... [--runs N]

`--repo` (repeatable) measures other checkouts (a worktree of an older
commit) the same way, for a before and after.  Prints the figures and
writes bench/results-cold.md.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import checkout_args, loadavg, measured_line, write_section

HERE = Path(__file__).resolve().parent

COMMANDS = (
    ("compress", ["compress", "README.md", "--level", "standard"]),
    ("validate", ["validate"]),
    ("stats, 4 levels", ["stats", "README.md", "--levels", "off", "light", "standard", "aggressive"]),
    ("golden", ["golden"]),
)


def children_cpu():
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def run_cold(repo, args):
    """(wall seconds, CPU seconds, exit status) of one run on an empty HOME and cache."""
    with tempfile.TemporaryDirectory(prefix="engine-cold-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "XDG_"))}
        env.update(HOME=home, ENGINE_CACHE_DIR=os.path.join(home, "cache"), PYTHONPATH=str(repo))
        cpu0, t0 = children_cpu(), time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "engine.cli", *args], cwd=repo, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.monotonic() - t0, children_cpu() - cpu0, proc.returncode


def measure(repo, runs):
    git = ["git", "-C", repo]
    label = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    if subprocess.run([*git, "status", "--porcelain", "--", "engine"], capture_output=True, text=True).stdout:
        label += " (engine/ edited)"
    rows = []
    for name, args in COMMANDS:
        results = [run_cold(repo, args) for _ in range(runs)]
        wall = statistics.median(r[0] for r in results)
        cpu = statistics.median(r[1] for r in results)
        codes = sorted({r[2] for r in results})
        rows.append(f"| {label} | `engine {' '.join(args)}` | {wall:.2f} s | {cpu:.2f} s | "
                    f"{', '.join(map(str, codes))} |")
        print(rows[-1], flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    checkout_args(ap, runs=3)
    args = ap.parse_args()
    before = loadavg()
    rows = [row for repo in args.repo or [str(HERE.parent)] for row in measure(repo, args.runs)]
    write_section("results-cold.md", "Commands on a cold cache (several compiles each)", [
        measured_line(f"python3 bench/cold_commands.py --runs {args.runs}",
                      f"median of {args.runs} runs, each a fresh process with an empty HOME and cache", before)],
        ["checkout", "command", "wall", "CPU", "exit"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
