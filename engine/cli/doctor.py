"""`engine doctor`: what works with each coding agent on this machine (a
thin layer over engine/hooks/doctor.py).  Text for a person, or --json;
either way every character taken from a file or an agent's output is
escaped on its way out (engine/cli/output.py)."""

import time

from engine.base.controls import one_line
from engine.base.errors import display

from .output import json_document


def add_parser(sub):
    p = sub.add_parser("doctor", help="for each coding agent found: its version, whether the engine's hooks are "
                       "installed, trusted and firing, the mechanism of each feature, and what is missing",
                       description="Looks for Claude Code, Codex CLI, Gemini CLI and Copilot CLI (their command on "
                       "the PATH, or their home folder) and checks each against the working folder's project. It "
                       "changes nothing; the one program it runs is each agent's own `--version`, bounded in time.")
    p.add_argument("--agent", metavar="NAME", action="append", help="check this agent (repeatable; default: every "
                   "agent found)")
    from .parser import PROFILE_HELP

    p.add_argument("--profile", metavar="NAME|PATH", help="the profile whose events the hooks should cover: "
                   + PROFILE_HELP)
    p.add_argument("--json", action="store_true", help="print the whole report as one JSON object")


def run(args):
    from engine.hooks.doctor import doctor
    from engine.hooks.install import agent_named

    for name in args.agent or ():
        agent_named(name)  # an unknown name: one line, the agents listed
    report = doctor(names=args.agent, profile_ref=args.profile)
    if args.json:
        json_document(report)
        return 0
    print(f"project: {display(report['project'])}")
    if report["profile_error"]:
        print(f"profile: the active profile does not load, so this checks the built-in one's events: "
              f"{one_line(report['profile_error'])}")
    if not report["agents"]:
        print("no coding agent found (no agent's command on the PATH, no agent's home folder)")
    for agent in report["agents"]:
        _agent(agent)
    return 0


def _agent(a):
    where = ", ".join(filter(None, [a["command"] and f"command {display(a['command'])}",
                                    a["home"] and f"home {display(a['home'])}"]))
    print(f"\n{a['display']} ({where or 'not found'})")
    v = a["version"]
    print(f"  version: {v['value'] or '?'}" + (f" ({v['error']})" if v and v["error"] else "") if v
          else "  version: ? (its command is not on the PATH)")
    print("  hooks:")
    for s in a["hooks"]:
        print(f"    {s['scope']:<8} {_scope(s)}")
    if a["plugin"]:
        p = a["plugin"]
        print(f"  plugin: {'on' if p['on'] else 'off'} ({display(p['file'])})" + (f": {p['why']}" if p["why"] else ""))
    for d in a.get("settings_decisions") or ():
        print(f"  hooks setting: {one_line(d['line'])}")
    print(f"  firing: {_firing(a['firing'])}")
    print("  features:")
    width = max(len(f["name"]) for f in a["features"]) if a["features"] else 0
    for f in a["features"]:
        how = f"{f['mechanism']} at {', '.join(f['events'])}" if f["mechanism"] is not None else "-"
        print(f"    {f['name']:<{width}}  {how}" + (f"  ({f['note']})" if f["note"] else ""))
    print("  missing:" + ("" if a["missing"] else " nothing"))
    for line in a["missing"]:
        print(f"    - {line}")
    if a["notes"]:
        print("  notes:")
    for line in a["notes"]:
        print(f"    - {one_line(line)}")  # holds a value read from the agent's settings


def _scope(s):
    if s["file"] is None:
        return f"- ({s['error']})"
    head = display(s["file"])
    if s["error"]:
        return f"{head}: {s['error']}"
    if not s["installed"]:
        return f"{head}: not installed"
    return f"{head}: {', '.join(s['installed'])}; trust: {s['trust']['state']}"  # installed: trust was checked


def _firing(f):
    if not f["sessions"]:
        return "no session of this agent yet"
    text = f"the engine answered in {f['answered']} of the last {f['sessions']} session(s)"
    if f["last"]:
        text += f" (latest {time.strftime('%Y-%m-%d %H:%M', time.localtime(f['last']))})"
    if f["hook_context"]:
        text += f"; {f['hook_context']} other(s) show context a hook added"
    return text
