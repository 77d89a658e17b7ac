"""The growth cadence of a refresh handler with `every_tokens` (rules that
went that far back in the context since they were last in view): whether it
is due, and what to record for the next check.

The rule it keeps: the check is cheap, because it runs on events that
inject nothing (every prompt, and PostToolUse hundreds of times a session):
one stat of the transcript, and its tail only when it grew enough bytes to
hold that many tokens.  So it is a module of its own, apart from what is in
view (inview.py, which reads the transcript's epochs and is imported only
when a refresh plans an injection).  growth_refresh (handlers/growth.py)
asks it from the target's spec, so a PostToolUse that is not due does not
import the refresh handler either."""

import os

from .handlers.part import as_int as _int

# The next due position, the context's tokens at the last check, and the
# transcript's size where the response that reported them begins (hooks/fill.py).
DUE, SEEN, SIZE = "iv_due:", "iv_seen:", "iv_size:"
# A compaction began beside the turn (compaction_ahead): due at the next check.
AHEAD = "iv_ahead:"


def _since(ctx):
    """Where the response whose tokens were read begins in the transcript:
    what was written from there on may be context the figure does not hold."""
    usage = ctx.usage()
    return None if usage is None else usage[2]


def _size(ctx):
    path = ctx.transcript()
    try:
        return os.stat(path).st_size if isinstance(path, str) and path else None
    except (OSError, ValueError):
        return None


def grown(ctx, name, every):
    """The growth cadence of refresh handler `name`: due once a rule may have
    gone `every` tokens of context back since it was last in view, by the
    agent's delivery or the engine's (growth_due); without in_view settings,
    once the context grew `every` tokens since the handler last injected."""
    if ctx.settings.get("in_view"):
        return growth_due(ctx, name, every)
    now = ctx.context_tokens()
    if now is None:
        return False
    last = _int(ctx.snapshot().get(f"tokens_at:{name}", 0))
    return now < last or now - last >= every


def growth_due(ctx, name, every):
    """True when a rule of handler `name` may have gone every_tokens back
    since it was last in view: the next due position recorded by the last
    check is reached, or the context shrank (a compaction), or nothing was
    recorded yet.  Reads one stat, then the transcript's tail only when it
    grew enough bytes to hold that many tokens."""
    snap = ctx.snapshot()
    if snap.get(AHEAD + name):
        return _ahead_of_the_summary(ctx, name)
    due, seen, size_then = snap.get(DUE + name), snap.get(SEEN + name), snap.get(SIZE + name)
    announced = announces_compactions(ctx.agent)
    if not all(isinstance(v, int) for v in (due, seen, size_then)):
        # Nothing recorded yet: what is in view went in at the start at the latest.
        now = ctx.context_tokens()
        if now is not None and not announced:
            _count_from(ctx, name, now, every)  # a base: a later shrink tells a compaction no event announced
        return now is not None and now >= every
    size = _size(ctx)
    if size is None:
        return False
    per = ctx.settings["context"]["growth_bytes_per_token"]
    # The fast path between prompts (PostToolUse, hundreds a session): the
    # transcript only grows, by at least `per` bytes a token of context.
    # Not for an agent that announces no compaction: only the context's
    # figure tells one (a compaction can write few bytes).
    if announced and ctx.name != "prompt" and 0 <= size - size_then < (due - seen) * per:
        return False
    now = ctx.context_tokens()
    if now is None:
        return False
    if now < seen:  # the context shrank (a compaction): count from here
        _count_from(ctx, name, now, now + every)
        # Where no start event followed it (Gemini CLI, Copilot CLI), what
        # it took is put back now, as that start would (inview.narrow).
        ctx.compacted_unannounced = not announced
        return ctx.compacted_unannounced
    if now < due and now > seen and not announced:
        # The highest figure checked is the base of the next shrink: from
        # 1,000 to 30,000, compacted to 2,600, is a shrink only against 30,000.
        _count_from(ctx, name, now, due)
    return now >= due


def compacted_before_this_request(ctx):
    """_compacted_before_this_request, worked out once per event: the rules'
    and the effort policy's handlers both ask at before_model."""
    if ctx.compacted_checked is None:
        ctx.compacted_checked = _compacted_before_this_request(ctx)
    return ctx.compacted_checked


def _compacted_before_this_request(ctx):
    """Is the request about to be sent the first of an epoch a compaction
    began, with no event since it but this one (Gemini CLI compresses before
    a main-loop request whose last response passed its threshold: at a
    prompt's start, after that prompt's BeforeAgent, or before the request
    that sends a tool's result, after its AfterTool; and announces it to no
    hook)?  Then it holds none of what only the engine gave before it.
    Only for an agent that announces no compaction; one read of the line
    heads written since the last response, and the epochs only when one of
    them may begin one.  Sets ctx.compacted_unannounced: what the compaction
    took goes in now (inview.narrow), into this request; the next event
    that adds context to the session sees the shrink and puts it back for
    good (growth_due)."""
    if announces_compactions(ctx.agent):
        return False
    since, path = _since(ctx), ctx.transcript()
    if since is None or not path:
        return False
    from engine.agents.transcripts import compaction_written_after

    bound = ctx.settings["transcript"]["max_tail_bytes"]
    if not compaction_written_after(ctx.agent.data["transcript"]["reader"], path, since, bound):
        return False
    from .inview import ctx_inview

    epoch = ctx_inview(ctx).current
    # an epoch a compaction began (a resume's loads "start"), with no response in it yet
    ctx.compacted_unannounced = epoch.loads == "compact" and epoch.tokens is None
    return ctx.compacted_unannounced


def compaction_ahead(ctx, names):
    """A compaction of an agent that compacts beside the turn (its YAML's
    `transcript.compacts_in_background`: Copilot CLI) begins: its summary
    will take what is in view now, and keep what the turn adds until it
    comes.  The growth cadence of the refreshes `names` is due at the next
    check, which puts back then what the summary will take (inview.narrow)."""
    if ctx.state is not None and compacts_in_background(ctx.agent):
        ctx.state.update({AHEAD + name: 1 for name in names})


def _ahead_of_the_summary(ctx, name):
    ctx.compaction_running = True
    if ctx.state is not None:
        ctx.state.update({AHEAD + name: ""})
    return True


def acts_on_unannounced_compaction(agent, event):
    """Does a handler that acts on a compaction no start event announces
    have work at `event` for `agent`: pre_compact for an agent that compacts
    beside the turn (Copilot CLI), any other event for an agent that sends
    no start after its compaction (Copilot CLI, Gemini CLI)?"""
    if announces_compactions(agent):
        return False
    return event != "pre_compact" or compacts_in_background(agent)


def compacts_in_background(agent):
    return bool(agent.data["transcript"].get("compacts_in_background"))


def announces_compactions(agent):
    """Does the agent send a session start after its compaction (its YAML's
    session_sources name `compact`)?"""
    return "compact" in agent.data["session_sources"].values()


def _count_from(ctx, name, now, due):
    """Record the context's figure `now` and the next due position."""
    if ctx.state is not None:
        ctx.state.update({DUE + name: due, SEEN + name: now, SIZE + name: _since(ctx)})


def growth_marks(ctx, name):
    """State for the next growth check, after a refresh looked at what is in view."""
    due = ctx.in_view_next_due
    now = ctx.context_tokens()
    since = _since(ctx)
    if due is None or now is None or since is None:
        return {}
    return {DUE + name: int(due), SEEN + name: int(now), SIZE + name: int(since)}
