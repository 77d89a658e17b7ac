"""`engine refresh preview`: exactly what the refresh handlers would inject at
turn N, with order, priority, sizes before and after compression, what did
not fit, what the trust model left out (SKIPPED, with the reason), and why
each path-scoped rule is in or out (SCOPED, for the touched files given by
--touched or read from --transcript)."""

import os
import sys

from engine.base.controls import one_line
from engine.base.refs import is_path

from .handlers import Context, build
from .handlers.refresh import Refresh
from .handlers.reinject import Reinject
from .source import line as source_line


def preview(profile_ref, turn, cwd, show_text, out=None, touched=None, transcript=None, agent=None):
    from engine.core.profile import choice, profile_of

    out = out or sys.stdout
    cwd = os.path.abspath(cwd or os.getcwd())
    if profile_ref and is_path(profile_ref):
        profile_ref = os.path.abspath(os.path.expanduser(profile_ref))  # from where the command runs, not --cwd
    chosen = choice(profile_ref, cwd)
    profile = profile_of(chosen)
    for line in chosen.notes():
        print(f"note: {line}", file=out)
    registry, _by_event = build(profile.hooks)
    messages, shown = [], set()
    ctx = _context(profile_ref, chosen, profile.hooks, turn, cwd, touched, transcript, agent, messages.append)
    refreshers = [h for h in registry.values() if isinstance(h, Refresh)]
    if not refreshers:
        print("this profile declares no refresh handler", file=out)
        return 0
    for h in refreshers:
        print(f"== {h.name} ({h.spec['kind']}, {_cadence(h, registry)})", file=out)
        due = turn is None or (h.every_turns and turn > 0 and turn % h.every_turns == 0)
        if not due:
            print(f"   not due at turn {turn}", file=out)
            continue
        _show(h.plan(ctx), source_line(profile.hooks, ctx.name, h.name), show_text, out, shown)
    for m in dict.fromkeys(messages):
        if m not in shown:
            print(f"note: {m}", file=out)
    return 0


def _context(profile_ref, chosen, hooks, turn, cwd, touched, transcript, agent, log):
    """The Context of a prompt at `turn` in `cwd`: the files given count as
    touched (relative to the project, like tool inputs), beside those of
    --transcript; without either nothing was touched."""
    from engine.agents import DEFAULT_AGENT, table
    from engine.agents.event import make

    from .pathscope import relative

    fields = {"cwd": cwd, "session": "preview"}
    if transcript:
        if not os.path.isfile(os.path.expanduser(transcript)):
            from engine.base.errors import UserError

            raise UserError("no transcript file here; give the path of a session's transcript file (.jsonl)",
                            transcript)
        fields["transcript"] = os.path.abspath(os.path.expanduser(transcript))
    event = make(table.get(agent or DEFAULT_AGENT), "prompt", **fields)
    ctx = Context(event, None, turn or 0, profile_ref, hooks, log, chosen)
    given = list(dict.fromkeys(t for t in (relative(t, cwd) for t in touched or ()) if t))
    if transcript:
        ctx.touched_extra = given
    else:
        ctx.touched_override = given
    return ctx


def _cadence(h, registry):
    """When refresh handler `h` runs: its cadences, and the reinjects that run it."""
    cadence = f"every {h.every_turns} prompts" if h.every_turns else "no turn cadence"
    if h.every_tokens:
        cadence += f", every {h.every_tokens} context tokens"
    reinjects = [r.name for r in registry.values() if isinstance(r, Reinject) and h.name in r.spec["handlers"]]
    if reinjects:
        cadence += f"; also run by {', '.join(reinjects)}"
    return cadence


def _show(plan, source, show_text, out, shown):
    """Print a refresh's Plan: its budget, each file in or omitted, the
    scoped and skipped ones (their log lines go in `shown`), and the text
    with its `source` line when `show_text`."""
    text = source + plan.text if plan.text else ""  # as dispatch.merge puts it
    unit = next(k for k in plan.budget if k != "used")
    print(f"   level {plan.level}; budget {plan.budget[unit]} {unit}, used {plan.budget['used']}; "
          f"injection {len(text)} characters", file=out)
    if not plan.items and not plan.omitted:
        print("   no files found: nothing would be injected", file=out)
    rows = [(it, "in") for it in plan.items] + [(it, "OMITTED") for it in plan.omitted]
    for n, (it, status) in enumerate(rows, 1):
        whose = "yours" if it.origin == "user" else "project"
        print(f"   {n:>2}. {status:<7} {whose:<7} priority {it.priority:<3} {it.chars_before:>6} -> {it.chars:>6} chars  "
              f"{one_line(str(it.path))}", file=out)
    for d in plan.scoped:
        print(f"   SCOPED  {d.status:<3} {one_line(str(d.path))}: {d.reason}", file=out)
        shown.add(f"rule file {d.path}: {d.reason}")
    for path, reason in plan.skipped:
        print(f"   SKIPPED {one_line(str(path))}: {reason}", file=out)
        shown.add(f"rule file {path} left out: {reason}")
    if show_text and text:
        print("   ---", file=out)
        print("\n".join("   " + row for row in text.splitlines()), file=out)
