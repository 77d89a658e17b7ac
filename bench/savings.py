#!/usr/bin/env python3
"""Savings on the corpus: characters and tokens (o200k_base, cl100k_base) per
level, and every protected span checked in the output, in order.

    python3 bench/savings.py [--corpus DIR]

Writes its section of bench/results.json and bench/results.md.
"""

import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

from common import ENCODINGS, LEVELS, arguments, fmt_table, loadavg, log, machine, now, pct_saved, publish, read_corpus

# Targets of issue 6 (savings that keep meaning); issue 2's chars target.
TARGET_STANDARD_O200K = 10.0
TARGET_AGGRESSIVE_O200K = 12.0
TARGET_AGGRESSIVE_CHARS_CHARS = 25.0

CHARS_PROFILE_YAML = """\
kind: profile
name: chars
extends: default
objective: chars
"""


def count_tokens(text, name):
    from engine.text.tokens import count

    return count(text, name)


def protected_check(profile, text, result):
    """(spans checked, replaced by design, lost, examples of lost).

    Every span of the input mask (LF-normalised text, as compress sees it) must
    appear in the output, in order.  Spans a transform was allowed to replace
    (result.replaced_by_design, by category) are left out: first those whose
    text is nowhere in the output, then any other miss of that category.
    """
    from engine.text.pipeline import split_line_endings

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
    from engine.core.profile import load_profile
    from engine.text.pipeline import compress

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

    # the opt-in profile that keeps the reference's full word lists (it can change meaning)
    for level in ("standard", "aggressive"):
        profile = load_profile("lossy", level)
        rows.append(one(f"{level} (profile lossy)", level, profile.objective, profile))

    return {"when": now(), "corpus_files": len(corpus), "corpus_chars": chars_before, "rows": rows}


def savings_table(sav, md):
    headers = ["Level", "Chars", "Saved", "o200k tokens", "Saved", "cl100k tokens", "Saved", "Protected lost"]
    rows = []
    for r in sav["rows"]:
        rows.append([
            r["label"],
            f"{r['chars_before']:,} → {r['chars_after']:,}", f"{r['chars_saved_pct']:.1f}%",
            f"{r['o200k_base_before']:,} → {r['o200k_base_after']:,}", f"{r['o200k_base_saved_pct']:.1f}%",
            f"{r['cl100k_base_before']:,} → {r['cl100k_base_after']:,}", f"{r['cl100k_base_saved_pct']:.1f}%",
            f"{r['protected_lost']} of {r['protected_spans']:,}"
            + (f" ({r['replaced_by_design']} replaced by design)" if r["replaced_by_design"] else ""),
        ])
    return fmt_table(headers, rows, md)


def targets(sav):
    by = {r["label"]: r for r in sav["rows"]}
    out = []
    for label, row_label, key, target in (
        ("standard: o200k tokens saved", "standard", "o200k_base_saved_pct", TARGET_STANDARD_O200K),
        ("aggressive: o200k tokens saved", "aggressive", "o200k_base_saved_pct", TARGET_AGGRESSIVE_O200K),
        ("aggressive, objective chars: characters saved", "aggressive (objective chars)", "chars_saved_pct", TARGET_AGGRESSIVE_CHARS_CHARS),
    ):
        if row_label in by:
            v = by[row_label][key]
            out.append({"target": label, "measured": f"{v:.1f}%", "goal": f">= {target:g}%", "ok": v >= target})
    lost = sum(r["protected_lost"] for r in sav["rows"] if "lossy" not in r["label"])
    out.append({"target": "protected items lost (all levels)", "measured": str(lost), "goal": "0", "ok": lost == 0})
    if "meaning_cases" in sav:
        total, kept = sav["meaning_cases"], sav["meaning_kept"]
        out.append({"target": "meaning suite: cases kept at every level", "measured": f"{kept} of {total}",
                    "goal": f"{total} of {total}", "ok": kept == total})
    errs = sum(len(r["errors"]) for r in sav["rows"])
    if errs:
        out.append({"target": "files compressed without error", "measured": f"{errs} errors", "goal": "0 errors", "ok": False})
    return out


def meaning_suite():
    """(cases, kept at every level): tests/meaning/*.yaml through the built-in
    profile, as tests/test_meaning.py checks them: every `keep` word whole and
    in order, no `absent` text."""
    import re

    from engine.core.profile import load_profile
    from engine.core.yamlload import load_file
    from engine.text.pipeline import compress

    folder = Path(__file__).resolve().parent.parent / "tests" / "meaning"
    profiles = {lv: load_profile("default", lv) for lv in LEVELS}
    total = kept = 0
    for path in sorted(folder.glob("*.yaml")):
        for case in load_file(path).data["cases"]:
            total += 1
            ok = True
            for lv in case.get("levels", LEVELS):
                out, pos = compress(profiles[lv], case["text"]).text, 0
                for w in case["keep"]:
                    m = re.compile(r"(?<![\w])" + re.escape(w) + r"(?![\w])").search(out, pos)
                    if m is None:
                        ok = False
                        break
                    pos = m.end()
                ok = ok and not any(bad in out for bad in case.get("absent", ()))
            kept += ok
    return total, kept


def main(argv=None):
    args = arguments("Savings per level on the corpus.").parse_args(argv)
    before = loadavg()
    sav = run_savings(read_corpus(args.corpus), log)
    total, kept = meaning_suite()
    sav["meaning_cases"], sav["meaning_kept"] = total, kept
    head = (f"{sav['corpus_files']} files, {sav['corpus_chars']:,} characters; built-in profile (objective tokens) "
            "unless noted. Protected lost: input spans missing from the output, in order.")
    extra = [f"error ({r['label']}): {e}" for r in sav["rows"] for e in r["errors"][:5]]
    extra += [f"lost ({r['label']}): {x['file']}: {x['category']}: {x['text']!r}" for r in sav["rows"] for x in r["lost_examples"][:5]]
    sav.update(machine=machine(before), targets=targets(sav),
               markdown="\n".join(["#### Savings on the shared corpus", head, "", savings_table(sav, True)]),
               text="\n".join(["== Savings on the shared corpus", head, "", savings_table(sav, False), *extra]))
    publish(args.out_dir, {"savings": sav})
    return 1 if any(r["errors"] for r in sav["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
