#!/usr/bin/env python3
"""The test suite's time: the README's test command (`python3 -m pytest -n
auto`) in a checkout, its wall time and the CPU the whole machine spent
meanwhile (/proc/stat, so every process counts: the workers, the hook
commands they start, the real agents, the processes those leave behind).
Issue 24 and the developers' guide ask for under 90 s on 2 cores.

    python3 bench/suite.py [--repo DIR]...
    python3 bench/suite.py --per-test

Run it on a quiet machine; `--repo` (repeatable) times other checkouts (a
worktree of an older commit) one after the other in the same conditions,
for a before and after: one row each.  Every checkout runs with this
interpreter: where its venv holds an editable install of another
checkout, the hook commands the real agents start (`python -I`, no
PYTHONPATH) run that checkout's engine.  Prints the figures and writes
bench/results-suite.md.

`--per-test` runs this checkout's suite once with bench/pertest.py, which
takes each test's CPU (the worker's own and its children's), and writes
bench/results-suite-where.md: where the time goes (the tests marked slow and
the others, the costliest test files and tests), and the floor, the wall time the suite
would still take on this machine's CPUs if every test over 1 s (or 2 s) cost
nothing.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import fmt_table, git_info, loadavg, measured_line, write_section

HERE = Path(__file__).resolve().parent


def busy_jiffies():
    """CPU time the machine has spent busy since boot, in clock ticks (user,
    nice, system, irq, softirq of the `cpu` line)."""
    with open("/proc/stat", encoding="ascii") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq = fields[:7]
    return user + nice + system + irq + softirq


def run_suite(repo, plugin=(), env=None):
    """(wall seconds, busy CPU seconds, pytest's last line, exit status)."""
    ticks = os.sysconf("SC_CLK_TCK")
    cpu0, t0 = busy_jiffies(), time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "auto", "-p", "no:cacheprovider", *plugin],
                          cwd=repo, capture_output=True, text=True, env=env)
    wall, cpu = time.monotonic() - t0, (busy_jiffies() - cpu0) / ticks
    lines = [l for l in proc.stdout.splitlines() if re.search(r"\d+ (passed|failed)", l)]
    return wall, cpu, (lines[-1].strip("= ") if lines else "no summary line"), proc.returncode


def per_test():
    """The suite once with bench/pertest.py: (wall, machine CPU, summary, rc, [row per test])."""
    with tempfile.TemporaryDirectory(prefix="engine-suite-") as folder:
        env = dict(os.environ, ENGINE_BENCH_PERTEST_DIR=folder,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")])))
        wall, cpu, summary, rc = run_suite(str(HERE.parent), ("-p", "pertest"), env)
        rows = [json.loads(line) for f in sorted(Path(folder).glob("*.jsonl"))
                for line in f.read_text(encoding="utf-8").splitlines()]
    return wall, cpu, summary, rc, rows


def by_command(rows):
    """A markdown table of the forked children's CPU by command, the costliest first."""
    total = {}
    for row in rows:
        for name, (n, cpu) in row.get("commands", {}).items():
            tally = total.setdefault(name, [0, 0.0])
            tally[0] += n
            tally[1] += cpu
    ranked = sorted(total.items(), key=lambda item: item[1][1], reverse=True)
    return fmt_table(["command", "children", "CPU", "per child"],
                     [(f"`engine {name}`", n, f"{cpu:.1f} s", f"{1000 * cpu / n:.1f} ms") for name, (n, cpu) in ranked],
                     md=True)


def by_file(rows, top):
    """A markdown table of the tests' CPU by test file, the costliest `top` first."""
    total = {}
    for row in rows:
        tally = total.setdefault(row["id"].split("::")[0], [0, 0.0, 0.0, 0.0])
        tally[0] += 1
        tally[1] += cost(row)
        tally[2] += row["own"]
        tally[3] += row["kids"]
    ranked = sorted(total.items(), key=lambda item: item[1][1], reverse=True)[:top]
    return fmt_table(["file", "tests", "CPU", "worker", "children"],
                     [(name, n, f"{cpu:.1f} s", f"{own:.1f} s", f"{kids:.1f} s") for name, (n, cpu, own, kids) in ranked],
                     md=True)


def floor_line(rows, over, cpus):
    """What the tests under `over` seconds cost together, and the wall time
    that is on `cpus` CPUs at best."""
    under = sum(cost(r) for r in rows if cost(r) < over)
    kept = sum(1 for r in rows if cost(r) < over)
    return (f"If every test of {over:g} s or more cost nothing, the other {kept} would still take {under:.0f} s of "
            f"CPU: {under / cpus:.0f} s of wall time on {cpus} CPUs at best.")


def cost(row):
    return row["own"] + row["kids"]


def where(top):
    before = loadavg()
    wall, cpu, summary, rc, rows = per_test()
    if not rows:  # no test ran (this interpreter lacks pytest, or the run broke): nothing worth writing
        print(f"no test ran: {summary} (exit {rc}); run it with the test environment's python "
              "(the README's \"Run the tests\")", file=sys.stderr)
        return rc or 1
    cpus = os.cpu_count() or 1
    slow = [r for r in rows if r["slow"]]
    total = sum(cost(r) for r in rows)
    notes = [
        measured_line("python3 bench/suite.py --per-test", f"{cpus} CPUs", before),
        f"{summary} (exit {rc}): {wall:.0f} s of wall time, {cpu:.0f} s of the machine's CPU. The tests' own CPU, "
        f"each taken by bench/pertest.py: {total:.0f} s ({sum(r['own'] for r in rows):.0f} s in the workers, "
        f"{sum(r['kids'] for r in rows):.0f} s in the processes they started and waited for, "
        f"{sum(r['forked'] for r in rows):.0f} s of it in the `engine` children tests/forkrun.py forked).",
        f"The {len(slow)} tests marked slow: {sum(cost(r) for r in slow):.0f} s. The other {len(rows) - len(slow)}: "
        f"{total - sum(cost(r) for r in slow):.0f} s.",
        floor_line(rows, 1.0, cpus), floor_line(rows, 2.0, cpus),
        "The forked `engine` children by command (their own CPU and that of what they waited for, such as "
        "the compile box; from the first argument that is no option):", by_command(rows),
        f"The {top} costliest test files:", by_file(rows, top),
        f"The {top} costliest tests:"]
    table = [f"| {r['id']} | {cost(r):.1f} s | {r['own']:.1f} s | {r['kids']:.1f} s | {'slow' if r['slow'] else ''} |"
             for r in sorted(rows, key=cost, reverse=True)[:top]]
    write_section("results-suite-where.md", "Where the test suite's time goes", notes,
                  ["test", "CPU", "worker", "children", "mark"], table)
    return rc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", action="append", help="a checkout whose suite runs, in the order given "
                    "(default: this one)")
    ap.add_argument("--per-test", action="store_true", help="this checkout once, each test's CPU: "
                    "bench/results-suite-where.md")
    ap.add_argument("--top", type=int, default=25, help="with --per-test: how many tests the table lists")
    args = ap.parse_args()
    if args.per_test:
        return where(args.top)
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
