#!/usr/bin/env python3
"""What one fork and exit costs a process that holds what the test suite's
zygote holds (tests/forkrun.py forks every `engine` command of the suite
from one): the CPU of the parent (the fork) and of the child (its exit),
for a bare interpreter, one that loaded the tokenizer's table alone, and
one warmed as the zygote is (every engine module imported, the tokenizer
loaded, the built-in profile compiled once), each with Python's own small
object allocator and with glibc's malloc (PYTHONMALLOC=malloc) on huge
pages (the zygote runs with GLIBC_TUNABLES=glibc.malloc.hugetlb=1).  The
last rows give the child work too: it compresses examples/CLAUDE.md with
the built-in profile before it exits, as a forked `engine compress` does
(its writes to the objects it shares with the parent copy their pages).

    python3 bench/fork_cost.py [--forks N]

Prints a table and writes bench/results-fork.md.
"""

import argparse
import json
import os
import resource
import subprocess
import sys

from common import REPO, write_section

STATES = ("bare", "tokenizer", "warmed", "warmed, child compresses")
ALLOCATORS = ("pymalloc", "malloc")


def _warm(state):
    """Load what `state` names (in this process)."""
    if state == "bare":
        return
    from engine.text.tokens import encoding

    encoding("o200k_base")
    if state.startswith("warmed"):
        import pkgutil

        import engine
        from engine.core.profile import build, choice

        for mod in pkgutil.walk_packages(engine.__path__, "engine."):
            if not mod.name.endswith("__main__"):
                __import__(mod.name)
        build(chosen=choice("default"))


def _cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _work(state):
    """What each child does before it exits: nothing, or a compress."""
    if state != STATES[-1]:
        return lambda: None
    from engine.core.profile import build, choice
    from engine.text.pipeline import compress

    profile, text = build(chosen=choice("default")), (REPO / "examples" / "CLAUDE.md").read_text(encoding="utf-8")
    return lambda: compress(profile, text)


def measure(state, forks):
    """{rss_mb, parent_ms, child_ms} per fork and exit, in this process."""
    import gc

    _warm(state)
    work = _work(state)
    gc.collect()
    gc.freeze()
    parent, child = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    for _ in range(forks):
        pid = os.fork()
        if pid == 0:
            work()
            os._exit(0)
        os.waitpid(pid, 0)
    with open("/proc/self/statm", "rb") as fh:
        rss = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20
    return {"rss_mb": rss, "parent_ms": 1000 * (_cpu(resource.RUSAGE_SELF) - parent) / forks,
            "child_ms": 1000 * (_cpu(resource.RUSAGE_CHILDREN) - child) / forks}


def _run(state, allocator, forks):
    env = dict(os.environ, GLIBC_TUNABLES="glibc.malloc.hugetlb=1", PYTHONPATH=str(REPO))
    if allocator == "malloc":
        env["PYTHONMALLOC"] = "malloc"
    out = subprocess.run([sys.executable, __file__, "--one", state, "--forks", str(forks)], env=env,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--forks", type=int, default=200)
    parser.add_argument("--one", choices=STATES, help=argparse.SUPPRESS)  # a measuring process
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.forks)))
        return
    rows = []
    for state in STATES:
        for allocator in ALLOCATORS:
            r = _run(state, allocator, args.forks)
            rows.append(f"| {state} | {allocator} | {r['rss_mb']} | {r['parent_ms']:.2f} | {r['child_ms']:.2f} | "
                        f"{r['parent_ms'] + r['child_ms']:.2f} |")
    write_section("results-fork.md", f"One fork and exit of a process that holds what the suite's zygote holds "
                  f"(mean of {args.forks})", [
                      "Command: `python3 bench/fork_cost.py`; glibc.malloc.hugetlb=1 as in tests/forkrun.py. "
                      "A child that runs an `engine` command pays this besides its own work.",
                      f"Load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs."],
                  ["state", "allocator", "RSS MB", "parent ms", "child ms", "both ms"], rows)


if __name__ == "__main__":
    main()
