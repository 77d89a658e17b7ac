"""`engine session report [SESSION_ID|--current|TRANSCRIPT] [--agent NAME] [--json] [--html FILE]`:
the CLI over engine.session (one line per user mistake, never a traceback)."""

import json
import sys

from engine.base.errors import UserError, given


def add_parser(sub):
    p = sub.add_parser("session", help="reports on one session of an agent, read from its transcript")
    ssub = p.add_subparsers(dest="session_command", metavar="SUBCOMMAND")
    ssub.required = True
    s = ssub.add_parser("report", help="turns, context fill over time, refreshes, top tool consumers, errors",
                        description="A report on one session: its turns, the context fill per API response as a "
                        "chart (refreshes and compactions marked), the refreshes and their sizes, the tools whose "
                        "results filled the context, and the errors.")
    s.add_argument("target", nargs="?", metavar="SESSION_ID|TRANSCRIPT",
                   help="a session id (looked up where each agent keeps its sessions, e.g. ~/.claude/projects) "
                   "or a transcript file (.jsonl) of any agent")
    s.add_argument("--current", action="store_true",
                   help="the newest transcript of this project (of the agent named by --agent, else of any agent)")
    s.add_argument("--agent", metavar="NAME", help="the agent whose transcript it is: claude-code, codex, gemini, "
                   "copilot (default: the one the file's lines show, else claude-code)")
    s.add_argument("--since", metavar="PERIOD",
                   help="every session of the period (7d, 24h, 90m, 2w): what the engine did, one row a session "
                   "plus totals, from the hooks' records")
    s.add_argument("--cwd", help="the project folder for --current and session ids (default: the working folder)")
    out = s.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report as one JSON object (shape in docs/sessions.md)")
    out.add_argument("--html", metavar="FILE", help="write one self-contained HTML page (inline CSS and SVG chart)")
    s.add_argument("--style", metavar="FILE", help="a report style (kind: report) instead of the built-in "
                   "pipelines/reports/session.yaml")
    s.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="colour in the terminal chart: auto (only on a terminal, not with $NO_COLOR), always, never")


def _write_private(path, text):
    """Write atomically, 0600: the page names the user's files and errors."""
    from engine.base.textio import write_text_atomic

    write_text_atomic(path, text, 0o600)


def _period(args):
    """--since: one row a session of the period plus totals."""
    from engine.session import load_style, render_period
    from engine.session.did import period_report

    if args.target or args.current:
        raise UserError("--since sums every session of a period: give it without a session or --current")
    if args.html:
        given(args.html)
    style = load_style(args.style)
    period = period_report(args.since, style)
    if args.json:
        sys.stdout.write(json.dumps(period, indent=2, ensure_ascii=False) + "\n")
    elif args.html:
        _write_private(args.html, render_period(period, style, html=True))
        print(f"{args.html}: what the engine did in {period['totals']['sessions']} session(s) of the last {args.since}")
    else:
        sys.stdout.write(render_period(period, style) + "\n")
    return 0


def run(args):
    from engine.session import build_report, find, load_style, render_html, render_text

    if args.target and args.current:
        raise UserError("give a session or --current, not both")
    if args.since is not None:
        return _period(args)
    if args.target:
        given(args.target)
    if args.html:
        given(args.html)
    style = load_style(args.style)
    if args.agent:
        from engine.session.agent import named

        named(args.agent)  # an unknown name: one line listing the names, before any file is read
    from engine.session.locate import EVERY

    path = find(args.target, args.current, args.cwd, args.agent or EVERY)
    from engine.ccm.stub import purge_reader

    report = build_report(path, style, agent=args.agent, original=purge_reader())
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    elif args.html:
        _write_private(args.html, render_html(report, style))
        print(f"{args.html}: the report of session {report['session_id']} ({report['api_calls']} API calls)")
    else:
        from .commands import use_color

        sys.stdout.write(render_text(report, style, use_color(args.color)) + "\n")
    return 0
