"""`engine refresh preview`: exactly what the refresh handlers would inject at
turn N, with order, priority, sizes before and after compression, what did
not fit, what the trust model left out (SKIPPED, with the reason), and why
each path-scoped rule is in or out (SCOPED, for the touched files given by
--touched or read from --transcript)."""

import os
import sys

from engine.base.refs import is_path
from .handlers import Context, build
from .handlers.refresh import Refresh
from .handlers.reinject import Reinject


def preview(profile_ref, turn, cwd, show_text, out=None, touched=None, transcript=None, agent=None):
    from engine.core.profile import load_profile

    out = out or sys.stdout
    cwd = os.path.abspath(cwd or os.getcwd())
    if profile_ref and is_path(profile_ref):
        profile_ref = os.path.abspath(os.path.expanduser(profile_ref))  # from where the command runs, not --cwd
    profile = load_profile(profile_ref, cwd=cwd)
    from engine.core.profile import approval_notes

    for line in approval_notes(profile_ref, cwd):
        print(f"note: {line}", file=out)
    registry, by_event = build(profile.hooks)
    fields = {"cwd": cwd, "session": "preview"}
    if transcript:
        if not os.path.isfile(os.path.expanduser(transcript)):
            from engine.base.errors import UserError

            raise UserError("no transcript file here; give a session's transcript (engine session list shows them)",
                            transcript)
        fields["transcript"] = os.path.abspath(os.path.expanduser(transcript))
    from engine.agents import DEFAULT_AGENT, table
    from engine.agents.event import make

    event = make(table.get(agent or DEFAULT_AGENT), "prompt", **fields)
    messages, shown = [], set()
    ctx = Context(event, None, turn or 0, profile_ref, profile.hooks, messages.append)
    # Given files count as touched (relative to the project, like tool
    # inputs), beside those of --transcript; without either nothing was touched.
    from .pathscope import relative

    given = list(dict.fromkeys(t for t in (relative(t, cwd) for t in touched or ()) if t))
    if transcript:
        ctx.touched_extra = given
    else:
        ctx.touched_override = given
    refreshers = [h for h in registry.values() if isinstance(h, Refresh)]
    if not refreshers:
        print("this profile declares no refresh handler", file=out)
        return 0
    for h in refreshers:
        cadence = f"every {h.every_turns} prompts" if h.every_turns else "no turn cadence"
        if h.every_tokens:
            cadence += f", every {h.every_tokens} context tokens"
        reinjects = [r.name for r in registry.values() if isinstance(r, Reinject) and h.name in r.spec["handlers"]]
        if reinjects:
            cadence += f"; also run by {', '.join(reinjects)}"
        due = turn is None or (h.every_turns and turn > 0 and turn % h.every_turns == 0)
        print(f"== {h.name} ({h.spec['kind']}, {cadence})", file=out)
        if not due:
            print(f"   not due at turn {turn}", file=out)
            continue
        plan = h.plan(ctx)
        from .source import line

        text = line(profile.hooks, ctx.name, h.name) + plan.text if plan.text else ""  # as dispatch.merge puts it
        unit = next(k for k in plan.budget if k != "used")
        print(f"   level {plan.level}; budget {plan.budget[unit]} {unit}, used {plan.budget['used']}; "
              f"injection {len(text)} characters", file=out)
        if not plan.items and not plan.omitted:
            print("   no files found: nothing would be injected", file=out)
        rows = [(it, "in") for it in plan.items] + [(it, "OMITTED") for it in plan.omitted]
        for n, (it, status) in enumerate(rows, 1):
            whose = "yours" if it.origin == "user" else "project"
            print(f"   {n:>2}. {status:<7} {whose:<7} priority {it.priority:<3} {it.chars_before:>6} -> {it.chars:>6} chars  "
                  f"{it.path}", file=out)
        for d in plan.scoped:
            print(f"   SCOPED  {d.status:<3} {d.path}: {d.reason}", file=out)
            shown.add(f"rule file {d.path}: {d.reason}")
        for path, reason in plan.skipped:
            print(f"   SKIPPED {path}: {reason}", file=out)
            shown.add(f"rule file {path} left out: {reason}")
        if show_text and text:
            print("   ---", file=out)
            print("\n".join("   " + row for row in text.splitlines()), file=out)
    for m in dict.fromkeys(messages):
        if m not in shown:
            print(f"note: {m}", file=out)
    return 0
