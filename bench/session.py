#!/usr/bin/env python3
"""Session report and path-scoped rules, whole process:

- `engine session report --json` on each real sample transcript and on a
  large one (a sample repeated to about 32 MB): time and peak memory, which
  must not grow with the file;
- a due refresh (SessionStart after a compaction) with path-scoped rules,
  with no transcript and with the 32 MB one (the touched files are read
  from its tail), beside `python3 -c pass`.

    python3 bench/session.py [--runs N]

Writes bench/results-session.md (the machine is shared: medians, few runs).
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import transcript_file, transcript_files

REPO = Path(__file__).resolve().parent.parent


def timed(argv, env, stdin=b""):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=env, timeout=600)
    took = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return took * 1000, max(after.ru_maxrss, before.ru_maxrss), proc.stdout


def maxrss_of(argv, env):
    """Peak RSS (KB) of one child, read by /usr/bin/time when present."""
    if not os.path.exists("/usr/bin/time"):
        return None
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", *argv], capture_output=True, env=env, timeout=600)
    return int(proc.stderr.decode().strip().splitlines()[-1])


def main():
    runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
    env = dict(os.environ, PYTHONPATH=str(REPO))
    py = [sys.executable]
    engine = py + ["-m", "engine.cli"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="engine-bench-session-") as tmp:
        tmp = Path(tmp)
        sample = transcript_file("10-agentcmd-v2026-image-result.jsonl")
        big = tmp / "big.jsonl"
        data = sample.read_bytes()
        with open(big, "wb") as fh:
            for _ in range(max(1, (32 << 20) // len(data))):
                fh.write(data)
        targets = transcript_files() + [big]
        for t in targets:
            ms = sorted(timed(engine + ["session", "report", str(t), "--json"], env)[0] for _ in range(runs))
            rss = maxrss_of(engine + ["session", "report", str(t), "--json"], env)
            rows.append((f"session report {t.name if t != big else 'big.jsonl'}", t.stat().st_size,
                         statistics.median(ms), rss))
        # a due refresh with path-scoped rules
        home, project = tmp / "home", tmp / "project"
        rules = project / ".claude" / "rules"
        rules.mkdir(parents=True)
        home.mkdir()
        for i in range(10):
            (rules / f"r{i}.md").write_text(f"---\npaths: apps/app/src/**/*.tsx\n---\nRule {i}: keep it short.\n")
        (rules / "plain.md").write_text("Always run the tests.\n")
        cwd10 = "/Users/jnarowski/Dev/sourceborn/src/agent-workflows-monorepo-v2"
        moved = tmp / "moved.jsonl"
        moved.write_bytes(big.read_bytes().replace(cwd10.encode(), str(project).encode()))
        henv = dict(env, HOME=str(home), ENGINE_STATE_DIR=str(tmp / "state"), ENGINE_CACHE_DIR=str(tmp / "cache"))
        for k in ("ENGINE_PROFILE", "ENGINE_REDIS_URL"):
            henv.pop(k, None)
        n = [0]

        def ev(transcript):
            n[0] += 1
            return json.dumps({"session_id": f"b{n[0]}", "transcript_path": transcript, "cwd": str(project),
                               "hook_event_name": "SessionStart", "source": "compact"}).encode()

        timed(engine + ["hook"], henv, ev(str(moved)))  # warm the caches
        for label, tr in (("no transcript", ""), (f"{moved.stat().st_size >> 20} MB transcript", str(moved))):
            ms, out = [], b""
            for _ in range(runs):
                took, _, out = timed(engine + ["hook"], henv, ev(tr))
                ms.append(took)
            injected = json.loads(out)["hookSpecificOutput"]["additionalContext"].count("Rule ")
            rows.append((f"hook SessionStart compact, path-scoped rules, {label} ({injected} scoped in)",
                         moved.stat().st_size if tr else 0, statistics.median(ms), None))
        base = statistics.median(timed(py + ["-c", "pass"], env)[0] for _ in range(runs))
        rows.append(("python3 -c pass", 0, base, None))
    lines = ["# Session report and path-scoped rules (bench/session.py)", "",
             f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, load "
             f"{os.getloadavg()[0]:.1f} (shared machine), median of {runs} runs, whole process.", "",
             "| what | file bytes | median ms | peak RSS KB |", "|---|---:|---:|---:|"]
    for what, size, ms, rss in rows:
        lines.append(f"| {what} | {size:,} | {ms:.0f} | {rss if rss is not None else ''} |")
    text = "\n".join(lines) + "\n"
    (REPO / "bench" / "results-session.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
