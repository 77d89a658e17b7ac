"""Does the context monitor warn at every crossing?  The recorded real
sessions (bench/common.py: tests/data, or $ENGINE_BENCH_TRANSCRIPTS) replayed event by event through the monitor's handlers only (in
this process, as `engine replay` does: each event sees the transcript as it
stood then), under the built-in gate and under tighter ones.

    python3 bench/monitor_crossings.py [--transcripts GLOB] [--per 1 4] [--thresholds 30 40 ...]

A crossing is a response whose fill passes a threshold no earlier response
of the same epoch reached (the first response after a compaction follows an
unknown fill: not counted; a fill that shrinks within an epoch and grows
back past a threshold is warned already: the monitor warns once per
threshold per compaction epoch).  It is warned on time when the first
PostToolUse or Stop after its lines are on disk says so; late when a later
one does; missed when none does before the next response.  Each threshold
runs alone (once one is passed the monitor reads the fill at every event:
a second threshold would hide the gate); `--per`: the gate's bytes a token
(`hooks.context.growth_bytes_per_token`; 1 is the built-in).  Also counted:
how often the fill was read (the gate's cost)."""

import argparse
import glob
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's engine
from common import transcript_files

WINDOW = 200000
OFF = {
    "UserPromptSubmit": ("rules", "claude_md", "content_pins"),
    "SessionStart": ("after_compaction", "effort_guidance"),
    "PreToolUse": ("scoped_rules", "tool_memory", "subagent_effort", "content_cache"),
    "PostToolUse": ("rules_pending", "rules_on_growth", "large_bash_output", "remember_failures",
                    "learn_large_commands"),
    "PostToolUseFailure": ("remember_tool_failures",),
    "Stop": ("remember_unseen_failures", "context_audit"),
    "PreCompact": ("compact_instructions",),
    "SessionEnd": ("remember_last_failures",),
}


def profile(folder, per, threshold):
    """The built-in profile with only the two fill monitors, on one threshold."""
    events = {e: [{"name": n, "enabled": False} for n in names] for e, names in OFF.items()}
    events["PostToolUse"].append({"name": "context_monitor_tools", "thresholds": [threshold]})
    events["Stop"].append({"name": "context_monitor", "thresholds": [threshold]})
    path = Path(folder) / f"monitor-{per}-{threshold}.yaml"
    path.write_text(json.dumps({"kind": "profile", "name": f"monitor-{per}-{threshold}", "extends": "default",
                                "hooks": {"context": {"growth_bytes_per_token": per}, "events": events}}))
    return str(path)


def crossings(data, thresholds):
    """[(offset of the crossing response's first line, threshold)]."""
    order, first, last, epoch, offset = [], {}, {}, 0, 0
    for raw in data.splitlines(keepends=True):
        start, offset = offset, offset + len(raw)
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(rec, dict) or rec.get("isSidechain"):
            continue
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            epoch += 1
            continue
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        usage = msg.get("usage")
        if rec.get("type") == "assistant" and isinstance(usage, dict) and msg.get("model") != "<synthetic>":
            key = (msg.get("id"), epoch)
            if key not in first:
                order.append(key)
                first[key] = start
            last[key] = sum(int(usage.get(k) or 0) for k in
                            ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    out, before = [], {}
    for key in order:
        pct = 100.0 * last[key] / WINDOW
        if key[1] in before:
            out += [(first[key], t) for t in thresholds if before[key[1]] < t <= pct]
        before[key[1]] = max(pct, before.get(key[1], pct))
    return out


def replay(path, prof, world):
    """([(offset, [thresholds warned])] at each PostToolUse and Stop, fill reads)."""
    import engine.hooks.fill as fill
    from engine.hooks.dispatch import handle, settings_for
    from engine.replay.events import events

    data = Path(path).read_bytes()
    tpath = os.path.join(world.fresh(), "s.jsonl")
    hooks = settings_for(prof, world.project)
    log = lambda _line: None
    log.event, log.max_bytes = {}, None
    reads = [0]
    real = fill.last_usage

    def counted(*args):
        reads[0] += 1
        return real(*args)

    heard, written = [], 0
    fill.last_usage = counted
    try:
        with open(tpath, "wb") as out:
            for ev, offset in events(path, cwd=world.project, session_id="s", transcript_path=tpath):
                out.write(data[written:offset])
                out.flush()
                written = offset
                if ev["hook_event_name"] not in ("PostToolUse", "Stop"):
                    continue
                trace = []
                handle(ev, prof, log, hooks, None, trace=trace)
                said = [v for _h, f, v in trace[0].origins if f == "user_message"] if trace else []
                heard.append((offset, [int(t) for s in said for t in re.findall(r"past (\d+)%", s)]))
    finally:
        fill.last_usage = real
    return heard, reads[0]


def judge(cross, heard):
    on_time = late = missed = 0
    starts = sorted({s for s, _t in cross})
    for start, threshold in cross:
        after = [h for h in heard if h[0] >= start]
        nxt = next((s for s in starts if s > start), None)
        if after and any(t >= threshold for t in after[0][1]):
            on_time += 1
        elif any(any(t >= threshold for t in h[1]) for h in after if nxt is None or h[0] < nxt):
            late += 1
        else:
            missed += 1
    return on_time, late, missed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--transcripts", default=None, help="a glob of transcripts (default: 2*.jsonl of bench/common.py's)")
    ap.add_argument("--per", nargs="*", type=int, default=[1, 4])
    ap.add_argument("--thresholds", nargs="*", type=int, default=[30, 40, 50, 60, 70, 80])
    args = ap.parse_args()
    files = sorted(glob.glob(args.transcripts)) if args.transcripts else [str(p) for p in transcript_files("2*.jsonl")]
    if not files:
        sys.exit(f"no transcripts match {args.transcripts}; name them with --transcripts")
    from engine.replay.world import World

    print(f"{'session':<40} {'per':>3} {'events':>6} {'reads':>5} {'crossings':>9} {'on time':>7} "
          f"{'late':>4} {'missed':>6} {'seconds':>7}")
    total = {}
    with tempfile.TemporaryDirectory() as tmp, World() as world:
        for per in args.per:
            for f in files:
                row = [0] * 6
                t0 = time.perf_counter()
                for threshold in args.thresholds:
                    heard, reads = replay(f, profile(tmp, per, threshold), world)
                    cross = crossings(Path(f).read_bytes(), [threshold])
                    row = [a + b for a, b in zip(row, (len(heard), reads, len(cross), *judge(cross, heard)))]
                total[per] = [a + b for a, b in zip(total.get(per, [0] * 6), row)]
                print(f"{os.path.basename(f)[:40]:<40} {per:>3} " + " ".join(
                    f"{v:>{w}}" for v, w in zip(row, (6, 5, 9, 7, 4, 6))) + f" {time.perf_counter() - t0:>7.1f}")
        for per, row in total.items():
            print(f"{'all':<40} {per:>3} " + " ".join(f"{v:>{w}}" for v, w in zip(row, (6, 5, 9, 7, 4, 6))))


if __name__ == "__main__":
    main()
