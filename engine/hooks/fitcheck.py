"""Can the active rule set fit one delivery?  `engine validate` and `engine
install` ask, and warn on stderr (never an error: the hooks still deliver
everything, over several events or as a digest, engine/hooks/overflow.py)
naming the files, their sizes after compression and the setting to change:
the refresh handler's budget in the profile.

The set checked is what a refresh in the working folder would deliver now
with no file touched yet (path-scoped rules come later, and alone).
"""

import os


def warnings(profile_ref, cwd=None):
    """One message per refresh handler whose files cannot fit one delivery."""
    from engine.core.profile import load_profile

    from .handlers import Context, build
    from .handlers.refresh import Refresh

    cwd = os.path.abspath(cwd or os.getcwd())
    profile = load_profile(profile_ref, cwd=cwd)
    hooks = profile.hooks
    if not hooks:
        return []
    registry, _ = build(hooks)
    from engine.agents import DEFAULT_AGENT, table
    from engine.agents.event import make

    from .handlers import events_of

    where = {h["name"]: event for event, hs in events_of(hooks).items() for h in hs}
    out = []
    for h in registry.values():
        if not isinstance(h, Refresh):
            continue
        event = make(table.get(DEFAULT_AGENT), "prompt", cwd=cwd, session="fit-check")
        ctx = Context(event, None, 0, profile_ref, hooks, lambda _line: None)
        ctx.touched_override = []
        plan = h.plan(ctx)
        if plan.omitted:
            out.append(_message(h, plan, where.get(h.name, "?"), hooks["max_injection_chars"], profile_ref, cwd))
    return out


def _message(h, plan, event, cap, profile_ref, cwd):
    from .origin import order_key
    from .overflow import shown_path

    unit = next(k for k in plan.budget if k != "used")
    limit = plan.budget[unit]
    rows = sorted(plan.items + plan.omitted, key=order_key)
    total = sum(it.cost if it.cost else it.chars for it in rows)
    never = plan.never
    sizes = ", ".join(f"{shown_path(it.path, cwd)} {it.chars:,} characters" + (" (cannot fit alone)" if it in never else "")
                      for it in rows)
    mode = h.spec.overflow
    after = "delivered at the next events" if mode == "pending" else "named in a digest line"
    prof = profile_ref or "your profile (engine profile show names it)"
    setting = f"hooks.events.{event}[name: {h.name}].budget.{unit} (now {limit:,}) in {prof}"
    if unit == "chars" and total + 2 * len(rows) > cap:
        fix = (f"change {setting}: one injection carries at most hooks.max_injection_chars ({cap:,}), so a budget up "
               f"to that holds more of them; for the rest shorten or remove rules")
    else:
        fix = f"raise {setting} to {total + 2 * len(rows):,}" if unit == "chars" else f"raise {setting} to {total:,}"
    return (f"{h.name}: the active rule set cannot fit one delivery: {len(rows)} file(s), {total:,} {unit} after "
            f"compression, over the budget of {limit:,} {unit}; {len(plan.omitted)} of them are {after} "
            f"(overflow: {mode}). Files: {sizes}. To deliver them at once, {fix}.")
