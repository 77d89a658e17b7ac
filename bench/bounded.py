#!/usr/bin/env python3
"""Peak memory of the user-run commands on hostile transcripts (issue 23,
item 7): one 150 MB line, and a 2 GB sparse file (no disk: a hole).

    python3 bench/bounded.py [--line-mb 150] [--sparse-gb 2] [--only replay,purge]

Each command runs as its own process (`python -m engine.cli`) in a
throwaway HOME, state and cache; its peak resident memory is the child's
own `ru_maxrss` (os.wait4), its time the wall clock.  The exit status and
the first line of stderr show whether it ended as it should (one line, no
traceback).  Prints a table; writes nothing outside its temporary folder.
To measure another checkout, run this file from it (its engine is the one
imported: the child's working folder is the checkout).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from common import REPO, fmt_table, log

TOOL_ID = "toolu_bench_1"


def long_line_transcript(path, megabytes):
    """A session whose one tool result is a `megabytes` MB line, between
    ordinary lines (a prompt, the tool call, the answer after it)."""
    head = [
        {"type": "user", "sessionId": "bench", "cwd": "/p", "uuid": "u1", "parentUuid": None,
         "message": {"role": "user", "content": "list everything"}},
        {"type": "assistant", "sessionId": "bench", "uuid": "a1", "parentUuid": "u1",
         "message": {"id": "m1", "model": "claude-bench", "role": "assistant",
                     "content": [{"type": "tool_use", "id": TOOL_ID, "name": "Bash", "input": {"command": "find /"}}],
                     "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}},
    ]
    tail = {"type": "assistant", "sessionId": "bench", "uuid": "a2", "parentUuid": "u2",
            "message": {"id": "m2", "model": "claude-bench", "role": "assistant", "content": [{"type": "text", "text": "done"}],
                        "usage": {"input_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}
    with open(path, "w", encoding="utf-8") as fh:
        for rec in head:
            fh.write(json.dumps(rec) + "\n")
        opening = {"type": "user", "sessionId": "bench", "uuid": "u2", "parentUuid": "a1",
                   "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": TOOL_ID, "content": "@"}]}}
        before, after = json.dumps(opening).split('"@"')
        fh.write(before + '"')
        row = "/usr/share/doc/some/file/name.txt\\n"
        block = row * (1048576 // len(row))
        for _ in range(megabytes):
            fh.write(block)
        fh.write('"' + after + "\n")
        fh.write(json.dumps(tail) + "\n")


def sparse_file(path, gigabytes):
    with open(path, "wb") as fh:
        fh.truncate(gigabytes * 1024 ** 3)


def run(args, env, cwd):
    """(peak RSS in MB, seconds, exit status, first stderr line)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([sys.executable, "-m", "engine.cli", *args], cwd=cwd, env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - t0
        err.seek(0)
        lines = err.read().decode("utf-8", "replace").strip().splitlines()
    first = lines[0][:90] if lines else ""
    if any(line.startswith("Traceback") for line in lines):
        first = "TRACEBACK: " + (lines[-1][:80] if lines else "")
    return usage.ru_maxrss / 1024, seconds, proc.returncode, first


def commands(path):
    return {
        "replay": ["replay", path, "--json"],
        "session report": ["session", "report", path, "--json"],
        "messages --transcript": ["messages", "compress", "--transcript", path],
        "purge": ["purge", path, "--json"],  # last: it rewrites the file
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--line-mb", type=int, default=150)
    ap.add_argument("--sparse-gb", type=int, default=2)
    ap.add_argument("--only", default="", help="comma list of commands (default: all)")
    a = ap.parse_args()
    only = [c.strip() for c in a.only.split(",") if c.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="engine-bench-bounded-") as tmp:
        env = dict(os.environ)
        for var, sub in (("HOME", "home"), ("ENGINE_STATE_DIR", "state"), ("ENGINE_CACHE_DIR", "cache"),
                         ("XDG_CONFIG_HOME", "home/.config"), ("CLAUDE_CONFIG_DIR", "home/.claude")):
            os.makedirs(os.path.join(tmp, sub), exist_ok=True)
            env[var] = os.path.join(tmp, sub)
        for var in ("ENGINE_PROFILE", "ENGINE_REDIS_URL", "ENGINE_CONTENT_CACHE"):
            env.pop(var, None)
        env["PYTHONPATH"] = str(REPO)
        inputs = {}
        line = os.path.join(tmp, "long-line.jsonl")
        log(f"writing a transcript with one {a.line_mb} MB line")
        long_line_transcript(line, a.line_mb)
        inputs[f"one {a.line_mb} MB line"] = line
        sparse = os.path.join(tmp, "sparse.jsonl")
        sparse_file(sparse, a.sparse_gb)
        inputs[f"{a.sparse_gb} GB sparse file"] = sparse
        for what, path in inputs.items():
            for name, argv in commands(path).items():
                if only and name not in only:
                    continue
                os.utime(path, (time.time() - 3600, time.time() - 3600))  # not "live": purge needs no --force
                log(f"{name} on {what} ...")
                rss, seconds, rc, first = run(argv, env, str(REPO))
                rows.append([name, what, f"{rss:,.0f}", f"{seconds:.1f}", str(rc), first])
    print(fmt_table(["Command", "Input", "Peak RSS MB", "Seconds", "Exit", "First stderr line"], rows,
                    md=True, numeric=False))


if __name__ == "__main__":
    main()
