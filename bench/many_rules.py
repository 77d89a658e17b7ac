#!/usr/bin/env python3
"""The hook's whole-process time when a project holds many rule files and
the event must know which of them are in view: Claude Code's
SessionStart(compact) over N files in `.claude/rules` (the in-view check
asks the agent's instruction files once per rule file), with a transcript
that holds a compaction.  Each run is a fresh `engine hook` process with a
warm compiled-profile cache and empty state.

    python3 bench/many_rules.py [--repo DIR]... [--files N] [--runs N]

`--repo` (repeatable) measures other checkouts (a worktree of an older
commit) the same way, for a before and after.  Prints the figures and
writes bench/results-many-rules.md.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import checkout_args, loadavg, measured_line, write_section

HERE = Path(__file__).resolve().parent
SESSION = "bench-many-rules"


def world(root, files):
    """A git project with `files` rule files, a transcript ending in a
    compaction, and the SessionStart(compact) event for it."""
    project = root / "project"
    rules = project / ".claude" / "rules"
    rules.mkdir(parents=True)
    (project / ".git").mkdir()
    for i in range(files):
        (rules / f"r{i:05d}.md").write_text(f"# Rule {i}\nKeep module {i} small.\n", encoding="utf-8")
    usage = {"input_tokens": 10, "cache_read_input_tokens": 50000, "output_tokens": 5}
    records = [
        {"type": "user", "version": "2.1.330", "sessionId": SESSION, "isSidechain": False, "uuid": "u1",
         "message": {"role": "user", "content": "hello"}},
        {"type": "assistant", "version": "2.1.330", "sessionId": SESSION, "isSidechain": False, "uuid": "a1",
         "message": {"id": "m1", "model": "claude-opus-4-6", "role": "assistant", "usage": usage,
                     "content": [{"type": "text", "text": "ok"}]}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "isSidechain": False, "version": "2.1.330",
         "compactMetadata": {"trigger": "auto", "preTokens": 150000}},
    ]
    transcript = root / "transcript.jsonl"
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project),
             "hook_event_name": "SessionStart", "source": "compact"}
    return project, json.dumps(event).encode()


def run_once(repo, root, project, event):
    """Wall seconds and exit status of one hook process (state emptied first)."""
    shutil.rmtree(root / "state", ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "XDG_", "CLAUDE_"))}
    env.update(HOME=str(root / "home"), ENGINE_CACHE_DIR=str(root / "cache"), ENGINE_STATE_DIR=str(root / "state"),
               PYTHONPATH=str(repo))
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "engine.cli", "hook"], input=event, cwd=project, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0, proc.returncode


def measure(repo, files, runs):
    label = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"], capture_output=True,
                           text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="engine-many-rules-") as tmp:
        root = Path(tmp)
        (root / "home").mkdir()
        project, event = world(root, files)
        run_once(repo, root, project, event)  # compiles the profile: the cache is warm after
        results = [run_once(repo, root, project, event) for _ in range(runs)]
    wall = statistics.median(r[0] for r in results)
    codes = sorted({r[1] for r in results})
    row = f"| {label} | {files:,} | {wall:.2f} s | {min(r[0] for r in results):.2f} s | {', '.join(map(str, codes))} |"
    print(row, flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    checkout_args(ap, runs=5)
    ap.add_argument("--files", type=int, default=3000, help="rule files in the project")
    args = ap.parse_args()
    before = loadavg()
    rows = [measure(repo, args.files, args.runs) for repo in args.repo or [str(HERE.parent)]]
    write_section("results-many-rules.md", "SessionStart(compact) over many rule files", [
        measured_line(f"python3 bench/many_rules.py --files {args.files} --runs {args.runs}",
                      f"median and fastest of {args.runs} fresh hook processes, warm compiled-profile cache, "
                      "empty state", before)],
        ["checkout", "rule files", "median", "fastest", "exit"], rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
