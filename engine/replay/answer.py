"""What one replayed session's hooks answered, counted part by part.

The hooks' merged answer says which handler gave which field (`origins`:
handler, field, value).  The fields read here, in one table (ANSWER_FIELDS)
so the answer's vocabulary is named once: added context, rule files held
back as already in view, a message to the user, a replaced tool output,
the compaction's instructions and a decision on a tool call.  Added
context counts only at an event where the agent reads it (its `answers:
context:` events, and those where it takes context into the one request
about to be sent: `request_context`); a replaced output only at a post_tool.

Each addition is priced by when it enters the context (pricing.py's
exposure); a kept-out output the same way, as a saving.  Without rates (a
model with no price) every cost is None: said, never 0.
"""

# The neutral answer's fields (engine/hooks/dispatch.py's origins) by what they are.
ANSWER_FIELDS = {"context": "context", "in_view": "in_view", "user_message": "warning",
                 "tool_output": "replaced", "stdout": "instructions", "decision": "decision"}
# In a neutral tool decision: the verdict, and the replaced input.
DECISION, NEW_INPUT = "decision", "input"
SUBAGENT_METHOD = ("added at a subagent's start, into the subagent's context: written to the cache once, by "
                   "its first API call; the reads of its later calls are not counted (its calls are in its own "
                   "transcript, or a side chain), so the cost is a lower bound")
IN_VIEW_METHOD = ("rule files a refresh held back because the model had them in view already "
                  "(engine/hooks/inview.py), each counted once per compaction epoch as the raw file's tokens")


def _bucket():
    return {"count": 0, "chars": 0, "tokens": 0, "cache_writes": 0, "cache_read_tokens": 0, "cost": 0.0}


class Session:
    """The figures of one session's answers (see the module doc)."""

    def __init__(self, agent, hooks, timeline, rates, per_tokens, count, rates_of=None):
        self.agent, self.hooks, self.timeline, self.rates, self.per = agent, hooks, timeline, rates, per_tokens
        self.count = count
        # rates_of(model): the rates of a call's model (None: the session's);
        # _split: the current answer's {model: [writes, reads]}, None: all at the session's rates
        self.rates_of, self._split = rates_of, None
        self.kinds = {s["name"]: s["kind"] for specs in hooks["events"].values() for s in specs}
        self.events = 0
        self.answers, self.by_handler = [], {}
        self.in_view = {"count": 0, "chars": 0, "tokens": 0, "cost": 0.0, "method": IN_VIEW_METHOD}
        self.to_subagents = {"count": 0, "chars": 0, "tokens": 0, "cost": 0.0, "method": SUBAGENT_METHOD}
        self.kept = {"count": 0, "bytes": 0, "tokens": 0, "original_bytes": 0, "stub_bytes": 0,
                     "cache_writes": 0, "cache_read_tokens": 0, "cost": 0.0}
        self.warnings = {"count": 0, "chars": 0}
        self.instructions = {"count": 0, "chars": 0}
        self.decisions = {}
        self.rewritten = set()
        self.held_seen = set()
        self._payload = {}

    def price(self, tokens, writes, reads):
        """What `tokens` cost, written and read as the current answer's
        split says, each at its call's model's rates (else `writes` and
        `reads` at the session's)."""
        if self.rates is None:
            return 0.0
        from .pricing import price

        if self._split is None or self.rates_of is None:
            return price(tokens, writes, reads, self.rates, self.per)
        return sum(price(tokens, w, r, self.rates_of(model) or self.rates, self.per)
                   for model, (w, r) in self._split.items())

    # -------------------------------------------------------------- an answer

    def answer(self, event, built, trace, offset):
        """Count one event's answer (`built`: the agent's event name and payload)."""
        self.events += 1
        self._payload = built[1]
        kind = event["kind"]
        stubs = []
        if kind == "post_tool" and event.get("tool_use_id") in self.rewritten:
            from .stubs import wrapper_stubs

            stubs = wrapper_stubs(self.agent, event, built[1])
        if not stubs and (not trace or not trace[0].origins):
            return
        # What a subagent's start adds goes into the subagent's context, not
        # the main chain's: its first call writes it (SUBAGENT_METHOD); what an
        # agent takes into one request only (Gemini's BeforeModel) is in that
        # request alone: written once, read by no later call.
        one = kind == "subagent_start" or self.agent.context_for_one_request(kind)
        self._split = None if one else self.timeline.split(offset, kind)
        writes, reads = (1, 0) if one else (sum(w for w, _ in self._split.values()), sum(r for _, r in self._split.values()))
        parts = [self._kept(text, stub, "engine cache run", "wrapped output", writes, reads) for text, stub in stubs]
        if trace and trace[0].decision and kind == "pre_tool":
            parts.append(self._decision(event, trace[0]))
        for handler, field, value in trace[0].origins if trace else ():
            part = self._part(event, handler, ANSWER_FIELDS.get(field), field, value, offset, writes, reads)
            if part is not None:
                parts.append(part)
        if parts:
            self.answers.append({"event": built[0], "offset": offset, "epoch": self.timeline.epoch_at(offset),
                                 "api_calls_before": sum(1 for end, _ in self.timeline.calls if end <= offset),
                                 "cache_writes": writes, "cache_reads": reads, "parts": parts})

    def _part(self, event, handler, what, field, value, offset, writes, reads):
        kind = event["kind"]
        if what == "context" and self.agent.reads_context_at(kind):
            part = self._context(handler, field, value, writes, reads)
            if kind == "subagent_start":
                self._to_subagent(part, writes, reads)
            return part
        if what == "in_view":
            return self._held(handler, field, value, offset, writes, reads)
        if what == "warning" and self.agent.renders("user_message", kind):
            self.warnings["count"] += 1
            self.warnings["chars"] += len(value)
            return {"handler": handler, "field": field, "chars": len(value)}
        if what == "replaced" and kind == "post_tool":
            from .stubs import original_text, stub_text

            return self._kept(original_text(self.agent, self._payload), stub_text(value), handler,
                              field, writes, reads)
        if what == "instructions" and self.agent.answers_at("compaction_instructions", kind):
            self.instructions["count"] += 1
            self.instructions["chars"] += len(value)
            return {"handler": handler, "field": field, "chars": len(value)}
        return None

    def _context(self, handler, field, value, writes, reads):
        tokens = self.count(value)
        b = self.by_handler.setdefault(handler, {"kind": self.kinds.get(handler, "?"), **_bucket()})
        b["count"] += 1
        b["chars"] += len(value)
        b["tokens"] += tokens
        b["cache_writes"] += writes * tokens
        b["cache_read_tokens"] += reads * tokens
        b["cost"] += self.price(tokens, writes, reads)
        return {"handler": handler, "field": field, "chars": len(value), "tokens": tokens}

    def _to_subagent(self, part, writes, reads):
        """Of the injected, what went into a subagent's context (SUBAGENT_METHOD)."""
        b = self.to_subagents
        b["count"] += 1
        b["chars"] += part["chars"]
        b["tokens"] += part["tokens"]
        b["cost"] += self.price(part["tokens"], writes, reads)

    def _held(self, handler, field, value, offset, writes, reads):
        """Rules a refresh held back: the model had them in view already."""
        epoch = self.timeline.epoch_at(offset)
        for text in value:
            if (epoch, text) in self.held_seen:
                continue  # once per compaction epoch: a re-delivery avoided, not each check
            self.held_seen.add((epoch, text))
            t = self.count(text)
            self.in_view["count"] += 1
            self.in_view["chars"] += len(text)
            self.in_view["tokens"] += t
            self.in_view["cost"] += self.price(t, writes, reads)
        return {"handler": handler, "field": field, "files": len(value)}

    def _kept(self, text, stub, handler, field, writes, reads):
        original, stub_b = text.encode("utf-8", "surrogatepass"), stub.encode("utf-8", "surrogatepass")
        saved = self.count(text) - self.count(stub)
        self.kept["count"] += 1
        self.kept["original_bytes"] += len(original)
        self.kept["stub_bytes"] += len(stub_b)
        self.kept["bytes"] += len(original) - len(stub_b)
        self.kept["tokens"] += saved
        self.kept["cache_writes"] += writes * saved
        self.kept["cache_read_tokens"] += reads * saved
        self.kept["cost"] += self.price(saved, writes, reads)
        return {"handler": handler, "field": field, "bytes": len(original), "stub_bytes": len(stub_b),
                "tokens_kept_out": saved}

    def _decision(self, event, answer):
        handler = next((h for h, f, _ in answer.origins if ANSWER_FIELDS.get(f) == "decision"), "?")
        d = answer.decision
        what = d.get(DECISION) or "rewrite"
        self.decisions[what] = self.decisions.get(what, 0) + 1
        command = (d.get(NEW_INPUT) or {}).get(self.agent.tools("shell").get("command") or "command")
        if isinstance(command, str) and self.agent.tool_kind(event.get("tool")) == "shell":
            self.rewritten.add(event.get("tool_use_id"))
        return {"handler": handler, "field": "decision", "decision": what}

    # ---------------------------------------------------------------- the end

    def figures(self):
        injected = _bucket()
        for b in self.by_handler.values():
            for k in injected:
                injected[k] += b[k]
        net = {"tokens": injected["tokens"] - self.kept["tokens"],
               "cache_write_tokens": injected["cache_writes"] - self.kept["cache_writes"],
               "cache_read_tokens": injected["cache_read_tokens"] - self.kept["cache_read_tokens"],
               "cost": injected["cost"] - self.kept["cost"]}
        out = {"answers": self.answers, "injected": injected, "by_handler": self.by_handler,
               "already_in_view": self.in_view, "to_subagents": self.to_subagents, "kept_out": self.kept, "warnings": self.warnings,
               "compaction_instructions": self.instructions, "net": net, "tool_decisions": self.decisions}
        if self.rates is None:
            for bucket in (injected, self.in_view, self.to_subagents, self.kept, net, *self.by_handler.values()):
                bucket["cost"] = None
        return out
