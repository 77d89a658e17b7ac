"""Cold compiled-profile cache (issue 14, finding 8): the whole-process time
of N parallel UserPromptSubmit hooks started at once on an empty cache
(median, max, and the turns counted), and the peak memory of a cold compile
of a hostile profile (a protect pattern (?:(?:(?:q{1000}){1000}){1000})).

    python3 bench/hooks_cold.py [--repo PATH] [--n 40] [--cap SECONDS] [--as-limit-mb MB]

--repo is the checkout whose engine runs (default: this one), so an older
commit can be measured too.  Every run has a scratch HOME, state and cache
folder.  Each process gets an address-space limit (--as-limit-mb, default
4096): an unbounded compile then fails inside that limit instead of taking
the machine's memory.  Peak memory is the largest ru_maxrss of the hook and
its children (resource.getrusage(RUSAGE_CHILDREN), measured in a runner
process per case).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import fmt_table, loadavg, machine, now, publish

HOSTILE = "(?:(?:(?:q{1000}){1000}){1000})"

# Runs one hook in a fresh process and prints its peak RSS (all descendants).
RUNNER = r"""
import resource, subprocess, sys
lim = int(sys.argv[1]) << 20
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
p = subprocess.run([sys.executable, "-m", "engine.cli", *sys.argv[3:]], input=sys.argv[2].encode(),
                   capture_output=True, preexec_fn=cap, timeout=600)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10, p.returncode)
"""


def world(root):
    root = Path(root)
    for d in ("home", "project", "state", "cache"):
        (root / d).mkdir(parents=True, exist_ok=True)
    rules = root / "project" / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "a.md").write_text("# A\nAlways run the tests before you commit.\n", encoding="utf-8")
    return root


def env(root, repo):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "XDG_", "CLAUDE"))}
    e.update(HOME=str(root / "home"), ENGINE_STATE_DIR=str(root / "state"), ENGINE_CACHE_DIR=str(root / "cache"),
             XDG_CONFIG_HOME=str(root / "home" / ".config"), XDG_CACHE_HOME=str(root / "home" / ".cache"),
             CLAUDE_CONFIG_DIR=str(root / "home" / ".claude"), PYTHONPATH=str(repo))
    return e


def prompt(root, session, i):
    return json.dumps({"session_id": session, "transcript_path": str(root / "none.jsonl"), "cwd": str(root / "project"),
                       "hook_event_name": "UserPromptSubmit", "prompt": f"prompt {i}"}).encode()


def file_turn(root):
    folder = root / "state" / "sessions"
    for p in folder.glob("*.json") if folder.is_dir() else ():
        try:
            return json.loads(p.read_text()).get("turn")
        except ValueError:
            return None
    return None


def parallel_cold(repo, n, cap, as_limit):
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (as_limit << 20, as_limit << 20))

    with tempfile.TemporaryDirectory(prefix="bench-cold-") as tmp:
        root = world(tmp)
        e = env(root, repo)
        procs = []
        t0 = time.monotonic()
        for i in range(n):
            p = subprocess.Popen([sys.executable, "-m", "engine.cli", "hook"], stdin=subprocess.PIPE,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(root / "project"),
                                 env=e, preexec_fn=limit)
            procs.append((p, time.monotonic()))
            p.stdin.write(prompt(root, "bench-session", i))
            p.stdin.close()
        times, killed = [], 0
        for p, started in procs:
            try:
                p.wait(timeout=max(0.1, cap - (time.monotonic() - t0)))
                times.append(time.monotonic() - started)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
                killed += 1
                times.append(float("inf"))
        wall = time.monotonic() - t0
        # processes are reaped in order: a time is an upper bound of that process's own
        return times, killed, file_turn(root), wall


def hostile_peak(repo, as_limit, cap):
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        root = world(tmp)
        mine = root / "mine"
        mine.mkdir()
        (mine / "evil.yaml").write_text("kind: protect\nname: evil\ndescription: hostile\npatterns:\n"
                                        f"  - '{HOSTILE}'\nexamples:\n  match: [qqq]\n  no_match: [abc]\n")
        (mine / "profile.yaml").write_text("kind: profile\nname: evil\nextends: default\nprotect:\n  add: [./evil.yaml]\n")
        t0 = time.monotonic()
        try:
            out = subprocess.run([sys.executable, "-c", RUNNER, str(as_limit), prompt(root, "s", 1).decode(),
                                  "hook", "--profile", str(mine / "profile.yaml")],
                                 capture_output=True, cwd=str(root / "project"), env=env(root, repo), timeout=cap)
        except subprocess.TimeoutExpired:
            return None, None, f"> {cap} s"
        secs = time.monotonic() - t0
        peak, rc = out.stdout.decode().split()
        log = (root / "state" / "hook.log")
        last = log.read_text().strip().splitlines()[-1] if log.exists() else ""
        return int(peak), secs, last[-200:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--cap", type=float, default=120.0)
    ap.add_argument("--as-limit-mb", type=int, default=4096)
    ap.add_argument("--out-dir", default=str(Path(__file__).resolve().parent),
                    help="where results.json and results.md go (default: bench/)")
    args = ap.parse_args()
    before = loadavg()
    print(f"repo {args.repo}, {os.cpu_count()} CPUs, load {before}")
    times, killed, turn, wall = parallel_cold(args.repo, args.n, args.cap, args.as_limit_mb)
    done = [t for t in times if t != float("inf")]
    med = statistics.median(times)
    cold = (f"{args.n} parallel cold UserPromptSubmit hooks: median {med:.2f} s, max "
            f"{max(times):.2f} s, all done in {wall:.2f} s, killed at the cap: {killed}, turns counted: {turn}/{args.n}"
            + ("" if done else " (none finished)"))
    peak, secs, last = hostile_peak(args.repo, args.as_limit_mb, args.cap)
    hostile = (f"cold compile of a hostile profile: peak RSS {peak} MB, {secs if secs is None else round(secs, 2)} s; "
               f"hook log: {last}")
    rows = [[f"{args.n} parallel cold hooks, whole process", f"median {med:.2f} s, max {max(times):.2f} s",
             f"{turn}/{args.n} turns counted, {killed} killed"],
            ["cold compile of a hostile profile", f"peak RSS {peak} MB", f"{secs if secs is None else round(secs, 2)} s"]]
    sec = {"when": now(), "machine": machine(before), "text": cold + "\n" + hostile,
           "markdown": "### Cold cache and hostile profiles (`python3 bench/hooks_cold.py`)\n\n"
                       + fmt_table(["case", "measured", ""], rows, md=True, numeric=False),
           "targets": [{"target": f"{args.n} parallel cold hooks all end and count", "measured": f"{turn}/{args.n}, max {max(times):.2f} s",
                        "goal": "all, before the 8 s deadline", "ok": turn == args.n and killed == 0 and max(times) < 8.0}]}
    publish(args.out_dir, {"hooks_cold": sec})


if __name__ == "__main__":
    main()
