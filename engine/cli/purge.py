"""`engine purge`: a thin layer over ccm.purge (which says what it does)."""

import json

from engine.base.errors import UserError


def add_parser(sub):
    p = sub.add_parser("purge", help="shrink a session transcript: outputs to the content cache, thinking out, structure repaired",
                       description="Large tool outputs (tool_result, toolUseResult, progress lines) are stored in the "
                       "content cache and replaced by stubs (engine cache show KEY prints them back); thinking blocks "
                       "go; parentUuid chains and tool_use/tool_result pairs are repaired.  A timestamped backup is "
                       "written first.")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--current", action="store_true", help="the newest transcript of the project in the working folder")
    where.add_argument("target", nargs="?", metavar="SESSION_ID|PATH", help="a session id or a transcript path")
    p.add_argument("--analyze", action="store_true", help="print what would be removed, per kind, in bytes and tokens; change nothing")
    p.add_argument("--repair-only", action="store_true", help="only repair the structure; remove nothing")
    p.add_argument("--threshold", type=int, metavar="BYTES", help="stub outputs over this size (default: the settings' purge.threshold_bytes)")
    p.add_argument("--keep-thinking", action="store_true", help="keep thinking blocks")
    p.add_argument("--dry-run", action="store_true", help="say what would change; write nothing (no blob, no backup)")
    p.add_argument("--force", action="store_true", help="purge even a transcript modified in the last purge.busy_seconds")
    p.add_argument("--summarize", action="store_true", help="also summarize old assistant prose (engine messages' "
                   "assistant_prose pipeline); each original goes to the content cache and its summary names it")
    p.add_argument("--recency", type=int, metavar="N", help="with --summarize: the last N user/assistant messages "
                   "stay whole (default: purge.summarize.recency)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def resolve(args):
    """The transcript named: found as the agent finds it (engine/session/locate.py)."""
    from engine.session import locate

    if args.current or not args.target:
        return locate.current()
    return locate.find(args.target, False, None)


def _purgeable(path):
    """A transcript of an agent whose format purge does not rewrite is
    refused, not reported as having nothing to remove."""
    from engine.agents.table import agents
    from engine.session.agent import for_transcript

    agent = for_transcript(path)
    if not agent.data["transcript"]["purge"]:
        able = ", ".join(a["display"] for a in agents().values() if a["transcript"]["purge"])
        raise UserError(f"this is a transcript of {agent.data['display']}, whose format engine purge does not rewrite "
                        f"(only {able}'s); it is left as it was. Its large outputs are in the content cache where the "
                        "engine's hooks kept them out: engine cache list", path)


def run(args):
    from engine.ccm import config
    from engine.ccm.purge import analysis, purge_file
    from engine.ccm.store import Store

    settings = config.load()
    if args.threshold is not None and args.threshold < 1:
        raise UserError(f"--threshold {args.threshold}: give a positive number of bytes")
    if args.recency is not None and args.recency < 0:
        raise UserError(f"--recency {args.recency}: give 0 or more messages")
    if args.recency is not None and not args.summarize:
        raise UserError("--recency applies to --summarize; add --summarize")
    path = resolve(args)
    _purgeable(path)
    report, backup = purge_file(path, settings, Store(settings), args.threshold, args.keep_thinking, args.repair_only,
                                args.dry_run, args.analyze, args.force, args.summarize, args.recency)
    kinds = analysis(report, settings["purge"]["tokenizer"]) if args.analyze else {
        k: {"count": n, "bytes": b} for k, (n, b, _t) in sorted(report.kinds.items())}
    removed = report.bytes_in - report.bytes_out
    res = {"path": path, "bytes_before": report.bytes_in, "bytes_after": report.bytes_out, "removed_bytes": removed,
           "lines_before": report.lines_in, "lines_after": report.lines_out, "kinds": kinds, "repairs": report.repairs,
           "cached": len(report.keys), "backup": backup, "written": backup is not None}
    if args.json:
        print(json.dumps(res))
        return 0
    pct = 100.0 * removed / report.bytes_in if report.bytes_in else 0.0
    if not backup and not (args.dry_run or args.analyze):
        print(f"{path}: nothing to remove or repair; left as it was (no backup written)")
        return 0
    verb = "purged" if backup else "would purge"
    print(f"{path}: {verb} {removed} of {report.bytes_in} bytes ({pct:.1f}%); {len(report.keys)} output(s) in the cache")
    for kind, row in kinds.items():
        tok = f", {row['tokens']} tokens" if "tokens" in row else ""
        print(f"  {kind}: {row['count']} x, {row['bytes']} bytes{tok}")
    for kind, n in sorted(report.repairs.items()):
        print(f"  repair {kind}: {n}")
    if backup:
        # what went without a stub (thinking, dropped lines) lives only there
        print(f"  backup: {backup} (the only copy of what went without a stub; the newest "
              f"{settings['purge']['backups_kept']} backups are kept)")
    return 0
