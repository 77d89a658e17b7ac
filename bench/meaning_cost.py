#!/usr/bin/env python3
"""What each meaning guard of issue 25 costs: tokens and characters on the
corpus at standard (and light, for the lists), with the guard as shipped and
with it switched off.

    python3 bench/meaning_cost.py [--corpus DIR]

Each variant is a copy of the engine and its YAML in a temporary folder,
with one edit to the YAML (the guard off), compressed in a process of its
own: the figures are what that YAML would give, nothing is patched in
memory.  Prints a table; writes nothing in the repository.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from common import arguments, read_corpus

REPO = Path(__file__).resolve().parent.parent
FOLDERS = ("engine", "pipelines", "protect", "dictionaries", "schemas")

# (label, [(file, pattern as shipped, replacement with the guard off)]):
# regular expressions (re.sub), each of which must match
VARIANTS = [
    ("as shipped", []),
    ("lists: no list keeps its markers (as before issue 25)",
     [("pipelines/levels/light.yaml", r"    lead_in_words: list_lead_ins\n", "")]),
    ("lists: a nested list keeps them only after a lead-in",
     [("pipelines/levels/light.yaml", r"keep_nested: true", "keep_nested: false")]),
    ("copula: 'is' goes before any word",
     [("dictionaries/fillers.yaml", r"only_followed_by: &complement '", "only_followed_by: &complement '|")]),
    ("articles: none kept after a verb that is also a noun",
     [("dictionaries/fillers.yaml", r"\(\?i:\\L<verb_nouns>\)", "(?!)")]),
    ("articles: none kept around a reduced relative clause or after a copula",
     # the guard keeps only its first branch (after a verb that is also a noun)
     [("dictionaries/fillers.yaml",
       r"(unless_followed_by: &article_context '\(\?<=\(\?<!\[\\w''’-\]\)\(\?i:\\L<verb_nouns>\)\[ \\t\]\+\(\?i:a\|an\|the\)\))\|[^\n]*'",
       r"\1'")]),
    ("'<verb> that': rewritten before any word",
     [("dictionaries/phrases.yaml", r"only_followed_by: &clause '", "only_followed_by: &clause '|")]),
    ("headings: their text rewritten like any line",
     [("pipelines/default.yaml", r"\n  - headings\n", "\n")]),
]

MEASURE = r"""
import json, sys
from engine.core.profile import build
from engine.text.pipeline import compress
from engine.text.tokens import count
corpus = json.load(sys.stdin)
out = {}
for level in ("light", "standard"):
    p = build("default", level)
    texts = [compress(p, t).text for _, t in corpus]
    out[level] = {"chars": sum(map(len, texts)),
                  "o200k": sum(count(t, "o200k_base") for t in texts),
                  "cl100k": sum(count(t, "cl100k_base") for t in texts)}
print(json.dumps(out))
"""


def measure(corpus, edits):
    """Figures of one variant, in a copy of the engine and its YAML."""
    with tempfile.TemporaryDirectory(prefix="engine-cost-") as tmp:
        for folder in FOLDERS:
            shutil.copytree(REPO / folder, Path(tmp) / folder, ignore=shutil.ignore_patterns("__pycache__"))
        for file, pattern, replacement in edits:
            path = Path(tmp) / file
            text, n = re.subn(pattern, replacement, path.read_text(encoding="utf-8"))
            if n < 1:
                raise SystemExit(f"bench: {file} no longer matches {pattern!r}; update VARIANTS")
            path.write_text(text, encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=tmp, ENGINE_CACHE_DIR=str(Path(tmp) / "cache"))
        run = subprocess.run([sys.executable, "-c", MEASURE], input=json.dumps(corpus), capture_output=True,
                             text=True, env=env, cwd=tmp)
        if run.returncode != 0:
            raise SystemExit(f"bench: variant failed:\n{run.stderr[-2000:]}")
        return json.loads(run.stdout)


def main(argv=None):
    args = arguments("What each meaning guard of issue 25 costs.").parse_args(argv)
    corpus = read_corpus(args.corpus)
    rows = [(label, measure(corpus, edits)) for label, edits in VARIANTS]
    base = rows[0][1]
    print(f"{len(corpus)} files; the cost of a guard is what switching it off saves (negative: it costs that much)")
    print(f"{'variant':58} {'level':8} {'o200k':>8} {'delta':>6} {'cl100k':>8} {'delta':>6} {'chars':>8} {'delta':>7}")
    for label, fig in rows:
        for level in ("light", "standard"):
            f, b = fig[level], base[level]
            print(f"{label[:58]:58} {level:8} {f['o200k']:8,} {f['o200k'] - b['o200k']:6,} "
                  f"{f['cl100k']:8,} {f['cl100k'] - b['cl100k']:6,} {f['chars']:8,} {f['chars'] - b['chars']:7,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
