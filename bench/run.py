#!/usr/bin/env python3
"""Benchmark of the compression engine: savings, in-process speed, whole-process time.

    python3 bench/run.py                 # everything (a few minutes on 2 cores)
    python3 bench/run.py --quick         # fewer repeats
    python3 bench/run.py --only savings  # or speed, or process (repeatable)
    python3 bench/run.py --corpus DIR    # default: /work/shared/corpus/rules

Prints a compact table with the targets of issue 2 beside the figures and
writes bench/results.json and bench/results.md (a markdown table for the
README).  With --only, the sections not run are kept from an earlier
results.json, each with its own time stamp.

Standard library plus the engine itself (and its own deps: tiktoken for token
counts).  Times come from time.perf_counter; every figure is a median.
"""

import argparse
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_CORPUS = "/work/shared/corpus/rules"
LEVELS = ("off", "light", "standard", "aggressive")
ENCODINGS = ("o200k_base", "cl100k_base")
HEAVY_MODULES = ("yaml", "jsonschema", "jinja2", "tiktoken")

# Targets of issue 2 ("Savings and speed").
TARGET_STANDARD_15KB_MS = 3.0
TARGET_PROCESS_MS = 60.0
TARGET_HOOK_MS = 50.0  # issue 3: a hook event that injects nothing
TARGET_STANDARD_O200K = 12.0
TARGET_AGGRESSIVE_O200K = 16.0
TARGET_AGGRESSIVE_CHARS_CHARS = 25.0
# "Time linear in input size": per-KB time on 1 MB at most this many times the
# per-KB time on 15 KB (O(n log n) over this range gives about 1.4).
LINEARITY_MAX_RATIO = 2.0

SIZE_15KB = 15_000
SIZE_1MB = 1_000_000

CHARS_PROFILE_YAML = """\
kind: profile
name: chars
extends: default
objective: chars
"""


# ---------------------------------------------------------------- helpers

def now():
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def pct_saved(before, after):
    return 100.0 * (before - after) / before if before else 0.0


def p90(values):
    s = sorted(values)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]


def timed(fn, repeats):
    """Median seconds of fn() over repeats runs, garbage collector off while timing."""
    times = []
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
    return statistics.median(times), times


def mark(ok):
    return "PASS" if ok else "MISS"


def read_corpus(folder):
    files = sorted(Path(folder).glob("*.md"))
    if not files:
        raise SystemExit(f"bench: no *.md files in {folder}")
    out = []
    for f in files:
        # bytes -> str as the CLI does: CRLF and BOM stay, compress handles them
        out.append((f.name, f.read_bytes().decode("utf-8")))
    return out


def build_text(corpus, target):
    """Whole corpus files (sorted order, cycling), joined by a blank line, taken
    greedily while they fit in `target` characters.  Whole files only, so no
    code fence is cut open; the result is a little under `target`."""
    parts, size = [], 0
    sep = "\n\n"
    while True:
        added = False
        for _, text in corpus:
            extra = len(text) + (len(sep) if parts else 0)
            if size + extra <= target:
                parts.append(text)
                size += extra
                added = True
        if not added:
            break
    return sep.join(parts)


def git_info():
    def run(*args):
        try:
            return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, timeout=10).stdout.strip()
        except Exception:
            return ""

    dirty = run("status", "--porcelain", "--", "engine", "pipelines", "protect", "dictionaries", "schemas")
    return {"commit": run("rev-parse", "--short", "HEAD"), "engine_tree_dirty": bool(dirty)}


def loadavg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# ---------------------------------------------------------------- savings

def count_tokens(text, name):
    from engine.tokens import count

    return count(text, name)


def protected_check(profile, text, result):
    """(spans checked, replaced by design, lost, examples of lost).

    Every span of the input mask (LF-normalised text, as compress sees it) must
    appear in the output, in order.  Spans a transform was allowed to replace
    (result.replaced_by_design, by category) are left out: first those whose
    text is nowhere in the output, then any other miss of that category.
    """
    from engine.pipeline import split_line_endings

    work, _ = split_line_endings(text)
    out, _ = split_line_endings(result.text)
    spans = [(s.category, work[s.start:s.end]) for s in profile.protector.mask(work).spans]
    budget = Counter(cat for cat, _ in result.replaced_by_design)
    replaced = 0
    keep = []
    for cat, piece in spans:
        if budget[cat] > 0 and out.find(piece) < 0:
            budget[cat] -= 1
            replaced += 1
            continue
        keep.append((cat, piece))
    lost, examples = 0, []
    pos = 0
    for cat, piece in keep:
        i = out.find(piece, pos)
        if i >= 0:
            pos = i + len(piece)
            continue
        if budget[cat] > 0:
            budget[cat] -= 1
            replaced += 1
            continue
        lost += 1
        examples.append({"category": cat, "text": piece[:80]})
    return len(spans), replaced, lost, examples


def run_savings(corpus, log):
    from engine.pipeline import compress
    from engine.profile import load_profile

    before_tokens = {enc: 0 for enc in ENCODINGS}
    per_file_before = []
    for name, text in corpus:
        counts = {enc: count_tokens(text, enc) for enc in ENCODINGS}
        per_file_before.append(counts)
        for enc in ENCODINGS:
            before_tokens[enc] += counts[enc]
    chars_before = sum(len(t) for _, t in corpus)

    def one(label, level, objective, profile):
        row = {
            "label": label, "level": level, "objective": objective, "profile": profile.name,
            "files": len(corpus), "errors": [],
            "chars_before": chars_before, "chars_after": 0,
            "protected_spans": 0, "replaced_by_design": 0, "protected_lost": 0, "lost_examples": [],
        }
        for enc in ENCODINGS:
            row[f"{enc}_before"] = before_tokens[enc]
            row[f"{enc}_after"] = 0
        for name, text in corpus:
            try:
                res = compress(profile, text)
            except Exception as exc:  # report, count the file as unchanged
                row["errors"].append(f"{name}: {type(exc).__name__}: {exc}")
                res = None
            out = res.text if res is not None else text
            row["chars_after"] += len(out)
            for enc in ENCODINGS:
                row[f"{enc}_after"] += count_tokens(out, enc)
            if res is not None:
                checked, replaced, lost, examples = protected_check(profile, text, res)
                row["protected_spans"] += checked
                row["replaced_by_design"] += replaced
                row["protected_lost"] += lost
                for ex in examples:
                    if len(row["lost_examples"]) < 20:
                        row["lost_examples"].append({"file": name, **ex})
        row["chars_saved_pct"] = round(pct_saved(row["chars_before"], row["chars_after"]), 2)
        for enc in ENCODINGS:
            row[f"{enc}_saved_pct"] = round(pct_saved(row[f"{enc}_before"], row[f"{enc}_after"]), 2)
        log(f"  savings {label}: chars {row['chars_saved_pct']:.1f}%, o200k {row['o200k_base_saved_pct']:.1f}%, lost {row['protected_lost']}")
        return row

    rows = []
    for level in LEVELS:
        profile = load_profile(None, level)
        rows.append(one(level, level, profile.objective, profile))

    # aggressive with objective chars: a user profile in a temporary folder,
    # with its compiled form cached there too (no stale entry left in the user's cache)
    with tempfile.TemporaryDirectory(prefix="engine-bench-") as tmp:
        path = Path(tmp) / "chars.yaml"
        path.write_text(CHARS_PROFILE_YAML, encoding="utf-8")
        saved = os.environ.get("ENGINE_CACHE_DIR")
        os.environ["ENGINE_CACHE_DIR"] = str(Path(tmp) / "cache")
        try:
            profile = load_profile(str(path), "aggressive")
        finally:
            if saved is None:
                os.environ.pop("ENGINE_CACHE_DIR", None)
            else:
                os.environ["ENGINE_CACHE_DIR"] = saved
        rows.append(one("aggressive (objective chars)", "aggressive", profile.objective, profile))

    return {"when": now(), "corpus_files": len(corpus), "corpus_chars": chars_before, "rows": rows}


# ---------------------------------------------------------------- in-process speed

def run_speed(corpus, quick, log):
    from engine.pipeline import compress
    from engine.profile import load_profile

    reps_corpus = 3 if quick else 7
    reps_15k = 7 if quick else 31
    reps_1m = 1 if quick else 3

    profiles = {}
    for level in LEVELS:
        load_profile(None, level)  # builds the cache entry if it is missing
        profiles[level] = load_profile(None, level)
    texts = [t for _, t in corpus]
    text15 = build_text(corpus, SIZE_15KB)
    text1m = build_text(corpus, SIZE_1MB)
    corpus_chars = sum(len(t) for t in texts)

    # warm up: every level once over the corpus and the 15 KB text
    for level in LEVELS:
        for t in texts:
            compress(profiles[level], t)
        compress(profiles[level], text15)

    # whole corpus, levels interleaved so a busy moment hits all of them
    corpus_times = {level: [] for level in LEVELS}
    for _ in range(reps_corpus):
        for level in LEVELS:
            p = profiles[level]
            _, ts = timed(lambda: [compress(p, t) for t in texts], 1)
            corpus_times[level].extend(ts)

    t15 = {}
    for level in LEVELS:
        p = profiles[level]
        t15[level], _ = timed(lambda: compress(p, text15), reps_15k)

    t1m = {}
    for level in LEVELS:
        p = profiles[level]
        t1m[level], _ = timed(lambda: compress(p, text1m), reps_1m)
        log(f"  speed 1 MB {level}: {t1m[level] * 1000:.0f} ms")

    rows = []
    for level in LEVELS:
        total = statistics.median(corpus_times[level])
        per_kb_15 = t15[level] * 1000 / (len(text15) / 1000)
        per_kb_1m = t1m[level] * 1000 / (len(text1m) / 1000)
        rows.append({
            "level": level,
            "corpus_total_ms": round(total * 1000, 2),
            "corpus_ms_per_file": round(total * 1000 / len(texts), 3),
            "corpus_ms_per_kb": round(total * 1000 / (corpus_chars / 1000), 4),
            "ms_15kb": round(t15[level] * 1000, 3),
            "ms_1mb": round(t1m[level] * 1000, 1),
            "ms_per_kb_15kb": round(per_kb_15, 4),
            "ms_per_kb_1mb": round(per_kb_1m, 4),
            "linearity_ratio": round(per_kb_1m / per_kb_15, 3) if per_kb_15 else None,
        })
        log(f"  speed {level}: corpus {total * 1000:.0f} ms, 15 KB {t15[level] * 1000:.1f} ms")
    return {
        "when": now(), "quick": quick,
        "repeats": {"corpus": reps_corpus, "15kb": reps_15k, "1mb": reps_1m},
        "corpus_files": len(texts), "corpus_chars": corpus_chars,
        "chars_15kb": len(text15), "chars_1mb": len(text1m),
        "rows": rows,
    }


# ---------------------------------------------------------------- whole process

def pick_process_file(corpus_dir, explicit):
    if explicit:
        return Path(explicit).resolve()
    files = sorted(Path(corpus_dir).glob("*.md"))
    in_range = [f for f in files if 3000 <= f.stat().st_size <= 5000] or files
    return min(in_range, key=lambda f: abs(f.stat().st_size - 4000)).resolve()


def is_pyenv_shim(path):
    try:
        with open(path, "rb") as fh:
            head = fh.read(600)
    except OSError:
        return False
    return b"pyenv" in head and b"exec" in head


def on_path(name):
    """Every executable `name` on PATH, in order, without duplicates."""
    seen, out = set(), []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d or ".", name)
        if os.path.isfile(p) and os.access(p, os.X_OK) and os.path.realpath(p) not in seen:
            seen.add(os.path.realpath(p))
            out.append(p)
    return out


def shebang_interpreter(script):
    try:
        with open(script, "rb") as fh:
            first = fh.readline().decode("utf-8", "replace").strip()
    except OSError:
        return None
    if first.startswith("#!") and os.path.basename(first[2:].split()[0]) != "env":
        exe = first[2:].split()[0]
        return exe if os.path.isfile(exe) else None
    return None


def parse_importtime(stderr):
    """[(name, depth, self_us, cumulative_us)] from python -X importtime."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        parts = line[len("import time:"):].split("|")
        if len(parts) != 3:
            continue
        raw = parts[2].rstrip()
        stripped = raw.lstrip()
        depth = (len(raw) - len(stripped) - 1) // 2  # one space, then two per nesting level
        try:
            rows.append((stripped, depth, int(parts[0]), int(parts[1])))
        except ValueError:
            continue
    return rows


def run_process(corpus_dir, process_file, quick, runs, log, venv=None):
    runs = runs or (10 if quick else 20)
    target_file = pick_process_file(corpus_dir, process_file)
    env = dict(os.environ)
    env.pop("ENGINE_PROFILE", None)  # the built-in profile, whatever the caller's shell says
    env.pop("PYTHONPROFILEIMPORTTIME", None)

    # The script pip installed, and the interpreter its shebang names; a pyenv
    # shim in front of either (a bash script that re-execs through pyenv) is
    # timed on a separate, informational line.
    engines = on_path("engine")
    direct = [p for p in engines if not is_pyenv_shim(p)]
    shims = [p for p in engines if is_pyenv_shim(p)]
    sibling = Path(sys.executable).parent / "engine"
    engine_exe = direct[0] if direct else (str(sibling) if sibling.is_file() else None)
    if venv:
        engine_exe, shims = str(venv[1]), []
    if engine_exe is None:
        raise RuntimeError("no `engine` script found; install the project (pip install -e .)")
    python_exe = shebang_interpreter(engine_exe) or sys.executable
    pythons = [p for p in on_path("python3") if is_pyenv_shim(p)] if not venv else []
    commands = [
        ("engine compress FILE", [engine_exe, "compress", str(target_file)], True),
        ("python3 -c pass", [python_exe, "-c", "pass"], False),
    ]
    if shims:
        commands.append(("engine compress FILE, via pyenv shim", [shims[0], "compress", str(target_file)], False))
    if pythons:
        commands.append(("python3 -c pass, via pyenv shim", [pythons[0], "-c", "pass"], False))

    with tempfile.TemporaryDirectory(prefix="engine-bench-cwd-") as cwd:  # no .engine/profile.yaml here
        # A clean HOME and cache: no per-user .pth files of this machine, the same
        # baseline as the hooks section.
        env["HOME"] = cwd
        env["ENGINE_CACHE_DIR"] = os.path.join(cwd, ".cache")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        errors = []

        def run_once(argv):
            t0 = time.perf_counter()
            p = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            dt = time.perf_counter() - t0
            if p.returncode != 0:
                errors.append(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.decode(errors='replace').strip()[:300]}")
            return dt

        # warm the compiled-profile cache and the OS file cache
        for _ in range(2):
            for _, argv, _ in commands:
                run_once(argv)
        times = {label: [] for label, _, _ in commands}
        for _ in range(runs):  # interleaved: a busy moment hits every command
            for label, argv, _ in commands:
                times[label].append(run_once(argv))

        # which modules the warm plain-compress path imports
        code = (
            "import sys; from engine.cli import main; "
            f"sys.exit(main(['compress', {str(target_file)!r}]))"
        )
        p = subprocess.run([python_exe, "-X", "importtime", "-c", code], cwd=cwd, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            errors.append(f"importtime run: exit {p.returncode}: {p.stderr.strip()[-300:]}")
        imports = parse_importtime(p.stderr)

    names = [n for n, _, _, _ in imports]
    heavy = {m: any(n == m or n.startswith(m + ".") for n in names) for m in HEAVY_MODULES}
    top = sorted((r for r in imports if r[1] == 0), key=lambda r: -r[3])
    rows = []
    for label, argv, judged in commands:
        ts = times[label]
        rows.append({
            "command": label, "argv": argv, "runs": len(ts), "target": judged,
            "median_ms": round(statistics.median(ts) * 1000, 2),
            "p90_ms": round(p90(ts) * 1000, 2),
            "min_ms": round(min(ts) * 1000, 2),
        })
        log(f"  process {label}: median {statistics.median(ts) * 1000:.1f} ms")
    return {
        "when": now(), "quick": quick,
        "file": str(target_file), "file_chars": len(target_file.read_text(encoding="utf-8")),
        "rows": rows, "errors": errors[:10], "venv": bool(venv),
        "heavy_imports": heavy,
        "modules_imported": len(names),
        "importtime_interpreter": python_exe,
        "import_total_ms": round(sum(r[3] for r in imports if r[1] == 0) / 1000, 2),  # site and startup included
        "heaviest_top_level_imports_ms": [[n, round(c / 1000, 2)] for n, _, _, c in top[:8]],
    }


def make_venv(log):
    """A fresh virtual environment with a regular (non-editable) install of
    this repository, as the README's install command makes it: whole-process
    figures then carry no editable-install finder and no .pth of this machine."""
    folder = Path(tempfile.mkdtemp(prefix="engine-bench-venv-"))
    log(f"  building {folder} (pip install .) ...")
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    py = folder / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(REPO)], check=True)
    return py, folder / "bin" / "engine"


def run_hooks(corpus_dir, quick, runs, venv, log):
    """Whole-process time of `engine hook`: an event that injects nothing and
    one that injects 13 rule files, beside `python3 -c pass`, in one run."""
    runs = runs or (10 if quick else 20)
    if venv:
        python_exe, engine_exe = venv
    else:
        python_exe, engine_exe = Path(sys.executable), None
    # as `engine install` writes it: the engine script beside the interpreter
    script = Path(python_exe).parent / "engine"
    hook_cmd = [str(script), "hook"] if script.is_file() else [str(python_exe), "-m", "engine.cli", "hook"]
    files = sorted(Path(corpus_dir).glob("*.md"))[:13]
    with tempfile.TemporaryDirectory(prefix="engine-bench-hooks-") as tmp:
        tmp = Path(tmp)
        home, project = tmp / "home", tmp / "project"
        (project / ".claude" / "rules").mkdir(parents=True)
        home.mkdir()
        for f in files:
            (project / ".claude" / "rules" / f.name).write_bytes(f.read_bytes())
        env = dict(os.environ, HOME=str(home), ENGINE_STATE_DIR=str(tmp / "state"), ENGINE_CACHE_DIR=str(tmp / "cache"))
        for k in ("ENGINE_PROFILE", "ENGINE_REDIS_URL", "PYTHONPROFILEIMPORTTIME", "PYTHONDONTWRITEBYTECODE"):
            env.pop(k, None)
        counter = [0]

        def event(kind):
            counter[0] += 1
            base = {"session_id": f"bench-{counter[0]}", "transcript_path": "", "cwd": str(project)}
            if kind == "quiet":  # prompt 1 of a new session: counts, injects nothing
                return json.dumps({**base, "hook_event_name": "UserPromptSubmit", "prompt": "hello"}).encode()
            return json.dumps({**base, "hook_event_name": "SessionStart", "source": "compact"}).encode()

        errors, sizes = [], []

        def run_once(argv, stdin=b""):
            t0 = time.perf_counter()
            p = subprocess.run(argv, cwd=str(project), env=env, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            dt = time.perf_counter() - t0
            if p.returncode != 0:
                errors.append(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.decode(errors='replace')[:300]}")
            return dt, p.stdout

        commands = [
            ("engine hook, UserPromptSubmit injecting nothing", lambda: run_once(hook_cmd, event("quiet"))),
            ("engine hook, SessionStart(compact) injecting 13 rule files", lambda: run_once(hook_cmd, event("inject"))),
            ("python3 -c pass", lambda: run_once([str(python_exe), "-c", "pass"])),
        ]
        for _ in range(2):  # warm the caches (compiled profile, levels, OS)
            for _, fn in commands:
                fn()
        times = {label: [] for label, _ in commands}
        for _ in range(runs):
            for label, fn in commands:
                dt, out = fn()
                times[label].append(dt)
                if "13 rule" in label:
                    sizes.append(len(out))
        # what the quiet path imports
        code = ("import io, sys; from engine.hooks import dispatch; "
                f"sys.stdin = io.TextIOWrapper(io.BytesIO({event('quiet')!r})); dispatch.main(); "
                "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
                f"{set(HEAVY_MODULES) | {'redis'}!r})))")
        p = subprocess.run([str(python_exe), "-c", code], cwd=str(project), env=env, capture_output=True, text=True)
        heavy = p.stdout.strip().split()
    rows = []
    for label, _ in commands:
        ts = times[label]
        rows.append({"command": label, "runs": len(ts), "median_ms": round(statistics.median(ts) * 1000, 2),
                     "p90_ms": round(p90(ts) * 1000, 2), "min_ms": round(min(ts) * 1000, 2)})
        log(f"  hooks {label}: median {statistics.median(ts) * 1000:.1f} ms")
    return {"when": now(), "quick": quick, "interpreter": str(python_exe), "venv": bool(venv),
            "rows": rows, "errors": errors[:10], "injection_bytes": sizes[:1],
            "quiet_path_heavy_imports": heavy, "rule_files": [f.name for f in files]}


# ---------------------------------------------------------------- targets and output

def targets(results):
    out = []
    sav = results.get("savings")
    if sav and "rows" in sav:
        by = {r["label"]: r for r in sav["rows"]}

        def add(label, row_label, key, target, unit):
            r = by.get(row_label)
            if r:
                v = r[key]
                out.append({"target": label, "measured": f"{v:.1f}{unit}", "goal": f">= {target:g}{unit}", "ok": v >= target})

        add("standard: o200k tokens saved", "standard", "o200k_base_saved_pct", TARGET_STANDARD_O200K, "%")
        add("aggressive: o200k tokens saved", "aggressive", "o200k_base_saved_pct", TARGET_AGGRESSIVE_O200K, "%")
        add("aggressive, objective chars: characters saved", "aggressive (objective chars)", "chars_saved_pct", TARGET_AGGRESSIVE_CHARS_CHARS, "%")
        lost = sum(r["protected_lost"] for r in sav["rows"])
        out.append({"target": "protected items lost (all levels)", "measured": str(lost), "goal": "0", "ok": lost == 0})
        errs = sum(len(r["errors"]) for r in sav["rows"])
        if errs:
            out.append({"target": "files compressed without error", "measured": f"{errs} errors", "goal": "0 errors", "ok": False})
    spd = results.get("speed")
    if spd and "rows" in spd:
        by = {r["level"]: r for r in spd["rows"]}
        if "standard" in by:
            v = by["standard"]["ms_15kb"]
            out.append({"target": f"standard, {spd['chars_15kb']:,}-char file", "measured": f"{v:.2f} ms", "goal": f"< {TARGET_STANDARD_15KB_MS:g} ms", "ok": v < TARGET_STANDARD_15KB_MS})
        for level in LEVELS:
            r = by.get(level)
            if r and r["linearity_ratio"] is not None:
                out.append({"target": f"linear time, {level} (ms/KB 1 MB / 15 KB)", "measured": f"{r['linearity_ratio']:.2f}x", "goal": f"<= {LINEARITY_MAX_RATIO:g}x", "ok": r["linearity_ratio"] <= LINEARITY_MAX_RATIO})
    proc = results.get("process")
    if proc and "rows" in proc:
        for r in proc["rows"]:
            if r.get("target"):
                out.append({"target": f"whole process: {r['command']}", "measured": f"{r['median_ms']:.1f} ms (p90 {r['p90_ms']:.1f})", "goal": f"< {TARGET_PROCESS_MS:g} ms", "ok": r["median_ms"] < TARGET_PROCESS_MS})
        heavy = [m for m, v in proc["heavy_imports"].items() if v]
        out.append({"target": "warm plain compress imports none of " + "/".join(HEAVY_MODULES), "measured": ", ".join(heavy) or "none", "goal": "none", "ok": not heavy})
        if proc.get("errors"):
            out.append({"target": "engine compress exits 0", "measured": f"{len(proc['errors'])} failures", "goal": "0", "ok": False})
    hk = results.get("hooks")
    if hk and "rows" in hk:
        quiet = hk["rows"][0]
        out.append({"target": "engine hook, event injecting nothing", "measured": f"{quiet['median_ms']:.1f} ms (p90 {quiet['p90_ms']:.1f})",
                    "goal": f"< {TARGET_HOOK_MS:g} ms", "ok": quiet["median_ms"] < TARGET_HOOK_MS})
        heavy = hk["quiet_path_heavy_imports"]
        out.append({"target": "quiet hook imports none of " + "/".join(HEAVY_MODULES) + "/redis", "measured": ", ".join(heavy) or "none", "goal": "none", "ok": not heavy})
        if hk.get("errors"):
            out.append({"target": "engine hook exits 0", "measured": f"{len(hk['errors'])} failures", "goal": "0", "ok": False})
    return out


def fmt_table(headers, rows, md=False, numeric=True):
    """numeric: columns after the first are right-aligned."""
    cells = [[str(c) for c in r] for r in rows]
    if md:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" if i == 0 or not numeric else "---:" for i in range(len(headers))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in cells]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 or not numeric else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells])


def savings_table(sav, md):
    headers = ["Level", "Chars", "Saved", "o200k tokens", "Saved", "cl100k tokens", "Saved", "Protected lost"]
    rows = []
    for r in sav["rows"]:
        rows.append([
            r["label"],
            f"{r['chars_before']:,} → {r['chars_after']:,}", f"{r['chars_saved_pct']:.1f}%",
            f"{r['o200k_base_before']:,} → {r['o200k_base_after']:,}", f"{r['o200k_base_saved_pct']:.1f}%",
            f"{r['cl100k_base_before']:,} → {r['cl100k_base_after']:,}", f"{r['cl100k_base_saved_pct']:.1f}%",
            f"{r['protected_lost']} of {r['protected_spans']:,}" + (f" ({r['replaced_by_design']} replaced by design)" if r["replaced_by_design"] else ""),
        ])
    return fmt_table(headers, rows, md)


def speed_table(spd, md):
    headers = [
        "Level", f"Corpus ({spd['corpus_files']} files) ms", "ms/file",
        f"{spd['chars_15kb'] / 1000:.1f} KB ms", f"{spd['chars_1mb'] / 1e6:.2f} MB ms",
        "ms/KB 15 KB", "ms/KB 1 MB", "1 MB / 15 KB",
    ]
    rows = [[
        r["level"], f"{r['corpus_total_ms']:.1f}", f"{r['corpus_ms_per_file']:.2f}",
        f"{r['ms_15kb']:.2f}", f"{r['ms_1mb']:.0f}",
        f"{r['ms_per_kb_15kb']:.3f}", f"{r['ms_per_kb_1mb']:.3f}", f"{r['linearity_ratio']:.2f}x",
    ] for r in spd["rows"]]
    return fmt_table(headers, rows, md)


def hooks_table(sec, md):
    rows = [[r["command"], f"{r['median_ms']:.1f}", f"{r['p90_ms']:.1f}"] for r in sec["rows"]]
    return fmt_table(["Command", "Median ms", "p90 ms"], rows, md)


def process_table(proc, md):
    headers = ["Command", "Median ms", "p90 ms", "Runs"]
    rows = [[r["command"], f"{r['median_ms']:.1f}", f"{r['p90_ms']:.1f}", r["runs"]] for r in proc["rows"]]
    return fmt_table(headers, rows, md)


def targets_table(tg, md):
    rows = [[t["target"], t["measured"], t["goal"], mark(t["ok"])] for t in tg]
    return fmt_table(["Target", "Measured", "Goal", "Status"], rows, md, numeric=False)


def render(results, md):
    meta = results["meta"]
    out = []
    if md:
        out.append("<!-- written by bench/run.py; rerun it to refresh -->")
        out.append(
            f"Measured {meta['when']} on {meta['cpus']} CPUs, Python {meta['python']}, "
            f"engine {meta['engine_version']} at {meta['git']['commit'] or '?'}"
            + (" (working tree modified)" if meta["git"]["engine_tree_dirty"] else "")
            + (", quick run" if meta["quick"] else "")
            + f"; load average before/after {meta['loadavg_before']} / {meta['loadavg_after']}."
        )
    sections = [
        ("savings", "Savings on the shared corpus", savings_table),
        ("speed", "In-process time (median)", speed_table),
        ("process", "Whole-process time, warm compiled-profile cache (median)", process_table),
        ("hooks", "Hook processes, warm compiled-profile cache (median)", hooks_table),
    ]
    for key, title, fn in sections:
        sec = results.get(key)
        if not sec:
            continue
        out.append("")
        kept = key not in meta.get("sections_run", ())
        when = f" (kept from an earlier run, {sec.get('when', '?')})" if kept else ""
        out.append(f"### {title}{when}" if md else f"== {title} ({sec.get('when', '')}{', kept from an earlier run' if kept else ''})")
        if "error" in sec:
            out.append(("    " if md else "") + "ERROR: " + sec["error"].strip().splitlines()[-1])
            continue
        if key == "savings":
            out.append(f"{sec['corpus_files']} files, {sec['corpus_chars']:,} characters; built-in profile (objective tokens) unless noted. Protected lost: input spans missing from the output, in order.")
        if key == "process":
            out.append(f"File: {Path(sec['file']).name} ({sec['file_chars']:,} characters)"
                       + ("; fresh venv, regular install." if sec.get("venv") else "."))
        if key == "hooks":
            out.append(f"Interpreter: {'a fresh venv, regular install' if sec.get('venv') else sec['interpreter']}; "
                       f"injection of {len(sec['rule_files'])} rule files: {sec['injection_bytes'][0] if sec['injection_bytes'] else '?'} bytes of JSON. "
                       f"Heavy modules imported by the quiet path: {', '.join(sec['quiet_path_heavy_imports']) or 'none'}.")
        out.append("")
        out.append(fn(sec, md))
        if key == "process":
            out.append("")
            out.append("Imported by the warm plain-compress path: " + ", ".join(f"{m} {'yes' if v else 'no'}" for m, v in sec["heavy_imports"].items()) + ".")
            if not md:
                out.append("Heaviest top-level imports (cumulative ms): " + ", ".join(f"{n} {c}" for n, c in sec["heaviest_top_level_imports_ms"][:6]))
            for e in sec.get("errors", []):
                out.append("error: " + e)
        if key == "savings" and not md:
            for r in sec["rows"]:
                for e in r["errors"][:5]:
                    out.append(f"error ({r['label']}): {e}")
                for ex in r["lost_examples"][:5]:
                    out.append(f"lost ({r['label']}): {ex['file']}: {ex['category']}: {ex['text']!r}")
    tg = targets(results)
    if tg:
        out.append("")
        out.append("### Targets (issues 2 and 3)" if md else "== Targets (issues 2 and 3)")
        out.append("")
        out.append(targets_table(tg, md))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description="Benchmark the engine: savings, in-process speed, whole-process time.")
    ap.add_argument("--corpus", default=DEFAULT_CORPUS, help=f"folder of *.md rule files (default: {DEFAULT_CORPUS})")
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--venv", action="store_true",
                    help="time processes from a fresh venv with a regular `pip install .` (as the README installs it)")
    ap.add_argument("--only", action="append", choices=("savings", "speed", "process", "hooks"),
                    help="run only this section (repeatable); others are kept from an earlier results.json")
    ap.add_argument("--process-file", help="rule file for the whole-process timing (default: a 3-5 KB corpus file)")
    ap.add_argument("--process-runs", type=int, help="runs per command for the whole-process timing (default 20, quick 10)")
    ap.add_argument("--out-dir", default=str(HERE), help="where results.json and results.md go (default: bench/)")
    args = ap.parse_args(argv)

    import engine

    log = lambda msg: print(msg, file=sys.stderr, flush=True)
    sections = args.only or ["savings", "speed", "process", "hooks"]
    venv = make_venv(log) if args.venv and ({"process", "hooks"} & set(sections)) else None
    out_dir = Path(args.out_dir)
    json_path = out_dir / "results.json"
    results = {}
    if args.only and json_path.is_file():
        try:
            results = json.loads(json_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            results = {}

    corpus = read_corpus(args.corpus)
    meta = {
        "when": now(), "quick": args.quick, "sections_run": sections,
        "corpus": str(Path(args.corpus).resolve()),
        "python": platform.python_version(), "platform": platform.platform(),
        "cpus": os.cpu_count(), "engine_version": engine.__version__, "git": git_info(),
        "loadavg_before": loadavg(),
    }
    failed = False
    for key in ("savings", "speed", "process", "hooks"):
        if key not in sections:
            continue
        log(f"bench: {key} ...")
        t0 = time.perf_counter()
        try:
            if key == "savings":
                results[key] = run_savings(corpus, log)
            elif key == "speed":
                results[key] = run_speed(corpus, args.quick, log)
            elif key == "process":
                results[key] = run_process(args.corpus, args.process_file, args.quick, args.process_runs, log, venv)
            else:
                results[key] = run_hooks(args.corpus, args.quick, args.process_runs, venv, log)
        except Exception:
            failed = True
            results[key] = {"when": now(), "error": traceback.format_exc()}
            log(traceback.format_exc())
        log(f"bench: {key} took {time.perf_counter() - t0:.1f} s")
    meta["loadavg_after"] = loadavg()
    results["meta"] = meta
    results["targets"] = targets(results)

    out_dir.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (out_dir / "results.md").write_text(render(results, md=True), encoding="utf-8")
    sys.stdout.write(render(results, md=False))
    print(f"\nwrote {json_path} and {out_dir / 'results.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
