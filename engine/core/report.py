"""Human-readable output: diffs, explanations, figure tables."""

import difflib
import os
import sys
import time

from engine.base.controls import own, paint


def unified_diff(before, after, name_a, name_b, color=False):
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), name_a, name_b, n=1
    )
    out = []
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        if color:  # the engine's own colours: marks the CLI's writer turns into SGR (engine/base/controls.py)
            code = _diff_color(line)
            if code:
                line = paint(code, line.rstrip("\n")) + "\n"
        out.append(line)
    return "".join(out)


def _diff_color(line):
    if line.startswith("+") and not line.startswith("+++"):
        return 32
    if line.startswith("-") and not line.startswith("---"):
        return 31
    return 36 if line.startswith("@@") else None


def _pct(before, after):
    """Share saved, rounded to 0.1%; never "-0.0%"."""
    if not before:
        return "0.0%"
    shown = f"{(before - after) / before * 100:.1f}"
    return ("0.0" if float(shown) == 0 else shown) + "%"


def _change(before, after):
    """The change as a signed share: "-10.0%" smaller, "+1.1%" larger, "0.0%"."""
    if not before:
        return "0.0%"
    shown = f"{(after - before) / before * 100:+.1f}"
    return ("0.0" if float(shown) == 0 else shown) + "%"


def figures_line(result, tokenizer):
    tb, ta = result.tokens_before[tokenizer], result.tokens_after[tokenizer]
    return (
        f"level {result.level}: chars {result.chars_before} -> {result.chars_after} "
        f"({_change(result.chars_before, result.chars_after)}), "
        f"{tokenizer} tokens {tb} -> {ta} ({_change(tb, ta)}), "
        f"{len(result.protected)} protected spans kept"
    )


def _line_col(text, pos, starts):
    import bisect

    i = bisect.bisect_right(starts, pos) - 1
    return i + 1, pos - starts[i] + 1


def _show(s, width=60):
    s = s.replace("\n", "\\n").replace("\t", "\\t")
    return s if len(s) <= width else s[: width - 3] + "..."


def explain(name, text, result, profile):
    from engine.text.pipeline import split_line_endings

    work, _ = split_line_endings(text)
    starts = [0] + [i + 1 for i, c in enumerate(work) if c == "\n"]
    out = [f"{name}: profile {profile.name}, level {result.level}, objective {profile.objective}\n"]
    out.append(f"\nprotected spans ({len(result.spans)}):\n")
    for s in result.spans:
        line, col = _line_col(work, s.start, starts)
        out.append(f"  {line}:{col}\t{s.category}\t{_show(work[s.start:s.end])}\n")
    out.append(f"\nchanges ({len(result.changes)}; line numbers are those of the text each transform received):\n")
    for c in result.changes:
        out.append(f"  {c.line}\t{c.transform}\t{_show(c.before, 40)!r} -> {_show(c.after, 40)!r}\n")
    if result.replaced_by_design:
        out.append(f"\nreplaced by design ({len(result.replaced_by_design)}):\n")
        for cat, transform in result.replaced_by_design:
            out.append(f"  {cat} span replaced by transform {transform}\n")
    if profile.notes:
        out.append("\ncompile-time decisions (entries not used: they would not pay under the objective):\n")
        for t, skipped in profile.notes.items():
            out.append(f"  {t}: {', '.join(skipped)}\n")
    return "".join(out)


def explain_data(name, text, result, profile):
    """`engine explain --json`: the same facts as explain(), as one object."""
    from engine.text.pipeline import split_line_endings

    work, _ = split_line_endings(text)
    starts = [0] + [i + 1 for i, c in enumerate(work) if c == "\n"]
    spans = []
    for s in result.spans:
        line, col = _line_col(work, s.start, starts)
        spans.append({"line": line, "col": col, "category": s.category, "text": work[s.start:s.end]})
    return {
        "file": name, "profile": profile.name, "level": result.level, "objective": profile.objective,
        "protected": spans,
        "changes": [{"line": c.line, "transform": c.transform, "before": c.before, "after": c.after} for c in result.changes],
        "replaced_by_design": [{"category": cat, "transform": t} for cat, t in result.replaced_by_design],
        "not_used": {t: list(skipped) for t, skipped in profile.notes.items()},
    }


def collect_files(paths):
    from engine.base.errors import UserError
    from engine.base.textio import not_regular

    from .settings import plain

    rule_files = plain()["compress"]
    suffixes, whole = tuple(rule_files["folder_suffixes"]), set(rule_files["folder_names"])
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                files.extend(os.path.join(root, n) for n in sorted(names) if n.endswith(suffixes) or n in whole)
        elif os.path.isfile(p):
            files.append(p)
        elif os.path.exists(p):
            raise not_regular(p)
        else:
            raise UserError("no such file or folder", p)
    if not files:
        raise UserError(f"no rule files ({', '.join(suffixes + tuple(sorted(whole)))}) found here", " ".join(paths))
    return files


class Progress:
    """A one-line progress bar on stderr, shown only on a terminal and only
    once the work has run for half a second."""

    def __init__(self, total):
        self.total = total
        self.start = time.monotonic()
        self.shown = False
        self.enabled = sys.stderr.isatty()

    def step(self, done):
        if not self.enabled or time.monotonic() - self.start < 0.5:
            return
        width = 30
        filled = int(width * done / self.total)
        sys.stderr.write(f"{own(chr(13))}[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total}")
        sys.stderr.flush()
        self.shown = True

    def close(self):
        if self.shown:
            sys.stderr.write(own("\r") + " " * 50 + own("\r"))
            sys.stderr.flush()


def stats(paths, levels, profile_name, tokenizer, as_json):
    import json

    from engine.text.pipeline import compress
    from engine.text.sizes import read_input

    from .profile import load_profile, warm_compiles
    from .textcache import count_tokens as count

    if len(levels) > 1:
        warm_compiles()
    files = collect_files(paths)
    profiles = {lv: load_profile(profile_name, lv) for lv in levels}
    tok = tokenizer or next(iter(profiles.values())).tokenizer
    rows = []
    progress = Progress(len(files) * len(levels))
    done = 0
    for f in files:
        text = read_input(next(iter(profiles.values())), f)
        tb = count(text, tok)
        for lv in levels:
            r = compress(profiles[lv], text)
            rows.append({"file": f, "level": r.level, "chars_before": r.chars_before, "chars_after": r.chars_after,
                         "tokens_before": tb, "tokens_after": count(r.text, tok)})
            done += 1
            progress.step(done)
    progress.close()
    totals = []
    for lv in levels:
        sel = [r for r in rows if r["level"] == profiles[lv].level]
        totals.append({"file": "TOTAL", "level": profiles[lv].level,
                       **{k: sum(r[k] for r in sel) for k in ("chars_before", "chars_after", "tokens_before", "tokens_after")}})
    if as_json:
        sys.stdout.write(json.dumps({"tokenizer": tok, "rows": rows, "totals": totals}, indent=2))
        sys.stdout.write("\n")
        return 0
    name_w = max(len("file"), *(len(r["file"]) for r in rows))
    head = (f"{'file':<{name_w}}  {'level':<10}  {'chars':>8} {'->':>2} {'after':>8} {'saved':>7}  "
            f"{tok + ' tokens':>18} {'->':>2} {'after':>7} {'saved':>7}")
    print(head)
    print("-" * len(head))
    for r in rows + totals:
        print(
            f"{r['file']:<{name_w}}  {r['level']:<10}  {r['chars_before']:>8} {'->':>2} {r['chars_after']:>8} "
            f"{_pct(r['chars_before'], r['chars_after']):>7}  {r['tokens_before']:>18} {'->':>2} {r['tokens_after']:>7} "
            f"{_pct(r['tokens_before'], r['tokens_after']):>7}"
        )
    return 0
