"""How often a growth cadence of N tokens would re-deliver the rules in the
recorded real sessions: per session, per compaction epoch, the context at the
epoch's start and end (main-chain usage records), the prompts, and the
deliveries a cadence of N tokens since the rules were last in view makes
(they are in view from each epoch's start: the agent loads them then).

    python3 bench/growth_cadence.py [N ...] [--transcripts GLOB]

The sessions: --transcripts, else 2*.jsonl of bench/common.py's transcripts
(tests/data, or $ENGINE_BENCH_TRANSCRIPTS).

Prints one row per session and candidate N, and the totals: the figures
behind hooks.events.UserPromptSubmit.rules.every_tokens in
pipelines/default.yaml."""

import argparse
import glob
import json

from common import transcript_files


def epochs(path):
    """[(first tokens, last tokens)] per epoch, and the typed prompts."""
    out, cur, prompts = [], [None, None], 0
    for raw in open(path, "rb"):
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(rec, dict) or rec.get("isSidechain"):
            continue
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            out.append(tuple(cur))
            cur = [None, None]
            continue
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        if rec.get("type") == "user" and isinstance(msg.get("content"), str) and not rec.get("isCompactSummary") \
                and not rec.get("isMeta"):
            prompts += 1
        usage = msg.get("usage")
        if rec.get("type") == "assistant" and isinstance(usage, dict) and msg.get("model") != "<synthetic>":
            t = sum(int(usage.get(k) or 0) for k in ("input_tokens", "cache_creation_input_tokens",
                                                     "cache_read_input_tokens"))
            cur[0] = t if cur[0] is None else cur[0]
            cur[1] = t
    out.append(tuple(cur))
    return out, prompts


def deliveries(eps, n):
    """Growth deliveries: from 0 in the first epoch, from the first usage after a compaction."""
    total = 0
    for i, (first, last) in enumerate(eps):
        if last is None:
            continue
        start = 0 if i == 0 else first
        total += max(0, (last - start) // n)
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="*", type=int, default=[20000, 40000, 60000, 80000])
    ap.add_argument("--transcripts", default=None, help="a glob of transcripts")
    args = ap.parse_args()
    files = sorted(glob.glob(args.transcripts)) if args.transcripts else [str(p) for p in transcript_files("2*.jsonl")]
    totals = {n: 0 for n in args.n}
    grown = []
    print(f"{'session':<48} {'prompts':>7} {'epochs (start-end K tokens)':<40} " + " ".join(f"N={n // 1000}K" for n in args.n))
    for f in files:
        eps, prompts = epochs(f)
        spans = ", ".join(f"{(0 if i == 0 else a or 0) // 1000}-{(b or 0) // 1000}" for i, (a, b) in enumerate(eps))
        row = [deliveries(eps, n) for n in args.n]
        for n, d in zip(args.n, row):
            totals[n] += d
        grown += [b - (0 if i == 0 else a) for i, (a, b) in enumerate(eps) if b is not None]
        print(f"{f.rsplit('/', 1)[-1][:48]:<48} {prompts:>7} {spans:<40} " + " ".join(f"{d:>6}" for d in row))
    grown.sort()
    print(f"epochs: {len(grown)}, growth per epoch: min {grown[0]:,} median {grown[len(grown) // 2]:,} max {grown[-1]:,}")
    print("deliveries in all: " + ", ".join(f"N={n:,}: {totals[n]}" for n in args.n))


if __name__ == "__main__":
    main()
