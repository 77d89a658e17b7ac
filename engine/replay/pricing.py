"""The priced effect of what a replay added to a session and kept out of it,
under prompt caching.

The rule kept (issue 17): an addition that enters the context before API
call i of the main chain is written to the prompt cache once, by call i,
and read back by every later call of the same compaction epoch (a
compaction replaces the context: what came before is not read again), and
once more by the compaction's own request where no usage record shows
it (Claude Code, measured with 2.1.330's /compact: the whole history, the
engine's additions in it, with the cache breakpoints of the turn's
requests; Copilot CLI 1.0.102: the history as it stood when its background
compaction started; Codex records that request as a call; Gemini CLI
0.61.0 sends two that the chat file records neither of, the first with a
system instruction of its own, so it reads nothing the main loop wrote
and writes the addition again, the second repeating it, so it reads it:
the agent's transcript.summary_requests); an addition no call of its
epoch sent is written by that request.  A kept-out output counts the
same way, as a saving.  An addition after the last call of its epoch is
never sent and costs nothing.  An agent that compacts in the background (Copilot: its reader's
CompactionStart record) summarizes the history as it stood when the
compaction started and keeps what was added after that behind the
summary: such an addition is written again by the first call of the next
epoch and read by the rest of it.  So is one made in the newest turns a
compaction keeps after its summary (Gemini CLI 0.61.0, measured: the
Compaction record's `kept_prompts`, how many prompts those turns hold).

The rates (a `kind: pricing` document, pipelines/reports/pricing.yaml by
default) are per token kind and model family; the family is the one whose
pattern the transcript's main model matches first, else the document's
`default` when it names one; a model no family prices has no rates (the
replay says so and gives no cost: never a silent 0).  Each call writes
and reads at its own model's rates (Timeline.split), where a family
prices that model; the main model's otherwise.  A cache write costs
what the session's own writes cost: a family's `cache_write_1h` where the
transcript's usage shows its cache writes were mostly 1-hour ones
(Claude Code records the split), else its `cache_write`.
"""

import re

BUILTIN = ("pipelines", "reports", "pricing.yaml")
KINDS = ("input", "cache_write", "cache_read", "output")


def builtin_path():
    import os

    from engine.base.paths import builtin_root_str

    return os.path.join(builtin_root_str(), *BUILTIN)


def problems(doc):
    """Semantic problems of a schema-valid pricing document."""
    from engine.core.patterncheck import re_pattern_problems

    out, names = [], set()
    for i, fam in enumerate(doc.data["families"]):
        out.extend(re_pattern_problems(doc, fam["pattern"], ("families", i, "pattern")))
        if fam["name"] in names:
            out.append(doc.error(f"family {fam['name']!r} is listed twice; give each family one entry",
                                 ("families", i, "name")))
        names.add(fam["name"])
    if "default" in doc.data and doc.data["default"] not in names:
        out.append(doc.error(f"default names no family; use one of {', '.join(sorted(names))}", ("default",)))
    return out


def load(path=None):
    """The pricing document's data, checked (UserError when not usable)."""
    from engine.core.schema import load_checked

    doc = load_checked(path, builtin_path(), "pricing", problems)
    data = dict(doc.data)
    data["file"] = str(doc.file)
    return data


# The rates of a session with no API call: nothing was sent, nothing costs.
NO_CALLS = {"name": "none (no API call)", "pattern": "", "input": 0.0, "cache_write": 0.0, "cache_read": 0.0,
            "output": 0.0}


def family(pricing, model, none_ok=False):
    """The rates entry for a model id: the first family whose pattern it
    matches, else the default family, else None.  `none_ok`: no model at
    all (a session with no API call) has the rates of nothing."""
    if model is None and none_ok:
        return NO_CALLS
    for fam in pricing["families"]:
        if model and re.search(fam["pattern"], model):
            return fam
    return next((f for f in pricing["families"] if f["name"] == pricing.get("default")), None)


def session_rates(fam, timeline):
    """(rates, note) of a session priced with family `fam`: its cache writes
    at the 1-hour rate where the session wrote 1-hour entries (`cache_ttl`
    says which), with a note when the family gives no such rate."""
    if fam is None or timeline.cache_ttl() != "1h":
        return fam, None
    if "cache_write_1h" not in fam:
        return dict(fam, cache_ttl="1h"), (f"the session's cache writes are 1-hour ones and family {fam['name']} "
                                           "gives no cache_write_1h: they are priced at its cache_write")
    return dict(fam, cache_write=fam["cache_write_1h"], cache_ttl="1h"), None


def _summary_requests(reader):
    """transcript.summary_requests of the agent whose transcripts `reader` reads."""
    from engine.agents.table import agents

    for data in agents().values():
        spec = data.get("transcript") or {}
        if spec.get("reader") == reader:
            return tuple(spec["summary_requests"])
    return ()


def _response(rec, start):
    """What names a usage record's response: its id, else the line it starts
    (a response is recorded on several lines sharing its id)."""
    return rec.response if isinstance(rec.response, str) else ("line", start)


class Timeline:
    """The main chain's API calls of a transcript: where each one stands (the
    end of its first line, byte offset) and its compaction epoch; the
    compactions' start offsets; the model seen most.  Read by the agent's
    transcript reader (`reader`), one bounded line at a time: a line too
    long to hold is no call.  A call is a response's usage, once however
    often it is recorded; one the agent wrote itself (an API error's) is
    none.  Where the agent writes a response's usage after its output
    (the reader's USAGE_AFTER_OUTPUT: Codex), the call stands at the start
    of its first tool call's line: the request was sent before the tool
    call existed, so what a hook adds at that call is not in it."""

    def __init__(self, path, reader="claude", resumed=None, summary_requests=None):
        from engine.agents.transcripts import reader as reader_module
        from engine.agents.transcripts import spans

        self._usage_after = reader_module(reader).USAGE_AFTER_OUTPUT
        # the agent's transcript.summary_requests; None: those of the agent the reader is for
        self._summary_requests = _summary_requests(reader) if summary_requests is None else tuple(summary_requests)
        self._resumed = resumed  # the agent's transcript.resumed: {neutral event: copies}, None: all once
        self.resumes = []      # start offsets of the lines where the session was resumed
        self._began = None     # the start of the line of the first tool call awaiting its response's usage
        self.calls = []        # [(where the call stands, epoch)]
        self.cache_reads = []  # per call: the tokens its usage says it read from the prompt cache
        self.call_models = []  # per call: the model that answered it (None: not named)
        self.boundaries = []   # start offsets of compaction lines
        self.kept_since = []   # per compaction: the start offset of the line where it started in the
        #                        background (what came after is kept behind its summary), or of the
        #                        prompt whose turns it keeps after its summary (Gemini), else None
        self._prompts = []     # start offsets of the prompts' lines
        self._start = None     # (id, start offset) of the latest CompactionStart line
        self.models = {}
        self.seen = set()
        self._model = None     # the latest model a Window record named
        self.side_calls = set()  # responses of a side chain (a subagent's), by id
        self.writes = {"1h": 0, "other": 0}  # cache-write tokens of the main chain's calls, by lifetime
        with open(path, "rb") as fh:
            for start, end, recs in spans(reader, fh):
                for rec in recs or ():
                    if not rec.sidechain:
                        self._record(rec, start, end)
                    elif rec.kind == "usage" and not rec.synthetic:
                        self.side_calls.add(_response(rec, start))
        self.model = max(self.models, key=self.models.get) if self.models else None

    def _record(self, rec, start, end):
        if rec.kind == "resume":
            self.resumes.append(start)
        elif rec.kind == "compaction_start":
            self._start = (rec.id, start)  # one at a time: a later start replaces one that never completed
        elif rec.kind == "compaction":
            began, self._start = self._start, None
            self.boundaries.append(start)
            kept = self._prompts[-rec.kept_prompts] if 0 < rec.kept_prompts <= len(self._prompts) else None
            self.kept_since.append(began[1] if began is not None and began[0] == rec.id else kept)
        elif rec.kind == "window" and rec.model:
            self._model = rec.model
        elif rec.kind == "tool_call" and self._usage_after and self._began is None:
            self._began = start
        elif rec.kind in ("tool_result", "prompt"):
            self._began = None  # an input: a response that wrote no usage (interrupted) is over
            if rec.kind == "prompt":
                self._prompts.append(start)
        elif rec.kind == "usage" and not rec.synthetic:
            self._usage(rec, start, end)

    def _usage(self, rec, start, end):
        ident = _response(rec, start)
        began, self._began = self._began, None
        if ident in self.seen:
            return  # one response recorded several times
        self.seen.add(ident)
        self.calls.append((end if began is None else began, len(self.boundaries)))
        self.cache_reads.append(rec.cache_read)
        self.writes["1h"] += rec.cache_write_1h
        self.writes["other"] += rec.cache_write - rec.cache_write_1h
        model = rec.model or self._model
        self.call_models.append(model)
        if model:
            self.models[model] = self.models.get(model, 0) + 1

    def cache_ttl(self):
        """"1h" when most of the session's cache-write tokens were 1-hour
        ones, else None (the default lifetime: the family's cache_write)."""
        return "1h" if self.writes["1h"] > self.writes["other"] else None

    def epoch_at(self, offset):
        """The compaction epoch of an event that saw `offset` bytes."""
        return sum(1 for b in self.boundaries if b < offset)

    def exposure(self, offset, kind=None):
        """(writes, reads) of an addition made by an event: split() summed."""
        split = self.split(offset, kind).values()
        return sum(w for w, _ in split), sum(r for _, r in split)

    def split(self, offset, kind=None):
        """{model: [writes, reads]} of an addition made by an event (of neutral `kind`)
        that saw `offset` bytes: the first later call of its epoch writes it,
        every further call of that epoch reads it, and so does the request of
        the compaction that ends the epoch (it writes it where no call did).  Made after the next compaction started
        in the background, it is kept behind that compaction's summary: the
        next epoch's first call writes it again, its other calls read it.  A
        call after the session was resumed holds it as many times as the
        agent's `transcript.resumed` says for `kind` (none, for an agent that
        drops it; once where it names no such event).  Each write and read
        is the model's that made the call (a model has a price of its own);
        the compaction's request, the model's of the epoch's last call."""
        epoch = self.epoch_at(offset)
        later = [(e, self._copies(offset, end, kind), read, model)
                 for (end, e), read, model in zip(self.calls, self.cache_reads, self.call_models) if end > offset]
        held = [epoch]
        since = self.kept_since[epoch] if epoch < len(self.kept_since) else None
        if since is not None and since < offset:
            held.append(epoch + 1)
        out = {}
        for e in held:
            _held_by([(copies, read, model) for x, copies, read, model in later if x == e], out)
        if self._summarized(epoch, offset):
            sent = any(e == epoch and copies for e, copies, _, _ in later)
            model = next((m for e, m in zip((e for _, e in reversed(self.calls)), reversed(self.call_models))
                          if e == epoch), self.model)
            for request in self._summary_requests:
                # "main": read where a call wrote it, else written; "own": written; "again": read
                read = request == "again" or (request == "main" and sent)
                out.setdefault(model, [0, 0])[1 if read else 0] += 1
        return out

    def _copies(self, offset, end, kind):
        """How many times a call standing at `end` holds an addition made at
        `offset`: once, unless the session was resumed in between and the
        agent says otherwise (`transcript.resumed`)."""
        if not self._resumed or not any(offset < r < end for r in self.resumes):
            return 1
        return self._resumed.get(kind, 1)

    def _summarized(self, epoch, offset):
        """Whether the compaction that ends `epoch` sends an addition made
        at `offset` in a request of its own (the summary's) that no usage
        record of the main chain shows (transcript.summary_requests): it
        holds the epoch's history up to where the compaction started (Claude
        Code 2.1.330: the whole history, with the cache breakpoints of the
        turn's own requests; Copilot CLI 1.0.102: the history as it stood at
        the compaction's start; Gemini CLI 0.61.0: the history before the
        turns it keeps)."""
        if not self._summary_requests or epoch >= len(self.boundaries):
            return False
        since = self.kept_since[epoch]
        return offset < (self.boundaries[epoch] if since is None else since)


def _held_by(calls, out):
    """Add to `out` ({model: [writes, reads]}) those of an addition sent by
    `calls` [(copies, cache read tokens, model)] of one epoch, in order: the first call holding it writes it
    (and reads its further copies); a later one reads it, unless its usage
    shows the cache missed it: it read less from the cache than a call
    before it and no more than the first one did, whose cache read ended
    before the addition (new in its request): the prompt from there was
    sent again (the cache expired in an idle pause, or the model changed)
    and the addition written again."""
    first = top = None
    for copies, read, model in calls:
        tally = out.setdefault(model, [0, 0]) if copies else None
        if tally is not None and (first is None or (read < top and read <= first)):
            tally[0], tally[1] = tally[0] + 1, tally[1] + copies - 1
        elif tally is not None:
            tally[1] += copies
        if copies and first is None:
            first = read
        if first is not None:
            top = read if top is None else max(top, read)


def price(tokens, writes, reads, rates, per_tokens):
    """What `tokens` cost written `writes` times and read `reads` times."""
    return tokens * (writes * rates["cache_write"] + reads * rates["cache_read"]) / per_tokens
