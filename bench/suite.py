#!/usr/bin/env python3
"""The test suite's time: the README's test command (`python3 -m pytest -n
auto`) in a checkout, its wall time and the CPU the whole machine spent
meanwhile (/proc/stat, so every process counts: the workers, the hook
commands they start, the real agents, the processes those leave behind).
Issue 24 and the developers' guide ask for under 90 s on 2 cores.

    python3 bench/suite.py [--repo DIR]...

Run it on a quiet machine; `--repo` (repeatable) times other checkouts (a
worktree of an older commit) one after the other in the same conditions,
for a before and after: one row each.  Prints the figures and writes
bench/results-suite.md.
"""

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from common import git_info, loadavg, write_section

HERE = Path(__file__).resolve().parent


def busy_jiffies():
    """CPU time the machine has spent busy since boot, in clock ticks (user,
    nice, system, irq, softirq of the `cpu` line)."""
    with open("/proc/stat", encoding="ascii") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq = fields[:7]
    return user + nice + system + irq + softirq


def run_suite(repo):
    """(wall seconds, busy CPU seconds, pytest's last line, exit status)."""
    ticks = os.sysconf("SC_CLK_TCK")
    cpu0, t0 = busy_jiffies(), time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "auto", "-p", "no:cacheprovider"], cwd=repo,
                          capture_output=True, text=True)
    wall, cpu = time.monotonic() - t0, (busy_jiffies() - cpu0) / ticks
    lines = [l for l in proc.stdout.splitlines() if re.search(r"\d+ (passed|failed)", l)]
    return wall, cpu, (lines[-1].strip("= ") if lines else "no summary line"), proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", action="append", help="a checkout whose suite runs, in the order given "
                    "(default: this one)")
    args = ap.parse_args()
    before = loadavg()
    rows, worst = [], 0
    for repo in args.repo or [str(HERE.parent)]:
        wall, cpu, summary, rc = run_suite(repo)
        label = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                               capture_output=True, text=True).stdout.strip()
        rows.append(f"| {label} | {wall:.0f} s | {cpu:.0f} s | {os.cpu_count()} | {summary} (exit {rc}) |")
        print(rows[-1], flush=True)
        worst = worst or rc
    write_section("results-suite.md", "The test suite's time (`python3 -m pytest -n auto`)", [
        f"Measured {time.strftime('%Y-%m-%dT%H:%M:%S%z')} by `python3 bench/suite.py` (bench at {git_info()['commit']}); "
        f"load average before/after {before} / {loadavg()}."],
        ["checkout", "wall", "machine CPU", "CPUs", "pytest"], rows)
    return worst


if __name__ == "__main__":
    sys.exit(main())
