#!/usr/bin/env python3
"""Times of the pathological inputs of issue 10 (faults 2, 3, 8 and 9).

    python3 bench/pathological.py                  # every case, this checkout
    python3 bench/pathological.py --root DIR       # the engine of another checkout (before/after)
    python3 bench/pathological.py --only dots,be   # some cases
    python3 bench/pathological.py --out FILE.md    # default: bench/results-pathological.md

Each case runs `python3 -m engine.cli ...` as its own process (PYTHONPATH=root,
a fresh cache folder), with a wall-clock limit and a 4 GB address-space
limit, and reports its wall time, exit status and the first line of stderr.
A case that hits the limit is reported as "> LIMIT s".
"""

import argparse
import glob
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import corpus_dir

HERE = Path(__file__).resolve().parent
MEMORY_LIMIT = 4 << 30

WORDS = ("the service must always validate the configuration of the production database before a "
         "deployment and it should never push to main without review in order to keep the environment safe").split()


def sentences(n, seed=1):
    """Ordinary prose: sentences of common words in paragraphs."""
    r = random.Random(seed)
    out, size = [], 0
    while size < n:
        s = " ".join(r.choice(WORDS) for _ in range(r.randint(5, 20))).capitalize() + ". "
        out.append(s)
        size += len(s)
        if r.random() < 0.2:
            out.append("\n\n")
            size += 2
    return "".join(out)[:n]


def corpus_prose(n):
    files = sorted(glob.glob(os.path.join(corpus_dir(), "*.md")))
    text = "\n\n".join(Path(f).read_text(encoding="utf-8") for f in files)
    return (text * (n // len(text) + 1))[:n]


def repeat(unit, n):
    return (unit * (n // len(unit) + 1))[:n]


def alias_bomb(depth, width=9):
    lines = ["kind: profile", "name: bomb", "extends: default", "a0: &a0 [x]"]
    for i in range(1, depth + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


KB, MB = 1000, 1_000_000


def cases():
    """(group, label, kind, payload, args, limit): kind 'text' feeds a file to compress."""
    out = []
    for n in (10 * KB, 20 * KB, 40 * KB):
        out.append(("dots", f"`a.a.a.` {n // KB} KB, off", "text", repeat("a.", n), ["--level", "off"], 120))
    for n in (20 * KB, 40 * KB, 80 * KB):
        out.append(("bold", f"`**a ` {n // KB} KB, light", "text", repeat("**a ", n), ["--level", "light"], 120))
    for n in (20 * KB, 40 * KB, 80 * KB):
        out.append(("spaces", f"spaces {n // KB} KB, light", "text", " " * (n - 1) + "x", ["--level", "light"], 120))
    out.append(("be", "`be be be` 400 KB, standard", "text", repeat("be ", 400 * KB), ["--level", "standard"], 120))
    for n in (1, 2, 5, 10):
        out.append(("prose", f"corpus prose {n} MB, standard", "text", lambda n=n: corpus_prose(n * MB), ["--level", "standard"], 300))
    for n in (1, 2, 5, 10):
        out.append(("sentences", f"sentences {n} MB, standard", "text", lambda n=n: sentences(n * MB), ["--level", "standard"], 300))
    out.append(("size", "13 MB of prose (over the 12 MB cap)", "text", lambda: corpus_prose(13 * MB), ["--level", "standard"], 120))
    for d in (7, 9):
        out.append(("alias", f"alias bomb depth {d}, 9 per list", "profile", alias_bomb(d), [], 60))
    out.append(("nested", "profile nested 100,000 `[` deep", "profile", "kind: profile\nname: deep\nx: " + "[" * 100_000 + "\n", [], 60))
    out.append(("digits", "pattern_timeout_ms of 100,000 digits", "profile",
                "kind: profile\nname: digits\nextends: default\npattern_timeout_ms: " + "9" * 100_000 + "\n", [], 60))
    out.append(("zero", "/dev/zero as input", "path", "/dev/zero", [], 30))
    out.append(("nul", "NUL byte after 8 KB", "bytes", b"a" * 9000 + b"\x00b\n", [], 30))
    out.append(("utf32", "UTF-32 text with BOM", "bytes", "\ufeffhello\n".encode("utf-32"), [], 30))
    out.append(("sparse", "1 GB sparse profile", "sparse", 1 << 30, [], 60))
    return out


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run_case(root, case, work):
    group, label, kind, payload, args, limit = case
    if callable(payload):
        payload = payload()
    env = dict(os.environ, PYTHONPATH=str(root), ENGINE_CACHE_DIR=str(work / "cache"), ENGINE_STATE_DIR=str(work / "state"))
    env.pop("ENGINE_PROFILE", None)
    infile = work / "input.md"
    cmd = [sys.executable, "-m", "engine.cli", "compress"]
    if kind == "text":
        infile.write_text(payload, encoding="utf-8")
        cmd += [str(infile), *args]
    elif kind == "bytes":
        infile.write_bytes(payload)
        cmd += [str(infile)]
    elif kind == "path":
        cmd += [payload]
    elif kind in ("profile", "sparse"):
        prof = work / "profile.yaml"
        if kind == "profile":
            prof.write_text(payload, encoding="utf-8")
        else:
            with open(prof, "wb") as fh:
                fh.write(b"kind: profile\nname: sparse\n# ")
                fh.truncate(payload)
        infile.write_text("Always run the tests.\n", encoding="utf-8")
        cmd += [str(infile), "--profile", str(prof)]
    (work / "out.md").unlink(missing_ok=True)
    cmd += ["-o", str(work / "out.md")]
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = subprocess.run(cmd, env=env, cwd=work, capture_output=True, timeout=limit, preexec_fn=_limits)
        secs = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        first = err[0] if err else ""
        if len(err) > 1 and "Traceback" in err[0]:
            first = "Traceback: " + err[-1]
        return {"label": label, "group": group, "seconds": secs, "cpu": cpu, "rc": proc.returncode, "stderr": first[:160], "timeout": False}
    except subprocess.TimeoutExpired:
        return {"label": label, "group": group, "seconds": limit, "cpu": None, "rc": None, "stderr": "", "timeout": True}


def fmt(r):
    return f"> {r['seconds']:.0f} s" if r["timeout"] else f"{r['seconds']:.2f} s"


def fmt_cpu(r):
    return "-" if r.get("cpu") is None else f"{r['cpu']:.2f} s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=str(HERE.parent), help="checkout whose engine to run")
    ap.add_argument("--only", help="comma-separated groups")
    ap.add_argument("--out", default=str(HERE / "results-pathological.md"))
    ap.add_argument("--title", default=None)
    ap.add_argument("--max-seconds", type=float, help="lower every case's wall-clock limit to this")
    a = ap.parse_args()
    only = set(a.only.split(",")) if a.only else None
    rows = []
    for case in cases():
        if only and case[0] not in only:
            continue
        if a.max_seconds:
            case = case[:5] + (min(case[5], a.max_seconds),)
        with tempfile.TemporaryDirectory() as d:
            r = run_case(a.root, case, Path(d))
        rows.append(r)
        print(f"{r['label']:<42} {fmt(r):>10} cpu {fmt_cpu(r):>8}  rc={r['rc']}  {r['stderr']}", flush=True)
    title = a.title or f"Pathological inputs ({a.root})"
    lines = [f"## {title}", "", f"`python3 bench/pathological.py --root {a.root}`" + (f" `--only {a.only}`" if a.only else ""), "",
             f"load average at the start: {os.getloadavg()[0]:.1f} (2 cores, shared)", "",
             "| input | wall time | CPU time | exit | first line of stderr |", "|---|---:|---:|---:|---|"]
    for r in rows:
        err = r["stderr"].replace("|", "\\|")
        lines.append(f"| {r['label']} | {fmt(r)} | {fmt_cpu(r)} | {r['rc'] if r['rc'] is not None else 'killed'} | {err} |")
    with open(a.out, "a", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n\n")
    print(f"appended to {a.out}")


if __name__ == "__main__":
    main()
