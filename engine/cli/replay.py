"""`engine replay TRANSCRIPT... [--agent NAME] [--profile P] [--pricing FILE]
[--project DIR] [--json|--html FILE]`: the CLI over engine.replay (one line per user
mistake, never a traceback; a progress bar on stderr only on a terminal)."""

import json
import sys

from engine.base.controls import own
from engine.base.errors import UserError, given

from .parser import PROFILE_HELP


def add_parser(sub):
    p = sub.add_parser("replay", help="what a profile's hooks would have done to recorded sessions, priced",
                       description="Replays recorded sessions (transcripts, .jsonl, of any agent) through a profile's "
                       "hooks, "
                       "offline: every event as the agent sent it, each seeing the transcript as it stood then, in a "
                       "throwaway HOME, state and cache (yours are never touched, nothing is executed). Reports every "
                       "answer, the injections by kind, what was already in view, the output kept out, the warnings, "
                       "and the net effect in tokens and priced with prompt caching.")
    p.add_argument("transcripts", nargs="+", metavar="TRANSCRIPT",
                   help="transcript files or globs (~/.claude/projects/SLUG/*.jsonl)")
    p.add_argument("--agent", metavar="NAME", help="the agent whose transcripts they are: claude-code, codex, "
                   "gemini, copilot (default: each file's own, by its lines, else claude-code)")
    p.add_argument("--profile", metavar="NAME|PATH", help="the profile to replay: " + PROFILE_HELP)
    p.add_argument("--pricing", metavar="FILE", help="rates (kind: pricing; default: the built-in "
                   "pipelines/reports/pricing.yaml)")
    p.add_argument("--project", metavar="DIR", help="the folder the events run in, for its rules and CLAUDE.md "
                   "(read, never written; default: an empty folder)")
    p.add_argument("--style", metavar="FILE", help="a report style (kind: replay_report) instead of the built-in")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    out.add_argument("--html", metavar="FILE", help="write one self-contained HTML page (mode 0600)")


def expand(patterns):
    """Files named or matched, in order, each once; a pattern matching
    nothing is an error."""
    import glob
    import os

    out = []
    for pattern in patterns:
        given(pattern)
        path = os.path.expanduser(pattern)
        matches = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
        if not matches:
            raise UserError("no transcript matches this pattern; give .jsonl files or a glob that names some",
                            pattern)
        for m in matches:
            if os.path.isdir(m):
                raise UserError("this is a folder, not a transcript file; give its .jsonl files (DIR/*.jsonl)", m)
            if not os.path.exists(m):
                raise UserError("no such file; check the path", m)
            if not os.path.isfile(m):
                raise UserError("not a transcript file; give a .jsonl file", m)
            if m not in out:
                out.append(m)
    return out


class Bar:
    """A progress bar on stderr, redrawn at most every 0.2 s."""

    def __init__(self, stream):
        self.stream, self.last = stream, 0.0

    def __call__(self, done, total, name):
        import os
        import time

        now = time.monotonic()
        if now - self.last < 0.2 and done < total:
            return
        self.last = now
        width = 30
        filled = int(width * done / total) if total else width
        self.stream.write(f"{own(chr(13))}[{'#' * filled}{'.' * (width - filled)}] {100 * done // max(total, 1):3d}% "
                          f"{os.path.basename(name)[:40]:40s}")
        self.stream.flush()

    def end(self):
        self.stream.write(own("\r") + " " * 80 + own("\r"))
        self.stream.flush()


def run(args):
    from engine.replay.render import load as load_style
    from engine.replay.render import render_html, render_text
    from engine.replay.run import replay

    if args.html:
        given(args.html)
    files = expand(args.transcripts)
    style = load_style(args.style)
    bar = Bar(sys.stderr) if sys.stderr.isatty() else None
    try:
        result = replay(files, profile=args.profile, progress=bar, pricing=args.pricing, project=args.project,
                        agent=args.agent)
    finally:
        if bar is not None:
            bar.end()
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    elif args.html:
        from engine.base.textio import write_text_atomic

        write_text_atomic(args.html, render_html(result, style), 0o600)
        print(f"{args.html}: the replay of {len(result['sessions'])} session(s)")
    else:
        sys.stdout.write(render_text(result, style) + "\n")
    return 0
