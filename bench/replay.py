"""`engine replay` on the shared real sessions, for the built-in profile:
per transcript, the injected tokens by kind, the already-in-view tokens
(avoidable), the kept-out tokens and the net priced effect (with the rates
used); then the whole-process time of `engine replay` on the largest shared
transcript and on a generated 4 MB session (goal: under 10 s on 2 cores).

    python3 bench/replay.py [--runs 3] [--out-dir bench/]

The events run in a project folder holding a CLAUDE.md and two rule files
from the shared corpus (the recorded sessions' own folders are not on this
machine).  The 4 MB session is the largest transcript followed by the first
lines of another, written to a temporary file.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, corpus_dir, fmt_table, loadavg, machine, now, publish, transcript_files

TRANSCRIPTS = "2*.jsonl"  # the long real sessions
PROJECT_FILES = {"CLAUDE.md": "001-claude-code-action-claude.md",
                 ".claude/rules/uv.md": "015-uv-agents.md", ".claude/rules/ghostty.md": "018-ghostty-agents.md"}
GOAL_SECONDS = 10.0
GENERATED_BYTES = 4 * 1024 * 1024


def project(root):
    for dst, src in PROJECT_FILES.items():
        p = Path(root) / dst
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes((corpus_dir() / src).read_bytes())
    return str(root)


def generated(files, folder):
    """A session of at least GENERATED_BYTES: the largest file, then whole
    lines of the next ones."""
    files = sorted(files, key=os.path.getsize, reverse=True)
    out = Path(folder) / "generated-4mb.jsonl"
    with open(out, "wb") as fh:
        size = 0
        for f in files:
            for line in open(f, "rb"):
                fh.write(line)
                size += len(line)
                if size >= GENERATED_BYTES:
                    return str(out)
    return str(out)


def env(root):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "XDG_", "CLAUDE"))}
    e.update(HOME=str(Path(root) / "home"), ENGINE_STATE_DIR=str(Path(root) / "state"),
             ENGINE_CACHE_DIR=str(Path(root) / "cache"), PYTHONPATH=str(REPO))
    return e


def whole_process(path, proj, runs):
    """Median and max seconds of `engine replay PATH --json` as a fresh
    process (each one compiles the profile in its own throwaway world)."""
    times = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
            (Path(tmp) / "home").mkdir()
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "engine.cli", "replay", path, "--profile", "default",
                                "--project", proj, "--json"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=env(tmp), cwd=tmp, timeout=600)
            times.append(time.perf_counter() - t0)
            if p.returncode != 0:
                raise SystemExit(f"engine replay failed on {path}: {p.stderr.decode()[-2000:]}")
    return statistics.median(times), max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out-dir", default=str(Path(__file__).resolve().parent))
    args = ap.parse_args()
    before = loadavg()
    files = [str(p) for p in transcript_files(TRANSCRIPTS)]
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as tmp:
        proj = project(Path(tmp) / "project")
        os.environ["HOME"] = str(Path(tmp) / "home")  # the replay copies ~/.claude's rules: none here
        os.makedirs(os.environ["HOME"])
        sys.path.insert(0, str(REPO))
        from engine.replay.run import replay

        result = replay(files, profile="default", project=proj)
        rows = []
        for s in result["sessions"]:
            kinds = ", ".join(f"{b['kind']} {b['tokens']:,}" for b in s["by_handler"].values()) or "none"
            r = s["rates"]
            rows.append([Path(s["transcript"]).name[:34], s["api_calls"], s["compactions"], kinds,
                         f"{s['already_in_view']['tokens']:,}", f"{s['kept_out']['tokens']:,}",
                         f"{s['net']['cost']:+.4f}", f"{r['name']}: {r['input']}/{r['cache_write']}/{r['cache_read']}"])
        t = result["totals"]
        rows.append(["total", "", "", ", ".join(f"{k} {b['tokens']:,}" for k, b in t["by_kind"].items()),
                     f"{t['already_in_view']['tokens']:,}", f"{t['kept_out']['tokens']:,}",
                     f"{t['net']['cost']:+.4f}", ""])
        headers = ["transcript", "API calls", "compactions", "injected tokens by kind", "already in view",
                   "kept out", "net USD", "rates (in/write/read per MTok)"]
        largest = max(files, key=os.path.getsize)
        big_med, big_max = whole_process(largest, proj, args.runs)
        gen = generated(files, tmp)
        gen_size = os.path.getsize(gen)
        gen_med, gen_max = whole_process(gen, proj, args.runs)
    timing = [[f"{Path(largest).name[:34]} ({os.path.getsize(largest) / 1e6:.1f} MB)", f"{big_med:.2f} s",
               f"{big_max:.2f} s"],
              [f"generated session ({gen_size / 1e6:.1f} MB)", f"{gen_med:.2f} s", f"{gen_max:.2f} s"]]
    note = ("Built-in profile; the events run in a project with a CLAUDE.md and two rule files of the shared corpus. "
            "Tokens: tiktoken o200k_base. Priced with pipelines/reports/pricing.yaml (USD per million tokens; an "
            "addition is written to the cache once and read by every later API call until the next compaction, "
            "written again by a call whose usage shows the cache missed it, and read by that compaction's own "
            "request). "
            f"Already in view: {result['sessions'][0]['already_in_view']['method']}.")
    text = ("engine replay, per shared transcript\n" + fmt_table(headers, rows) + "\n" + note + "\n\n"
            + f"whole process, `engine replay FILE --json` (median/max of {args.runs})\n"
            + fmt_table(["session", "median", "max"], timing))
    md = ("### Replaying sessions (`python3 bench/replay.py`)\n\n" + fmt_table(headers, rows, md=True, numeric=False)
          + "\n\n" + note + "\n\nWhole process, `engine replay FILE --profile default --json`, median/max of "
          + f"{args.runs} runs:\n\n" + fmt_table(["session", "median", "max"], timing, md=True, numeric=False))
    sec = {"when": now(), "machine": machine(before), "text": text, "markdown": md,
           "targets": [{"target": "engine replay of a 4 MB session, whole process", "measured": f"{gen_med:.2f} s",
                        "goal": f"< {GOAL_SECONDS:.0f} s", "ok": gen_med < GOAL_SECONDS}]}
    publish(args.out_dir, {"replay": sec})


if __name__ == "__main__":
    main()
