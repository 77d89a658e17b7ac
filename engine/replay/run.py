"""`engine replay`'s work: recorded sessions of any agent sent through a
profile's hooks, offline, and what the hooks would have done, counted and
priced.

Each transcript is read by its agent's reader (engine/session/agent.py: the
agent named, else the one its lines show) and runs in a throwaway world
(world.py): its events (events.py, neutral; payload.py writes each as the
agent would have sent it) are answered in this process by the hooks' own
dispatcher (`ask_hooks`, the one call into engine/hooks), each one seeing
the transcript as it stood then (the prefix grows by appends, never
rewritten: a 4 MB session stays linear).  Nothing is executed: the hooks
only answer; a tool call's rewrite is an answer, not a run, and the content
cache only stores.

What is counted, from every answer and the handler that gave each part
(answer.py):
- injections (added context, at the events where the agent reads it) by
  handler and kind: count, characters, tokens;
- already in view: the rule files a refresh held back because the model
  had them in view already (engine/hooks/inview.py: delivered by the agent
  or the engine in this compaction epoch, and not far back), each counted
  once per epoch as the raw file's tokens, priced as an injection would
  have been;
- kept out: a shell output the content cache replaced, the original minus
  the stub the model reads (bytes, tokens);
- warnings (shown to the user) and compaction instructions;
- the net effect in tokens and priced (pricing.py); a session whose model
  has no price is said so and not priced (its costs are null).
Tokens: tiktoken o200k_base (engine.text.tokens), a stand-in for the
provider's own tokenizer.
"""

import os

from .answer import Session as Tally

TOKENIZER = "o200k_base"


class _Log:
    """The hooks' log for a replay: lines kept in memory, not written."""

    def __init__(self):
        self.lines = []
        self.event = ""
        self.max_bytes = None

    def __call__(self, message):
        self.lines.append(f"{self.event or '?'}: {message}")


class _Counter:
    """Token counts, each distinct text counted once."""

    def __init__(self):
        self.seen = {}

    def __call__(self, text):
        if not text:
            return 0
        n = self.seen.get(text)
        if n is None:
            from engine.text.tokens import count

            n = self.seen[text] = count(text, TOKENIZER)
        return n


def _settings(profile_ref, project):
    """The profile's hooks settings, with what could reach the user's things
    pointed into the world: the tool memory in the world's state, no Redis."""
    import copy

    from engine.hooks.dispatch import settings_for

    hooks = copy.deepcopy(settings_for(profile_ref, project))
    hooks.setdefault("memory", {})["path"] = "{state}/tool-memory.ndjson"
    hooks.setdefault("state", {})["redis_url"] = ""
    return hooks


def ask_hooks(agent, event_name, payload, profile_ref, log, hooks):
    """The hooks' merged answer to one event of `agent` (its name for the
    event, its payload), as a list holding the answer with its `origins`
    (which handler gave which neutral field), or empty.  The one call into
    the hooks: a hook would log an internal error and print nothing."""
    from engine.agents.event import Event
    from engine.hooks.deadline import restart
    from engine.hooks.dispatch import handle

    trace = []
    before = restart()  # the event's time bounds (rule compression's share) count from its own start
    try:
        handle(Event(agent, payload, agent_event=event_name), profile_ref, log, hooks, None, trace=trace)
    except Exception as exc:  # noqa: BLE001 - the hook would log it and print nothing
        log(f"internal error: {type(exc).__name__}: {exc}")
    finally:
        restart(before)
    return trace


def _rates(pricing, timeline):
    """(rates, note): the family of the session's model, its cache writes at
    the lifetime the session used; None and why for a model with no price."""
    from .pricing import family, session_rates

    model = timeline.model
    if model is None:
        return family(pricing, model, none_ok=True), None
    rates = family(pricing, model)
    if rates is None:
        return None, (f"model {model} has no price in {pricing['file']}: its costs are not given "
                      "(add a family whose pattern names it)")
    return session_rates(rates, timeline)


def _rates_of(pricing, timeline):
    """rates_of(model) for a session's calls: the family of each model its
    calls name (a plugin's command on another model, a /model switch),
    with the session's cache lifetime; None for a model no family prices
    (its calls are priced at the session's rates)."""
    from .pricing import family, session_rates

    known = {}

    def rates_of(model):
        if model not in known:
            fam = family(pricing, model) if model else None
            known[model] = session_rates(fam, timeline)[0] if fam is not None else None
        return known[model]

    return rates_of


def replay_one(path, world, profile_ref, pricing, count, progress=None, project=None, agent=None):
    """The figures of one transcript (see the module doc)."""
    from engine.core.transcript import copy_range
    from engine.session.agent import for_transcript

    from .events import neutral_events, starts_subagent
    from .payload import build
    from .pricing import Timeline

    agent = for_transcript(path, agent, strict=True)
    reader = agent.data["transcript"]["reader"]
    size = os.path.getsize(path)
    # one bounded line at a time: the file is never held whole
    spec = agent.data["transcript"]
    timeline = Timeline(path, reader, spec.get("resumed"), spec["summary_requests"])
    rates, unpriced = _rates(pricing, timeline)
    project = project or world.project
    session = session_name(path, size)
    tpath = os.path.join(world.fresh(agent), f"{session}.jsonl")
    hooks = _settings(profile_ref, project)
    world.bring_named(hooks)
    log = _Log()
    tally = Tally(agent, hooks, timeline, rates, pricing["per_tokens"], count, _rates_of(pricing, timeline))
    skipped = []  # lines too long to hold: copied through, no event
    written = 0
    with open(tpath, "wb") as out, open(path, "rb") as src:
        for event, offset in neutral_events(path, reader, project, session, tpath, skipped, starts_subagent(agent)):
            built = build(agent, event)
            if built is None:
                continue
            written = _grow(out, src, written, offset, copy_range)
            log.event = built[0]
            trace = ask_hooks(agent, built[0], built[1], profile_ref, log, hooks)
            if progress is not None:
                progress(offset)
            tally.answer(event, built, trace, offset)
    result = {"transcript": str(path), "agent": agent.name, "bytes": size, "events": tally.events,
              "api_calls": len(timeline.calls), "compactions": len(timeline.boundaries), "model": timeline.model,
              "rates": {k: rates.get(k) for k in ("name", "input", "cache_write", "cache_read", "output", "cache_ttl")}
              if rates else None,
              **tally.figures(),
              "problems": ([unpriced] if unpriced else []) + _subagent(timeline) + _long_lines(skipped)
              + [l for l in log.lines if "failed" in l or "internal error" in l]}
    return result


def _subagent(timeline):
    """A note for a subagent's own file: its API calls are all a side chain's,
    so none is priced, and its events were its parent session's."""
    if timeline.calls or not timeline.side_calls:
        return []
    return [f"a subagent's transcript ({len(timeline.side_calls)} API call(s), all of a side chain): its API calls "
            "are not priced here and its events were its parent session's; replay the parent session's file"]


def session_name(path, size):
    """The replayed session's id: the same for the same file in every
    process and run (hash() of a str is salted per process), so a replay's
    state, records and figures repeat."""
    from engine.core.cache import sha256

    return "replay-" + sha256(f"{os.path.abspath(path)}\0{size}".encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _grow(out, src, written, offset, copy_range):
    """The replayed transcript grown (or, never expected, cut) to `offset` bytes."""
    if offset > written:
        copy_range(src, out, written, offset)  # the prefix the event saw, in pieces
        out.flush()
    elif offset < written:  # events.py never goes back; kept right if it did
        out.truncate(offset)
        out.seek(offset)
    return offset


def _long_lines(skipped):
    """The lines replay could not hold, each said once."""
    from engine.core.settings import transcript_bounds

    limit = transcript_bounds()["max_line_bytes"]
    return [f"line {n}: {size:,} bytes, over transcripts.max_line_bytes ({limit:,}): not replayed (no event)"
            for n, size in skipped]


TOTAL_KEYS = {"injected": ("count", "chars", "tokens", "cache_writes", "cache_read_tokens", "cost"),
              "already_in_view": ("count", "chars", "tokens", "cost"),
              "to_subagents": ("count", "chars", "tokens", "cost"),
              "kept_out": ("count", "bytes", "tokens", "original_bytes", "stub_bytes", "cache_writes",
                           "cache_read_tokens", "cost"),
              "warnings": ("count", "chars"), "compaction_instructions": ("count", "chars"),
              "net": ("tokens", "cache_write_tokens", "cache_read_tokens", "cost")}


def _sum(values):
    """A total of the priced values (a session with no price adds nothing)."""
    return sum(v for v in values if v is not None)


def totals(sessions):
    """The sums over every session, by kind of injection too; `unpriced`:
    the sessions whose model has no price (their costs are in no total)."""
    out = {k: {f: _sum(s[k][f] for s in sessions) for f in fields} for k, fields in TOTAL_KEYS.items()}
    out["by_kind"] = {}
    for s in sessions:
        for b in s["by_handler"].values():
            t = out["by_kind"].setdefault(b["kind"], {"count": 0, "chars": 0, "tokens": 0, "cost": 0.0})
            for f in t:
                t[f] += b[f] or 0
    out["unpriced"] = [s["transcript"] for s in sessions if s["rates"] is None]
    return out


def replay(transcripts, profile=None, progress=None, pricing=None, project=None, agent=None):
    """The replay of each transcript through the profile's hooks, and the
    totals.  `profile`: a name or path (default: the profile the hook would
    choose here); `pricing`: a pricing document's path (default: the
    built-in); `progress(done_bytes, total_bytes, transcript)`; `project`:
    the folder the events run in (default: an empty one in the world);
    `agent`: the agent whose transcripts they are (default: each file's own,
    by its lines)."""
    from engine.base.refs import is_path
    from engine.core.documents import Library
    from engine.core.profile import choice

    from . import pricing as pricing_module
    from .world import World

    # chosen here, before the world replaces HOME; a built-in one by its name,
    # which means the same file in the world (and keys the same compiled entries)
    chosen = choice(profile)
    shown = str(Library().locate(chosen.ref, "profile", chosen.base))
    profile_ref = shown if is_path(chosen.ref) else chosen.ref
    project = _project_folder(project)
    if agent is not None:
        from engine.session.agent import named

        agent = named(agent)
    total = sum(os.path.getsize(p) for p in transcripts)
    done = 0
    count = _Counter()
    sessions = []
    with World() as world:
        rates = pricing_module.load(pricing)  # in the world: reading YAML writes no copy of the settings into yours
        world.bring_compiled(profile_ref)
        for path in transcripts:
            tick = None if progress is None else _ticker(progress, done, total, str(path))
            sessions.append(replay_one(path, world, profile_ref, rates, count, tick, project, agent))
            done += os.path.getsize(path)
        notes = list(world.notes)
    return {"profile": shown, "pricing": {"file": rates["file"], "currency": rates["currency"],
                                                 "per_tokens": rates["per_tokens"]},
            "tokenizer": TOKENIZER, "sessions": sessions, "totals": totals(sessions), "notes": notes}


def _project_folder(project):
    """`project` made absolute, or None; one that is no folder is refused (a
    mistyped path replayed every session in an empty folder, exit 0)."""
    if not project:
        return None
    if not os.path.isdir(project):
        from engine.base.errors import UserError

        what = "this is a file, not a folder" if os.path.exists(project) else "no such folder"
        raise UserError(f"{what}; --project names the folder the sessions ran in (or leave it out: an empty one)", project)
    return os.path.abspath(project)


def _ticker(progress, base, total, name):
    """progress(bytes done of all transcripts, total, this transcript's name)."""
    return lambda offset: progress(base + offset, total, name)
