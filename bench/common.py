"""What the bench scripts share: timing, the corpus, tables, and writing each
script's section into bench/results.json and bench/results.md.

Each script (savings.py, speed.py, hooks.py, and any later family) runs on its
own and replaces only its own section; results.md (and the README's block
between the bench:start/bench:end marks) is rebuilt from every section kept
in results.json, each with its own time stamp and machine facts.
Standard library only (plus the engine for what is measured).
"""

import argparse
import atexit
import fnmatch
import gc
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LEVELS = ("off", "light", "standard", "aggressive")
ENCODINGS = ("o200k_base", "cl100k_base")
HEAVY_MODULES = ("yaml", "jsonschema", "jinja2", "tiktoken")
# results.md lists the sections in this order; unknown (later) ones follow.
ORDER = ("savings", "speed", "process", "big", "hooks")

sys.path.insert(0, str(REPO))  # measure this checkout's engine when run from it
sys.path.append(str(REPO / "tests"))  # tests/testdata.py: where the recorded data lives
import testdata  # noqa: E402

# The data a bench reads: the repository's recorded sets (tests/data), or a
# folder named here, such as the project's full shared sets.
CORPUS_ENV = "ENGINE_BENCH_CORPUS"  # a folder of *.md rule files
TRANSCRIPTS_ENV = "ENGINE_BENCH_TRANSCRIPTS"  # a folder of *.jsonl transcripts


def corpus_dir():
    """The rule files' folder: $ENGINE_BENCH_CORPUS, else the recorded corpus."""
    return Path(os.environ.get(CORPUS_ENV) or testdata.CORPUS)


def transcript_files(pattern="*.jsonl"):
    """The transcripts whose names match `pattern`, sorted: those of
    $ENGINE_BENCH_TRANSCRIPTS, else the recorded ones (unpacked)."""
    folder = os.environ.get(TRANSCRIPTS_ENV)
    if folder:
        return sorted(Path(folder).glob(pattern))
    return [p for p in testdata.transcripts() if fnmatch.fnmatch(p.name, pattern)]


def transcript_file(name):
    """One transcript by name, from the same place as transcript_files()."""
    folder = os.environ.get(TRANSCRIPTS_ENV)
    return Path(folder) / name if folder else testdata.transcript(name)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


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


def checkout_args(ap, runs):
    """--repo (repeatable: other checkouts measured the same way, for a
    before and after) and --runs, for a script that compares checkouts."""
    ap.add_argument("--repo", action="append", help="a checkout to measure, in the order given (default: this one)")
    ap.add_argument("--runs", type=int, default=runs, help="runs per measurement (the median is shown)")


def measured_line(command, how, before):
    """The sentence under a results title: when, by which command, how, and
    the load average before (`before`) and now."""
    return (f"Measured {time.strftime('%Y-%m-%dT%H:%M:%S%z')} by `{command}` (bench at {git_info()['commit']}); "
            f"{how}; load average before/after {before} / {loadavg()}.")


def write_section(filename, title, notes, header, rows):
    """A results file of its own (bench/FILENAME): a title, lines that say how
    it was measured, and a table of `rows` (markdown lines) under `header`
    (cell titles; the first column left-aligned, the others right), printed too."""
    align = "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"
    text = "\n".join([f"#### {title}", "", *[line for note in notes for line in (note, "")],
                      "| " + " | ".join(header) + " |", align, *rows, ""])
    print(text)
    (HERE / filename).write_text(text, encoding="utf-8")
    print(f"wrote {HERE / filename}")


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


def hook_argv(python=None):
    """The hook command as `engine install` writes it: the interpreter,
    isolated, on the `engine-hook` script beside it (this interpreter's, or
    `python`'s: a venv's)."""
    if python is not None:
        return [str(python), "-I", str(Path(python).parent / "engine-hook")]
    import shlex

    from engine.hooks.hookcmd import hook_command

    return shlex.split(hook_command())


def make_venv(log, source=None):
    """A fresh virtual environment with a regular (non-editable) install of
    this repository (or of the source folder `source`), as the README's
    install command makes it: whole-process figures then carry no
    editable-install finder and no .pth of this machine.  Installed from a
    copy of the files git knows, so setuptools leaves no build/ in the
    checkout, and no stale build/ there goes into the install."""
    folder = Path(tempfile.mkdtemp(prefix="engine-bench-venv-"))
    atexit.register(shutil.rmtree, folder, True)  # removed when the bench ends
    src = _tracked_copy(Path(source or REPO), folder / "src")
    log(f"  building {folder} (pip install of {source or REPO}) ...")
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    py = folder / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(src)], check=True)
    return py, folder / "bin" / "engine"


def _tracked_copy(source, dest):
    """The files of `source` that git tracks or would (not ignored), as they
    are in its working tree, copied to `dest`."""
    names = subprocess.run(["git", "-C", str(source), "ls-files", "-z", "-co", "--exclude-standard"],
                           capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape").split("\0")
    for name in filter(None, names):
        target = dest / name
        if (source / name).is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / name, target)
    return dest


def arguments(description, runs=False):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--corpus", default=str(corpus_dir()),
                    help=f"folder of *.md rule files (default: ${CORPUS_ENV}, else the recorded corpus tests/data/corpus/rules)")
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--out-dir", default=str(HERE), help="where results.json and results.md go (default: bench/)")
    if True:  # every family takes them, so bench/run.py can pass the same arguments to each (savings ignores them)
        ap.add_argument("--venv", action="store_true",
                        help="time processes from a fresh venv with a regular `pip install .` (as the README installs it)")
        ap.add_argument("--runs", type=int, help="runs per command (default 20, quick 10)")
    return ap


def machine(before):
    import engine

    return {"python": platform.python_version(), "cpus": os.cpu_count(), "engine_version": engine.__version__,
            "git": git_info(), "loadavg_before": before, "loadavg_after": loadavg()}


def publish(out_dir, sections):
    """Replace these sections ({key: data with "markdown", "text", "targets"})
    in results.json, rebuild results.md from all sections, print the text."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "results.json"
    try:
        results = json.loads(json_path.read_text(encoding="utf-8"))
        if not isinstance(results, dict) or "sections" not in results:
            results = {"sections": {}}
    except (OSError, ValueError):
        results = {"sections": {}}
    results["sections"].update(sections)
    json_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    keys = [k for k in ORDER if k in results["sections"]] + sorted(set(results["sections"]) - set(ORDER))
    md = ["<!-- written by the bench/ scripts (savings.py, speed.py, hooks.py); rerun one to refresh its part -->"]
    targets = []
    for k in keys:
        sec = results["sections"][k]
        m = sec.get("machine", {})
        md += ["", sec["markdown"].rstrip(), "",
               f"<sub>{k}: measured {sec.get('when', '?')} on {m.get('cpus', '?')} CPUs, Python {m.get('python', '?')}, "
               f"engine {m.get('engine_version', '?')} at {m.get('git', {}).get('commit') or '?'}"
               + (" (working tree modified)" if m.get("git", {}).get("engine_tree_dirty") else "")
               + (", quick run" if sec.get("quick") else "")
               + f"; load average before/after {m.get('loadavg_before')} / {m.get('loadavg_after')}.</sub>"]
        targets += sec.get("targets", [])
    if targets:
        rows = [[t["target"], t["measured"], t["goal"], mark(t["ok"])] for t in targets]
        md += ["", "#### Targets", "", fmt_table(["Target", "Measured", "Goal", "Status"], rows, md=True, numeric=False)]
    text = "\n".join(md) + "\n"
    (out_dir / "results.md").write_text(text, encoding="utf-8")
    if out_dir.resolve() == HERE:  # the checked-in results: docs/benchmarks.md shows them too
        readme = REPO / "docs" / "benchmarks.md"
        body = readme.read_text(encoding="utf-8")
        start, end = "<!-- bench:start -->\n", "<!-- bench:end -->"
        if start in body and end in body:
            head, rest = body.split(start, 1)
            # the block sits under a "##" section of the page: its "####" titles go one level up there
            block = re.sub(r"(?m)^####(?= )", "###", text)
            readme.write_text(head + start + block + end + rest.split(end, 1)[1], encoding="utf-8")
    for k, sec in sections.items():
        sys.stdout.write(sec["text"].rstrip() + "\n")
        for t in sec.get("targets", []):
            print(f"  {mark(t['ok'])}  {t['target']}: {t['measured']} (goal {t['goal']})")
    print(f"\nwrote {json_path} and {out_dir / 'results.md'}")
