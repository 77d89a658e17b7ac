"""rule_refresh / file_refresh: re-inject rule files (dir + glob sources, or a
list of files) compressed at a level, in (priority, name) order, within a
budget, on a cadence of turns and/or context tokens.  `due()` is cheap and
imports nothing heavy; `plan()` may load the tokenizer and Jinja2, since it
only runs when something will be injected."""

from .part import Part, as_int as _int


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
        from engine.core.textcache import Compressor
        from ..plan import Item, Plan
        from ..sources import body, collect
        from ..trust import for_event

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
        scoped = []
        if spec.get("path_scope"):  # path-scoped rules only when a matching file was touched
            from ..pathscope import select

            files, scoped = select(files, spec["path_scope"], ctx.touched(spec["path_scope"]), log)
        unread = files[settings["max_files"]:]
        if unread:
            log(f"{self.name}: {len(files)} rule files; the {len(unread)} past hooks.max_files "
                f"({settings['max_files']}) count as omitted without being compressed")
        # A file that cannot fit once compressed is not compressed at all:
        # sizes are checked against the room first (engine.text.sizes.could_fit).
        from engine.text.sizes import Limits, could_fit

        limits = Limits(comp.info("max_input_bytes"), comp.info("fit_factor"))
        from ..source import line

        # the line that says where the refresh comes from is put before it (dispatch.merge): it takes room
        cap = settings["max_injection_chars"] - len(line(settings, ctx.name, self.name))
        room = cap if unit == "tokens" else min(limit, cap)
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
                    skipped=skipped, scoped=scoped)
        while True:
            plan.text = self._render(ctx, plan)
            if scope_all:
                from engine.text.pipeline import compress

                plan.text = compress(comp.profile, plan.text).text  # changes every turn: not cached
            if len(plan.text) <= cap or not plan.items:
                break
            plan.omitted.insert(0, plan.items.pop())  # over the agent's limit: drop the last one in
        if len(plan.text) > cap:
            plan.text = plan.text[: cap - 1] + "…"
        return plan

    def _render(self, ctx, plan):
        from ..banner import render_cached as render

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
        if not plan.items and not plan.omitted and not plan.problems and not plan.scoped:  # say why, once
            from ..sources import expand

            where = [expand(s["dir"], ctx.cwd) for s in self.spec.get("sources", ())] + [
                expand(f, ctx.cwd) for f in self.spec.get("files", ())]
            ctx.log(f"{self.name}: nothing to inject, no files found in {', '.join(where)}")
        if not plan.items and not plan.omitted:
            return None, self.marks(ctx)
        return plan.text, self.marks(ctx)

    def parts(self, ctx):
        text, marks = self.run(ctx)
        return [Part(self.name, text, marks)]

    def marks(self, ctx):
        """State written after this handler injected."""
        out = {f"turn_at:{self.name}": ctx.turn, f"pending:{self.name}": 0}
        if self.every_tokens:
            now = ctx.context_tokens()
            if now is not None:
                out[f"tokens_at:{self.name}"] = now
        return out
