"""What a refresh does with the rule files its budget cannot hold: nothing is
dropped in silence.  The handler's `overflow` key chooses (the default and
its reason are in pipelines/default.yaml):

- `pending`: a delivery opens a *round*.  The files delivered in it are kept
  in the session's state (`round:<handler>`, their paths one a line) and
  `pending:<handler>` stays set while some are left; the next event that
  runs the handler (its own prompt, or the `rules_pending` reinject at the
  next tool call) delivers the next files, in the same (priority, name)
  order, until every file of the round was delivered whole once.  A
  SessionStart (start, resume, clear, compaction) opens a new round: the
  context that held the earlier part is gone.  A file that cannot fit the
  budget (or one event) even alone is never pending (it would wait
  forever): it is named in a digest line once, and is done for the round;
  a cadence does not name one the model has in view in this epoch
  (inview.narrow: ctx.in_view_far; handlers/refresh.py).
  The round keeps files by identity (content digest and real path), so a
  file edited since comes again.  A round with nothing left to deliver
  ends: nothing fires.
- `digest`: each omitted file is named on a line of its own (its title,
  the first heading or else the file name, and how to read it: `Read
  .claude/rules/x.md`), and those lines count against the budget: rules
  leave the delivery, last in order first, until the digest fits too.

Plain string work only (no `re`): this runs in every injecting hook.  A
title passes the redactor through the results cache (a regex only when the
title was never seen).
"""

import os

PENDING, DIGEST = "pending", "digest"


def mode(spec, ctx=None):
    """The handler's `overflow`; at a subagent's start `digest`: the rest of
    a pending round would come at a next event of the main context (pending
    never runs inside a subagent), so the subagent is told where to read it."""
    chosen = spec["overflow"]
    return DIGEST if chosen == PENDING and ctx is not None and ctx.opens_a_subagent else chosen


def round_key(name):
    return f"round:{name}"


def ident(x):
    """One line naming a rule file or Item in a round: content digest and
    real path (a line break in the path is escaped)."""
    real = x.real.replace("\\", "\\\\").replace("\n", "\\n")
    return f"{x.digest}\t{real}"


def delivered_before(ctx, name, spec):
    """Identities (ident) already delivered or named in the round this
    event continues, or an empty set when this event opens a new round."""
    if mode(spec, ctx) != PENDING or ctx.state is None or ctx.name == "session_start":
        return set()
    snap = ctx.snapshot()
    if not snap.get(f"pending:{name}"):
        return set()
    done = snap.get(round_key(name))
    return set(done.split("\n")) if isinstance(done, str) and done else set()


def open_round(ctx, name, spec):
    """At a session start a new round begins, whether or not this event's
    answer has room for its first part: dispatch.merge defers a part that
    does not fit (leaving `pending:<handler>` set, and none of its marks
    written), and the files an earlier round delivered left with the
    context that held them.  Without this, the next event would continue
    the old round and skip them."""
    if mode(spec, ctx) != PENDING or ctx.state is None or ctx.name != "session_start":
        return
    if ctx.snapshot().get(round_key(name)):
        ctx.state.update({round_key(name): ""})


def title(text, name, strip):
    """The file's first markdown heading (after its frontmatter), else its
    name, as one line: its other line breaks (a carriage return, U+2028 ...)
    and runs of blanks are one space, so a project's heading cannot write a
    digest line of its own making ("... Read ~/.ssh/id_rsa]")."""
    from .sources import body

    for line in (body(text) if strip else text).split("\n"):
        s = line.strip()
        if s.startswith("#"):
            t = " ".join(s.lstrip("#").split())
            if t:
                return t
        elif s:
            continue
    return " ".join(name.split())


def shown_path(path, cwd):
    """How the model should name the file to read it: relative to the
    project when inside it, ~/... under the home folder, else absolute."""
    if cwd:
        root = os.path.abspath(cwd) + os.sep
        if path.startswith(root):
            return path[len(root):]
    home = os.path.expanduser("~") + os.sep
    if path.startswith(home):
        return "~/" + path[len(home):]
    return path


def digest_lines(ctx, spec, items, texts, render):
    """One rendered `digest_template` line per item, at most
    hooks.omitted_names_max of them; the rest are counted by the
    handler's omitted_template."""
    limit = ctx.settings["omitted_names_max"]
    strip = spec["strip_frontmatter"]
    cut = spec["digest_title_chars"]
    lines = []
    from engine.core.textcache import redacted

    for it in items[:limit]:
        t = redacted(title(texts.get(it.path, ""), it.name, strip))
        t = t if len(t) <= cut else t[: cut - 1] + "\u2026"
        lines.append(render(spec["digest_template"], name=it.name, title=t,
                            path=shown_path(it.path, ctx.cwd), priority=it.priority, chars=it.chars_before))
    return lines, items[limit:]


def fit_digest(chosen, omitted, limit, used, cost_of):
    """Move rules from the delivery to the digest (last in order first) until
    rules and digest fit the budget together.  (chosen, omitted, used)."""
    chosen, omitted = list(chosen), list(omitted)
    while chosen and used + cost_of(omitted) > limit:
        it = chosen.pop()
        used -= it.cost
        omitted.insert(0, it)
    return chosen, omitted, used


def never_fits(items, limit):
    """Items that cannot fit the budget even alone: pending would keep them waiting forever."""
    return [it for it in items if it.cost > limit]


def marks(name, spec, plan, done):
    """State after a delivery: the round so far (what was delivered, and
    what was named as never fitting: named once), and whether files are left."""
    if mode(spec) != PENDING:
        return {}
    waiting = [it for it in plan.omitted if it not in plan.never]
    if not waiting:
        return {f"pending:{name}": 0, round_key(name): ""}
    lines = sorted(done | {ident(it) for it in plan.items} | {ident(it) for it in plan.never})
    return {f"pending:{name}": 1, round_key(name): "\n".join(lines)}
