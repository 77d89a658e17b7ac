"""What is in view: the rule files the agent and the engine put in the
model's context, per compaction epoch, and how far back (in tokens of
context) each one went in.

The rule it keeps: the engine injects only what the model does not already
have, or has only far back.  The agent's transcript, read through its
reader (engine/agents/transcripts/), says what the agent delivered where it
records it (Claude Code from 2.1.328: `instructions` and `nested_memory`
attachments; Codex: its AGENTS.md message, again after a compaction) and
what hooks added (each delivery carries the engine's own marker:
delivery.py).  Where the transcript says nothing, the agent's YAML stands
in (`instructions`, engine/agents/instructions.py): the files it loads
itself are in view from the start of every epoch it loads them in, a
scoped one once a tool of a kind that loads it touched a matching file.
What the engine delivered is also in the session's state (delivery.py).

The transcript is read backwards, bounded, and only as far as the start of
the epoch before the current one.  Positions are tokens of context per the
latest main-chain usage record before a record; 0 stands for the start of
an epoch (before its first usage record).  An agent that compacts in the
background (Copilot: a CompactionStart record, then the Compaction with
the same id) keeps what the turn added in between behind the summary: it
is in view in the new epoch too, from its start: the transcript shows a
hook's addition there, and the session's state one it cannot show (a
delivery made while a compaction runs is recorded under that compaction's
`kept:` name, which both epochs answer to).  An agent whose resumed runs
leave out some of what hooks added before (Gemini CLI, Copilot CLI: its
YAML's `transcript.resumed`) begins an epoch at a resume too, in which it
has loaded its own files as at a session's start: what the engine gave
before at an event whose additions the resumed run leaves out is then given
again where it is due; what it gave at one whose additions the resumed run
still holds (Copilot's prompt and tool results, Gemini's tool results) is
in view from the resumed epoch's start (its delivery record `stays`).
"""

import os

from . import delivery


class Epoch:
    """One compaction epoch as seen in the transcript."""

    __slots__ = ("id", "ids", "base", "tokens", "agent", "agent_digest", "delivered", "touched", "complete",
                 "instructions", "keeping", "held", "carried", "survives", "loads")

    def __init__(self, epoch_id, after=None, loads=None):
        self.id = epoch_id
        # What the agent loads itself at its start (its YAML's `loads`):
        # "start" for the session's start and a resume, "compact" after a compaction.
        self.loads = loads or ("start" if epoch_id == "start" else "compact")
        # The names the engine may have recorded it under: at SessionStart
        # (compact) the agent may not have written the boundary yet, and the
        # new epoch is then "next:<the one before>" (see read()).
        self.ids = (epoch_id,) if after is None else (epoch_id, "next:" + after)
        self.base = None  # tokens of the epoch's first usage record
        self.tokens = None  # tokens of its last one
        self.agent = {}  # real path -> position: delivered by the agent (its attachments)
        self.agent_digest = {}  # real path -> content digest, where the agent's record holds the raw file
        self.delivered = {}  # delivery id -> position: the engine's marker in a hook_additional_context
        self.touched = []  # (project-relative path, tool name, position), in order
        self.complete = False  # its start was read (not cut by the read bound)
        self.instructions = False  # an `instructions` attachment was seen in it
        # A compaction running in the background at its end (its `kept:`
        # name, also one of `ids`), and the names of what the compaction
        # that started this epoch kept behind its summary: in view from its start.
        self.keeping = None
        self.held = []  # the records since that compaction began: kept after its summary
        self.carried = ()
        # After a resume of an agent that leaves out some of what hooks added
        # (resume_forgets): the names of the epochs before it, whose
        # deliveries made at events the resumed run still holds are in view
        # from its start (delivery.py: `stays`).
        self.survives = ()

    def record_id(self, witnessed):
        """The name a delivery made now is recorded under: while a compaction
        runs in the background, one the transcript cannot show goes under
        the compaction's `kept:` name, so the epoch after it knows it kept it."""
        return self.keeping if self.keeping is not None and not witnessed else self.id

    def resumed_after(self, before):
        """This epoch begins at a resume after `before`: what `before` held
        of the engine's deliveries at kept events stays in view."""
        self.survives = (*before.ids, *before.carried, *((before.keeping,) if before.keeping else ()),
                         *before.survives)
        return self

    def growth(self, position):
        """Tokens of context added since `position` in this epoch."""
        if self.tokens is None:
            return 0
        return max(0, self.tokens - max(position or 0, self.start()))

    def start(self):
        """Tokens at the epoch's start: 0 for the session's first (the rules
        went in before any turn), the first usage record after a compaction
        (the summary and the system prompt are already there)."""
        return self.base if self.base is not None and self.id != "start" else 0


class InView:
    __slots__ = ("agent", "cwd", "version", "known", "attachments", "current", "previous", "index")

    def __init__(self, agent=None, cwd=""):
        self.agent, self.cwd = agent, cwd
        self.index = None  # the agent's instruction files for cwd (instructions.Index), found at the first ask
        self.version = None
        self.known = False  # the transcript is the agent's (it said something): what it does not say is assumed
        self.attachments = False
        self.current = Epoch("start")
        self.previous = None


def version_tuple(text):
    out = []
    for piece in str(text or "").split("."):
        digits = ""
        for ch in piece:
            if not "0" <= ch <= "9":  # ASCII only: int() refuses "²", which isdigit() takes
                break
            digits += ch
        out.append(int(digits) if digits else 0)
    return tuple(out)


def at_least(version, threshold):
    """True when the agent's `version` is `threshold` or later (False when unknown)."""
    return bool(version) and version_tuple(version) >= version_tuple(threshold)


def _real(path):
    try:
        return os.path.realpath(os.path.expanduser(path))
    except (TypeError, ValueError):
        return None


KINDS = ("usage", "compaction", "compaction_start", "delivered", "tool_call", "prompt", "resume")
KEPT = "kept:"  # the state's name of what a delivery made during a background compaction went under


def _tail(agent, path, settings):
    """The main-chain records of the current epoch and the one before, in
    order, and whether the read reached the start of the one before."""
    from engine.agents.transcripts import tail

    conf = settings["in_view"]
    recs, boundaries = [], 0
    bounds = ("compaction", "resume") if resume_forgets(agent) else ("compaction",)
    for rec in tail(agent.data["transcript"]["reader"], path, conf["max_tail_bytes"], KINDS,
                    head_bytes=settings["transcript"]["max_tail_bytes"]):
        if rec.sidechain:
            continue
        recs.append(rec)
        if rec.kind in bounds:
            boundaries += 1
            if boundaries == 2:
                break
    recs.reverse()
    return recs, boundaries < 2


def resume_forgets(agent):
    """Does a resumed run of this agent's sessions leave out some of what
    hooks added before (its YAML's `transcript.resumed`)?"""
    resumed = agent.data["transcript"].get("resumed") or {}
    return any(copies == 0 for copies in resumed.values())


def read(agent, path, cwd, settings, begins=None):
    """The InView of a transcript of `agent`: its current epoch and the one
    before.  `begins` (a session start that begins an epoch: "compact"
    after a compaction, "start" at a resume that does): when the last
    epoch read already holds model turns, the agent has not written that
    record yet, and the current epoch is a new, empty one after it."""
    from engine.agents.version import of_session

    iv = InView(agent, cwd)
    recs, complete = _tail(agent, path, settings)
    marker = settings["in_view"]["delivery_marker"]
    epochs = _epochs(iv, recs, complete, marker)
    if begins == "start" and _only_a_start(epochs):
        from engine.session.locate import written_last_beside

        resumed = written_last_beside(agent, path)
        if resumed is not None:  # the run it resumes: the session's own file beside this one
            recs, complete = _tail(agent, resumed, settings)
            epochs = _epochs(iv, recs, complete, marker)
    if begins == "background":
        _after_the_running_compaction(iv, epochs, marker)
    elif begins and (epochs[-1].tokens is not None or epochs[-1].touched or _a_new_file_at_a_resume(begins, epochs)):
        fresh = Epoch("next:" + epochs[-1].id, loads=begins)
        fresh.complete = True
        if begins == "start":
            fresh.resumed_after(epochs[-1])
        epochs.append(fresh)
    iv.current = epochs[-1]
    iv.previous = epochs[-2] if len(epochs) > 1 else None
    iv.version = of_session(agent, path, environ={})
    # Not the agent's transcript (or not on disk yet): nothing is assumed in
    # view.  An agent that names its version there is known by it; one that
    # does not (Gemini CLI), by its records.
    spec = agent.data.get("version") or {}
    names_it = bool(spec.get("transcript_key") or spec.get("in_transcript"))
    iv.known = bool(iv.version) if names_it else bool(recs)
    if iv.known:
        _documented(iv)
    if not iv.version:  # the transcript does not say (not on disk yet): the agent's hooks' environment may
        from engine.agents.version import from_env

        iv.version = from_env(spec.get("env"))
    return iv


def _only_a_start(epochs):
    """The transcript holds a session's start alone: no model turn, no tool call."""
    return len(epochs) == 1 and epochs[0].tokens is None and not epochs[0].touched


def _a_new_file_at_a_resume(begins, epochs):
    """A resume whose transcript shows only a session's start: the agent
    began a new file and has not written the resumed history there yet
    (Gemini CLI 0.61.0 at times: the resume's SessionStart names a file with
    a header and its context alone).  The resume's epoch comes after it,
    never the start the state recorded for the run before."""
    return begins == "start" and len(epochs) == 1


def _after_the_running_compaction(iv, epochs, marker):
    """A compaction runs beside the turn (cadence.compaction_ahead): the
    current epoch is the one it will begin, holding what the turn added
    since it began (behind its summary), and the agent's own start files
    (loads "compact").  Where the transcript shows it done already, the
    epoch it began is the current one."""
    last = epochs[-1]
    if last.carried and last.keeping is None:
        return
    ahead = Epoch("next:" + last.id, loads="compact")
    ahead.complete = True
    if last.keeping is not None:
        ahead.carried = (last.keeping,)
        for rec in last.held:
            _note(iv, ahead, rec, 0, marker)
    epochs.append(ahead)


def _epochs(iv, recs, complete, marker):
    """The epochs of the records read, oldest first, with what each holds."""
    epochs = [Epoch("start")]
    epochs[0].complete = complete
    position = 0
    kept = None  # (id, [record]) since a compaction started in the background
    forgets = resume_forgets(iv.agent)
    for rec in recs:
        if rec.kind == "resume":
            if forgets:  # named by where its line starts: the transcript is only ever appended to
                new = Epoch(f"r{rec.offset}", after=epochs[-1].id, loads="start").resumed_after(epochs[-1])
                new.complete = True
                epochs.append(new)
                position, kept = 0, None  # a compaction still running ended with the run
        elif rec.kind == "compaction_start":
            kept = (rec.id, [])
            if rec.id:
                epochs[-1].ids += (KEPT + str(rec.id)[:8],)
        elif rec.kind == "compaction":
            new = Epoch(str(rec.id or "")[:8] or f"c{len(epochs)}", after=epochs[-1].id)
            new.complete = True
            epochs.append(new)
            position = 0
            if kept is not None and kept[0] == rec.id:
                new.carried = (KEPT + str(rec.id)[:8],)
                for held in kept[1]:
                    _note(iv, new, held, 0, marker)  # behind the summary: in view from the epoch's start
            kept = None
        elif rec.kind == "usage" and not rec.synthetic:
            position = rec.context
            ep = epochs[-1]
            ep.base = position if ep.base is None else ep.base
            ep.tokens = position
        else:
            _note(iv, epochs[-1], rec, position, marker)
            if kept is not None:
                kept[1].append(rec)
    if kept is not None and kept[0]:  # still running (or cancelled: then nothing carries the name)
        epochs[-1].keeping = KEPT + str(kept[0])[:8]
        epochs[-1].held = kept[1]
    return epochs


def _note(iv, ep, rec, position, marker):
    """What a delivery or a tool call says of what is in view."""
    if rec.kind == "tool_call":
        from .pathscope import relative

        kind = iv.agent.tool_kind(rec.tool)
        if kind in ("read", "write", "search"):
            for field in iv.agent.tools(kind).get("path", ()):
                rel = relative(rec.input.get(field), iv.cwd)
                if rel:
                    ep.touched.append((rel, kind, position))
        return
    if rec.kind != "delivered":
        return
    if rec.how == "hook":
        for text in rec.texts:
            for did in delivery.found_in(text, marker):
                ep.delivered[did] = position
        return
    iv.attachments = True
    if rec.how == "instructions":
        ep.instructions = True
        if not rec.paths:  # the agent's own start files, named by no path (Codex's one message)
            ep.agent[UNSCOPED] = position
    for p in rec.paths:
        real = _real(p)
        if real:
            ep.agent[real] = position
            if rec.how == "scoped":
                _agent_digest(ep, real, rec.texts[0] if rec.texts else None)


def _agent_digest(ep, real, raw):
    """The digest of the file as the agent delivered it, when its record holds
    the raw text (Claude Code's nested_memory since 2.1.328): a rule edited
    since is not in view as it is now."""
    if isinstance(raw, str):
        from engine.base.digest import sha256

        ep.agent_digest[real] = sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    else:
        ep.agent_digest.pop(real, None)


def _documented(iv):
    """The documented behaviour where the transcript does not (yet) say:
    the files the agent loads itself (its YAML's instructions) are in view
    from each epoch's start (`UNSCOPED` at position 0).  An agent that
    records its instructions does so only after the epoch's first prompt,
    so an epoch without that record is taken the same way."""
    for ep in (iv.previous, iv.current):
        if ep is not None and not ep.instructions:
            ep.agent[UNSCOPED] = 0


UNSCOPED = "<the agent's own unscoped instruction files>"


def witnesses(iv):
    """Does this agent's transcript record every hook delivery, at its
    version (`transcript.witness_since` of its YAML; "0" for always)?"""
    since = iv.agent.data["transcript"].get("witness_since")
    if not since:
        return False
    return since == "0" or at_least(iv.version, since)


class Seen:
    """When a rule file was last in view in one epoch, from every source."""

    def __init__(self, iv, epoch, snapshot, conf, scope_key, limit):
        self.iv, self.epoch, self.conf = iv, epoch, conf
        others = [e for e in (iv.previous, iv.current) if e is not None and e is not epoch]
        self.engine = delivery.positions(snapshot, epoch, others, witnesses(iv)) if epoch is not None else {}
        self.scope_key, self.limit = scope_key, limit

    def position(self, rf, globs):
        """The latest position `rf` was in view in the epoch, or None."""
        ep = self.epoch
        if ep is None:
            return None
        real = getattr(rf, "real", None) or _real(rf.path)
        found = []
        # the agent's record of another content: what it delivered then is not this file now
        stale = ep.agent[real] if real in ep.agent and ep.agent_digest.get(real, rf.digest) != rf.digest else None
        if real in ep.agent and stale is None:
            found.append(ep.agent[real])
        ident = delivery.identity(rf)
        if ident in self.engine:
            found.append(self.engine[ident])
        entry = _entry(self.iv, real)
        if globs is None and UNSCOPED in ep.agent and _agent_loads(self.iv, ep, entry, real):
            found.append(ep.agent[UNSCOPED])
        # A scoped rule is in view from the touch of a matching file by a
        # tool of a kind that loads it: the agent's own record of it comes
        # only after the tool's post_tool, and older agents write none.
        if globs is not None and self.iv.known and entry is not None:
            found.extend(self._touched(ep, entry, rf, globs, stale))
        return max(found) if found else None

    def _touched(self, ep, entry, rf, globs, stale):
        from engine.agents.instructions import scoped_load_kinds

        from .pathscope import matched, seen_from

        kinds = set(scoped_load_kinds(entry, self.iv.version))
        loaded = [t for t in ep.touched if t[1] in kinds and (stale is None or t[2] > stale)]
        for rel, _kind, pos in reversed(loaded):
            if matched(globs, seen_from(rf, [rel], self.iv.cwd), self.limit, rf):
                return [pos]
        return []


def _entry(iv, real):
    """The agent's instruction entry for the file at `real`, or None (not its own)."""
    if iv.agent is None or not real:
        return None
    if iv.index is None:
        from engine.agents.instructions import Index

        iv.index = Index(iv.agent, iv.cwd)
    return iv.index.entry_of(real)


def _agent_loads(iv, ep, entry, real):
    """True when the agent loads this unscoped file (at real path `real`)
    itself, whole, at the epoch's start (the session's start, or after a
    compaction)."""
    from engine.agents.instructions import loads_itself

    return loads_itself(iv.agent, entry, iv.version, iv.cwd, ep.loads, real)


def _agent_cuts(iv, entry, real):
    """True when the agent loads this file itself but cuts it (its YAML's
    `max_bytes`): what it reloads after a compaction lacks the file's end."""
    from engine.agents.instructions import cut

    return iv.agent is not None and cut(iv.agent, entry, real, iv.cwd)


def globs_of(rf, key):
    from .pathscope import scope_for

    return scope_for(rf, key).globs


def narrow(ctx, spec, files):
    """The rule files a refresh should deliver at this event, given what is
    in view (hooks.in_view).  Unchanged without the in_view settings or a
    transcript.  Modes:
    - after a compaction (SessionStart `compact`): the path-scoped rules in
      view, or matched by the files touched, in the epoch before it; the
      unscoped ones only with in_view.after_compact_unscoped;
    - PreToolUse delivery of a scoped rule (ctx.scoped_for: a path): the
      scoped rules matching it;
    - otherwise (a cadence): with every_tokens, the rules not in view in
      this epoch or in view at least every_tokens tokens back.
    In every mode, nothing already in view in this epoch (within
    every_tokens when that is set) is delivered again; a cadence notes in
    ctx.in_view_far the files it passes on though in view (that far back):
    one that cannot fit is not named to be read again."""
    conf = ctx.settings.get("in_view")
    if ctx.scoped_for is not None:  # before a write: only the rules covering it, known or not
        files = _covering(files, spec, ctx.scoped_for, ctx.cwd)
    starting = (ctx.name == "session_start" and not _compacting(ctx)) or ctx.opens_a_subagent
    if not conf or not files or not (ctx.transcript() or starting):
        return files
    far = spec["every_tokens"]
    if ctx.opens_a_subagent:
        return _held_back(ctx, files, _not_in_view(ctx, _a_subagents(ctx), conf, spec, files, far, snap={}))
    iv = ctx_inview(ctx)
    if not iv.known and starting:
        # A session starting (its transcript not on disk yet): the agent is
        # loading its own files now; only what it lacks goes in.
        iv.known = True
        _documented(iv)
    if not iv.known:
        return _nothing_known(ctx, iv, files, far)
    return _held_back(ctx, files, _not_in_view(ctx, iv, conf, spec, files, far))


def _held_back(ctx, files, out):
    """`out`, the files of `files` to deliver; what is left out is what the
    model has already (engine replay counts it)."""
    if files and not out:
        ctx.in_view_skipped = len(files)
    kept = {id(rf) for rf in out}
    ctx.in_view_held = [rf for rf in files if id(rf) not in kept]
    return out


def _a_subagents(ctx):
    """What is in view in a subagent's context at its start: the files the
    agent loads itself, as at a session's start (measured: Claude Code's and
    Copilot's subagents hold them), and nothing the main context holds."""
    iv = InView(ctx.agent, ctx.cwd)
    iv.version = agent_version(ctx)
    iv.known = True
    _documented(iv)
    return iv


def _covering(files, spec, path, cwd):
    """The path-scoped rules whose globs match `path`: a delivery before a
    write (ctx.scoped_for) holds only those, also when the transcript says
    nothing yet (a session's first tool call)."""
    from .pathscope import matched, seen_from

    key, limit = spec["scope"]["key"], spec["scope"]["max_brace_expansions"]
    out = []
    for rf in files:
        globs = globs_of(rf, key)
        if globs is not None and matched(globs, seen_from(rf, [path], cwd), limit, rf):
            out.append(rf)
    return out


def _nothing_known(ctx, iv, files, far):
    """No agent's transcript to read (missing, empty, or not the agent's):
    nothing is known to be in view but what the session's state says the
    engine delivered in it, which is held back at the session's first
    prompt and before a write; the growth counts from this delivery."""
    if (ctx.name == "prompt" and ctx.turn == 1) or ctx.scoped_for is not None:
        files = _held_by_the_state(ctx, iv, files)
    if far and not _compacting(ctx) and ctx.scoped_for is None:
        ctx.in_view_next_due = (iv.current.tokens or 0) + far
    return files


def _not_in_view(ctx, iv, conf, spec, files, far, snap=None):
    """The files of `files` to deliver in the event's mode (narrow), in order;
    with a growth cadence, ctx.in_view_next_due is when the next is due.
    `snap`: the state whose deliveries count (the session's by default)."""
    key = spec["scope"]["key"]
    limit = spec["scope"]["max_brace_expansions"]
    snap = ctx.snapshot() if snap is None else snap
    now = Seen(iv, iv.current, snap, conf, key, limit)
    compact = _compacting(ctx) or ctx.compacted_unannounced or ctx.compaction_running
    scoped_for = ctx.scoped_for
    out, next_due = [], []
    for rf in files:
        globs = globs_of(rf, key)
        pos = now.position(rf, globs)
        if compact:
            keep = _back_after_compaction(iv, rf, globs, pos, snap, conf, key, limit, now.engine)
        elif scoped_for is not None:
            keep = _scoped_for(rf, globs, pos, scoped_for, ctx.cwd, limit)
        else:
            keep = _due_by_growth(iv, pos, far, next_due)
            if keep and pos is not None:  # in view in this epoch, that far back (refresh: named only if lost)
                ctx.in_view_far.add(delivery.identity(rf))
        if keep:
            out.append(rf)
    if far and not compact and scoped_for is None:
        ctx.in_view_next_due = min(next_due) if next_due else None
    return out


def _scoped_for(rf, globs, pos, path, cwd, limit):
    """Does a PreToolUse on `path` deliver this rule?  A scoped one matching
    it, not in view."""
    if globs is None or pos is not None:
        return False
    from .pathscope import matched, seen_from

    return matched(globs, seen_from(rf, [path], cwd), limit, rf)


def _due_by_growth(iv, pos, far, next_due):
    """Is this rule due (a cadence)?  Not in view in this epoch, or (with
    every_tokens `far`) in view at least `far` tokens back; `next_due` gets
    the tokens of context at which it is due next."""
    if not far or pos is None or iv.current.growth(pos) >= far:
        next_due.append((iv.current.tokens or 0) + far)
        return True
    next_due.append(max(pos, iv.current.start()) + far)
    return False


def _held_by_the_state(ctx, iv, files):
    """`files` but those the session's state says the engine delivered in
    this epoch, when the transcript is not on disk yet (the state's record
    is all there is).  At the session's first prompt (Claude Code writes
    its transcript after this hook): what the session's start delivered goes
    to the model in the same first request.  Before a write: a scoped rule
    an earlier write brought is in view (Copilot writes its events on a
    timer, so its second tool call can come before its first record)."""
    started = delivery.positions(ctx.snapshot(), iv.current, [], False)
    held = [rf for rf in files if delivery.identity(rf) in started]
    if not held:
        return files
    ctx.in_view_held = held
    out = [rf for rf in files if delivery.identity(rf) not in started]
    if not out:
        ctx.in_view_skipped = len(files)
    return out


def _back_after_compaction(iv, rf, globs, pos, snap, conf, key, limit, engine_now):
    """Does `rf` come back right after a compaction?  A scoped rule that was
    in view before it and is not now; an unscoped one the agent does not
    reload itself that was in view before it (the engine's delivery is gone
    with the compacted context); one it reloads only with
    in_view.after_compact_unscoped (once per epoch)."""
    if globs is not None:
        return pos is None and _before(iv, rf, globs, snap, conf, key, limit)
    entry = _entry(iv, rf.real)
    if _agent_loads(iv, iv.current, entry, rf.real):
        return bool(conf["after_compact_unscoped"]) and delivery.identity(rf) not in engine_now
    if _agent_cuts(iv, entry, rf.real):  # it reloaded the file's start only: the rest is gone again
        return delivery.identity(rf) not in engine_now
    if pos is not None:
        return False
    prev = iv.previous
    return prev is not None and Seen(iv, prev, snap, conf, key, limit).position(rf, None) is not None


def _compacting(ctx):
    return ctx.name == "session_start" and ctx.event.source == "compact"


def _begins(ctx):
    """What an event begins: "compact" (a session start after a compaction),
    "start" (a resume of an agent that leaves out what hooks added before),
    "background" (a tool call while a compaction runs beside the turn: the
    epoch it will begin), or None (no epoch of its own)."""
    if ctx.compaction_running:
        return "background"
    if _compacting(ctx):
        return "compact"
    if ctx.name == "session_start" and ctx.event.source == "resume" and resume_forgets(ctx.agent):
        return "start"
    return None


def _before(iv, rf, globs, snap, conf, key, limit):
    """True when a scoped rule was in view in the epoch before this one
    (delivered by anyone, or matched by a file touched there); when that
    epoch was not read, the session's touched files decided (path_scope)."""
    prev = iv.previous
    if prev is None:
        return True
    if Seen(iv, prev, snap, conf, key, limit).position(rf, globs) is not None:
        return True
    from .pathscope import matched, seen_from

    return any(matched(globs, seen_from(rf, [rel], iv.cwd), limit, rf) for rel, _t, _p in prev.touched)


def ctx_inview(ctx):
    """The event's InView, read once per event."""
    iv = ctx._inview
    if iv is None:
        iv = read(ctx.agent, ctx.transcript(), ctx.cwd, ctx.settings, _begins(ctx))
        ctx._inview = iv
    return iv


def delivered_marks(ctx, items, delivery_id):
    """The state record of delivery `delivery_id`: these items went in view
    now, in this epoch (delivery.py).  None for a delivery that reaches one
    request only (Gemini's BeforeModel): it is in view nowhere after it."""
    conf = ctx.settings.get("in_view")
    if not conf or not items or not delivery_id or not ctx.transcript() or ctx.agent.context_for_one_request(ctx.name):
        return {}
    iv = ctx_inview(ctx)
    position = 0 if _begins(ctx) else (iv.current.tokens or 0)
    read = [e for e in (iv.previous, iv.current) if e is not None]
    out = delivery.forgotten(ctx.snapshot(), read) if iv.known else {}
    unwitnessed = ctx.agent.data["transcript"]["unwitnessed"]
    witnessed = ctx.name not in unwitnessed
    out[delivery.KEY + delivery_id] = delivery.record(iv.current.record_id(witnessed), position, items, witnessed,
                                                      _stays(ctx))
    return out


def _stays(ctx):
    """Does a resumed run of this agent still hold what a hook adds at this
    event (its YAML's `transcript.resumed`: an event not named, once)?
    Only said where some other event's additions are left out, of the main
    context's events whose additions the agent shows there and then (one
    carried to a later event, as Gemini's BeforeTool context, may land at
    one a resume leaves out)."""
    agent = ctx.agent
    if ctx.opens_a_subagent or not resume_forgets(agent):
        return False
    context = agent.data["answers"].get("context") or {}
    if ctx.name not in context.get("events", ()) or ctx.name in context.get("carry_from", ()):
        return False
    return resumed_copies(agent, ctx.name) > 0


def resumed_copies(agent, kind):
    """How many times a resumed run of this agent's sessions holds what an
    event of neutral `kind` added before the resume (its YAML's
    `transcript.resumed`; an event not named: once)."""
    return (agent.data["transcript"].get("resumed") or {}).get(kind, 1)


def agent_version(ctx):
    """The agent's version (engine/agents/version.py): the transcript's
    (already read with the event's InView, if it was), else the variable the
    agent sets in its hooks' environment: at a session's first tool call
    the transcript may not be on disk yet."""
    iv = ctx._inview
    if iv is not None and iv.version:
        return iv.version
    from engine.agents.version import of_session

    return of_session(ctx.agent, ctx.transcript())


def loads_scoped_on_write(ctx):
    """Does the agent load, on a write, the scoped rules of its own folders?
    (Every rule folder of its YAML that is scoped says when it starts to.)"""
    from engine.agents.instructions import scoped_load_kinds

    version = agent_version(ctx)
    scoped = [e for e in ctx.agent.data.get("instructions", ()) if e.get("scope_key")]
    return bool(scoped) and all("write" in scoped_load_kinds(e, version) for e in scoped)
