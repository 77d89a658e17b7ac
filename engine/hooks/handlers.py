"""Handler kinds: the small registry the profile's `hooks.events` composes.

- rule_refresh / file_refresh: re-inject rule files (dir + glob sources, or a
  list of files) compressed at a level, in (priority, name) order, within a
  budget, on a cadence of turns and/or context tokens;
- reinject: run named refresh handlers at once when the event matches (after
  a compaction: SessionStart with source `compact`);
- clear_state: forget the session (SessionEnd).
`due()` is cheap and imports nothing heavy; `run()` may load the tokenizer and
Jinja2, since it only runs when something will be injected.  `parts()` is
what the dispatcher merges: (handler name, text, state marks) per refresh,
so the cap on one event's size is applied to each refresh on its own.
"""

class Context:
    """One event as handlers see it."""

    def __init__(self, event, state, turn, profile_ref, settings, log):
        self.event = event
        self.state = state
        self.turn = turn
        self.profile_ref = profile_ref
        self.settings = settings  # the profile's hooks settings
        self.log = log
        self._tokens = None
        self._tokens_read = False
        self._snapshot = None

    @property
    def name(self):
        return self.event.get("hook_event_name", "")

    @property
    def cwd(self):
        return self.event.get("cwd") or ""

    def snapshot(self):
        if self._snapshot is None:
            self._snapshot = self.state.get() if self.state is not None else {}
        return self._snapshot

    def context_tokens(self):
        if not self._tokens_read:
            from .transcript import context_tokens

            self._tokens = context_tokens(self.event.get("transcript_path"),
                                          self.settings["transcript"]["max_tail_bytes"])
            self._tokens_read = True
        return self._tokens


class Refresh:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]
        self.every_turns = spec.get("every_turns", 0)
        self.every_tokens = spec.get("every_tokens", 0)

    def due(self, ctx):
        snap = ctx.snapshot()
        if snap.get(f"pending:{self.name}"):
            return True
        if ctx.name == "UserPromptSubmit" and self.every_turns and ctx.turn and ctx.turn % self.every_turns == 0:
            return True
        if ctx.name == "UserPromptSubmit" and self.every_tokens:
            now = ctx.context_tokens()
            if now is not None:
                last = _int(snap.get(f"tokens_at:{self.name}", 0))
                if now < last:  # the context shrank (compaction): count from here
                    if ctx.state is not None:
                        ctx.state.update({f"tokens_at:{self.name}": now})
                    return False
                return now - last >= self.every_tokens
        return False

    def plan(self, ctx):
        # Compressed texts, token counts and the rendered banner come from the
        # results cache when the rule files are unchanged: the compiled
        # profile, the tokenizer and Jinja2 are loaded only on a miss.
        from ..textcache import Compressor
        from .plan import Item, Plan
        from .sources import body, collect
        from .trust import for_event

        spec, settings = self.spec, ctx.settings
        comp = Compressor(ctx.profile_ref, spec["level"], cwd=ctx.cwd or None)
        scope_all = settings.get("scope") == "all"
        budget = spec["budget"]
        unit = "tokens" if "tokens" in budget else "chars"
        limit = budget[unit]
        measure = len if unit == "chars" else comp.count
        items, problems, skipped, omitted_early = [], [], [], []

        def log(message):
            problems.append(message)
            ctx.log(message)

        trust = for_event(ctx.profile_ref, ctx.cwd or None, settings, log)
        files = collect(spec, ctx.cwd, log, trust, skipped)
        unread = files[settings["max_files"]:]
        if unread:
            log(f"{self.name}: {len(files)} rule files; the {len(unread)} past hooks.max_files "
                f"({settings['max_files']}) count as omitted without being compressed")
        # A file that cannot fit once compressed is not compressed at all:
        # sizes are checked against the room first (engine.sizes.could_fit).
        from ..sizes import Limits, could_fit

        limits = Limits(comp.info("max_input_bytes"), comp.info("fit_factor"))
        room = settings["max_injection_chars"] if unit == "tokens" else min(limit, settings["max_injection_chars"])
        for rf in files[: settings["max_files"]]:
            raw = (body(rf.text) if spec.get("strip_frontmatter") else rf.text).replace("\r\n", "\n")
            if not could_fit(limits, len(raw), room):
                log(f"rule file {rf.path}: {len(raw):,} characters cannot fit in {room:,} once compressed; "
                    "omitted without being compressed")
                omitted_early.append(Item(rf.name, rf.path, rf.priority, len(raw), len(raw), "", cost=0))
                continue
            text = comp.compress(raw).strip("\n")
            items.append(Item(rf.name, rf.path, rf.priority, len(raw), len(text),
                              raw.strip("\n") if scope_all else text, measure(text)))
        chosen, omitted, used = [], list(omitted_early), 0
        for rf in unread:
            omitted.append(Item(rf.name, rf.path, rf.priority, len(rf.text), len(rf.text), "", cost=0))
        for it in items:
            if used + it.cost <= limit:
                chosen.append(it)
                used += it.cost
            else:
                omitted.append(it)  # a smaller rule later in the order may still fit
        plan = Plan(self.name, comp.info("level"), chosen, omitted, budget={unit: limit, "used": used}, problems=problems,
                    skipped=skipped)
        cap = settings["max_injection_chars"]
        while True:
            plan.text = self._render(ctx, plan)
            if scope_all:
                from ..pipeline import compress

                plan.text = compress(comp.profile, plan.text).text  # changes every turn: not cached
            if len(plan.text) <= cap or not plan.items:
                break
            plan.omitted.insert(0, plan.items.pop())  # over the agent's limit: drop the last one in
        if len(plan.text) > cap:
            plan.text = plan.text[: cap - 1] + "…"
        return plan

    def _render(self, ctx, plan):
        from .banner import render_cached as render

        limits = ctx.settings["templates"]
        values = dict(turn=ctx.turn, event=ctx.name, handler=self.name, level=plan.level, cwd=ctx.cwd,
                      session_id=ctx.event.get("session_id", ""), source=ctx.event.get("source", ""))
        names = [it.name for it in sorted(plan.omitted, key=lambda i: (i.priority, i.name))]
        # Name a few: 10,000 names would fill the injection and leave no room for a rule.
        shown = names[: ctx.settings["omitted_names_max"]]
        counts = dict(omitted=shown, omitted_count=len(names), omitted_more=len(names) - len(shown))
        line = render(self.spec["omitted_template"], limits, handler=self.name, turn=ctx.turn, **counts) if names else ""
        return render(self.spec["template"], limits, items=plan.items, omitted_line=line, **counts, **values).strip("\n")

    def run(self, ctx):
        plan = self.plan(ctx)
        if not plan.items and not plan.omitted and not plan.problems:  # say why, once
            from .sources import expand

            where = [expand(s["dir"], ctx.cwd) for s in self.spec.get("sources", ())] + [
                expand(f, ctx.cwd) for f in self.spec.get("files", ())]
            ctx.log(f"{self.name}: nothing to inject, no files found in {', '.join(where)}")
        if not plan.items and not plan.omitted:
            return None, self.marks(ctx)
        return plan.text, self.marks(ctx)

    def parts(self, ctx):
        text, marks = self.run(ctx)
        return [(self.name, text, marks)]

    def marks(self, ctx):
        """State written after this handler injected."""
        out = {f"turn_at:{self.name}": ctx.turn, f"pending:{self.name}": 0}
        if self.every_tokens:
            now = ctx.context_tokens()
            if now is not None:
                out[f"tokens_at:{self.name}"] = now
        return out


def _int(value):
    try:
        return int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0


class Reinject:
    def __init__(self, spec, settings, registry):
        self.spec = spec
        self.name = spec["name"]
        self.registry = registry

    def due(self, ctx):
        when = self.spec.get("when", {})
        sources = when.get("source")
        return not sources or ctx.event.get("source") in sources

    def targets(self):
        return [self.registry[n] for n in self.spec["handlers"]]

    def parts(self, ctx):
        """Each target's part on its own: the dispatcher fits them under the
        cap and defers what does not fit."""
        out = []
        for h in self.targets():
            try:
                out.extend(h.parts(ctx))
            except Exception as exc:  # one broken target must not silence the others
                ctx.log(f"handler {h.name} (run by {self.name}) failed: {type(exc).__name__}: {exc}")
        return out


class ClearState:
    def __init__(self, spec, settings, registry):
        self.name = spec["name"]

    def due(self, ctx):
        return True

    def run(self, ctx):
        if ctx.state is not None:
            ctx.state.clear()
        return None, None

    def parts(self, ctx):
        self.run(ctx)
        return []


KINDS = {"rule_refresh": Refresh, "file_refresh": Refresh, "reinject": Reinject, "clear_state": ClearState}


def build(hooks):
    """All handlers by name, and the ordered handler list per event."""
    registry, by_event = {}, {}
    for event, specs in hooks.get("events", {}).items():
        for spec in specs:
            if spec.get("enabled", True) is False:
                continue
            h = KINDS[spec["kind"]](spec, hooks, registry)
            registry[spec["name"]] = h
            by_event.setdefault(event, []).append(h)
    return registry, by_event
