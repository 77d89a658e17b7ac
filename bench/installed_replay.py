#!/usr/bin/env python3
"""The shared long sessions fed event by event to the installed hook
command: each transcript's hook events (engine/replay/events.py, as Claude
Code sends them, with the transcript grown to where it stood at each one)
go, one process each, to `python -I engine-hook` of a fresh venv with a
regular install of this checkout, and with --baseline REV of that commit
too, in the same rounds.  A project with the recorded corpus's rule files
(CLAUDE.md and .claude/rules/) gets the deliveries.

    python3 bench/installed_replay.py [--baseline REV] [--transcripts GLOB] [--differences DIR]

The recorded transcripts (tests/data) hold three of the six long sessions;
ENGINE_BENCH_TRANSCRIPTS=../shared/transcripts feeds all six.

Prints and writes bench/results-installed-replay.md: per transcript, the
events, how many each install answered, how many answers (and exit
statuses) differ between the installs, and each install's whole-process
time per event.  A delivery's marker id is random: it is compared as `ID`.
With --differences, each event answered differently is written to DIR
(<transcript>-<n>-<event>.json: the payload's event and every answer), to
read what changed.
"""

import argparse
import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, TRANSCRIPTS_ENV, corpus_dir, git_info, hook_argv, log, make_venv, transcript_files, write_section

DELIVERY_ID = re.compile(rb"rules-engine delivery [0-9a-f]{16}")


def baseline_source(rev):
    """A worktree of `rev`, removed with its temporary folder when the bench ends."""
    parent = Path(tempfile.mkdtemp(prefix="engine-bench-base-"))
    folder = parent / "src"
    atexit.register(shutil.rmtree, parent, True)  # after the worktree's removal (atexit runs the last first)
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(folder), rev], check=True)
    atexit.register(subprocess.run, ["git", "-C", str(REPO), "worktree", "remove", "--force", str(folder)])
    return folder


def project_with_rules(root):
    project = root / "project"
    (project / ".claude" / "rules").mkdir(parents=True)
    rules = sorted(corpus_dir().glob("*.md"))
    shutil.copy(rules[0], project / "CLAUDE.md")
    for path in rules[1:8]:
        shutil.copy(path, project / ".claude" / "rules" / path.name)
    return project


def events(path, project, grown):
    """(agent's event name, payload bytes) of each event of the transcript,
    the transcript at `grown` written up to where it stood then."""
    from engine.agents.table import get
    from engine.core.transcript import copy_range
    from engine.replay.events import neutral_events, starts_subagent
    from engine.replay.payload import build

    agent = get("claude-code")
    written = 0
    with open(grown, "wb") as out, open(path, "rb") as src:
        for event, offset in neutral_events(str(path), "claude", str(project), "bench-session", str(grown), [],
                                            starts_subagent(agent)):
            built = build(agent, event)
            if built is None:
                continue
            if offset > written:
                copy_range(src, out, written, offset)
                out.flush()
                written = offset
            yield built[0], json.dumps(built[1]).encode("utf-8")


def feed(path, commands, differences=None):
    """The figures of one transcript fed to every command."""
    with tempfile.TemporaryDirectory(prefix="engine-bench-replay-") as tmp:
        root = Path(tmp)
        project = project_with_rules(root)
        envs = []
        for i in range(len(commands)):
            home = root / f"home{i}"
            home.mkdir()
            envs.append(dict(os.environ, HOME=str(home), ENGINE_STATE_DIR=str(home / "state"),
                             ENGINE_CACHE_DIR=str(home / "cache")))
        count, answered, differ, seconds = 0, [0] * len(commands), [], [0.0] * len(commands)
        for name, data in events(path, project, root / "session.jsonl"):
            answers = []
            for i, argv in enumerate(commands):
                t0 = time.perf_counter()
                proc = subprocess.run(argv, input=data, capture_output=True, cwd=project, env=envs[i])
                seconds[i] += time.perf_counter() - t0
                answers.append((proc.returncode, DELIVERY_ID.sub(b"rules-engine delivery ID", proc.stdout)))
                answered[i] += bool(proc.stdout)
            count += 1
            if any(a != answers[0] for a in answers[1:]):
                differ.append(name)
                if differences:
                    _keep_difference(differences, path, count, name, answers)
        return count, answered, differ, seconds


def _keep_difference(folder, path, n, name, answers):
    out = Path(folder) / f"{path.stem}-{n}-{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"event": name, "answers": [[rc, body.decode("utf-8", "replace")] for rc, body in answers]},
                              indent=1, ensure_ascii=False))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", help="a commit whose install answers the same events, for a comparison")
    ap.add_argument("--transcripts", default="2[0-5]-*.jsonl", help="which transcripts (default: the long sessions)")
    ap.add_argument("--differences", metavar="DIR", help="write each event answered differently here")
    args = ap.parse_args()
    labels, commands = ["this checkout"], [hook_argv(make_venv(log)[0])]
    if args.baseline:
        labels.append(args.baseline)
        commands.append(hook_argv(make_venv(log, baseline_source(args.baseline))[0]))
    rows, total_differ = [], 0
    for path in transcript_files(args.transcripts):
        count, answered, differ, seconds = feed(path, commands, args.differences)
        total_differ += len(differ)
        log(f"  {path.name}: {count} events, answered {answered}, differing {len(differ)} {sorted(set(differ))}")
        cells = [path.name, str(count), " / ".join(map(str, answered)), str(len(differ)) if args.baseline else "-",
                 " / ".join(f"{1000 * s / max(count, 1):.1f}" for s in seconds)]
        rows.append("| " + " | ".join(cells) + " |")
    head = ["transcript", "events", "answered (" + " / ".join(labels) + ")", "answers differing",
            "ms per event (" + " / ".join(labels) + ")"]
    notes = [f"Measured {time.strftime('%Y-%m-%dT%H:%M:%S%z')} by `python3 bench/installed_replay.py"
             + (f" --baseline {args.baseline}" if args.baseline else "") + f"` at {git_info()['commit']}; "
             f"{os.cpu_count()} CPUs. Each event is one process of `python -I engine-hook` (a fresh venv, regular install). "
             f"Transcripts: {os.environ.get(TRANSCRIPTS_ENV) or 'the recorded ones (tests/data)'}."]
    write_section("results-installed-replay.md", "Long sessions fed event by event to the installed hook command",
                  notes, head, rows)
    return 1 if total_differ else 0


if __name__ == "__main__":
    sys.exit(main())
