"""rule_refresh / file_refresh: re-inject rule files (dir + glob sources, or a
list of files) compressed at a level, in (priority, name) order, within a
budget, on a cadence of turns and/or context tokens.  `due()` is cheap and
imports nothing heavy; `plan()` may load the tokenizer and Jinja2, since it
only runs when something will be injected."""

from .part import Part


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
            return self.grown(ctx)
        return False

    def grown(self, ctx):
        """The growth cadence (engine/hooks/cadence.py)."""
        from ..cadence import grown

        return grown(ctx, self.name, self.every_tokens)

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
        files = self._in_view(ctx, files)
        files, done = self._continue_round(ctx, files)
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
        texts = {rf.path: rf.text for rf in files}
        never = omitted_early + self._never(omitted, limit)
        chosen, omitted, used = self._fit_digest(ctx, chosen, omitted, used, limit, measure, texts)
        plan = Plan(self.name, comp.info("level"), chosen, omitted, budget={unit: limit, "used": used}, problems=problems,
                    skipped=skipped, scoped=scoped)
        plan.never, plan.texts, plan.done = never, texts, done
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

    def _in_view(self, ctx, files):
        """Only what the model does not already have (engine/hooks/inview.py)."""
        if not ctx.settings.get("in_view"):
            return files
        from ..inview import narrow

        return narrow(ctx, self.spec, files)

    def _render(self, ctx, plan):
        from ..banner import render_cached as render

        limits = ctx.settings["templates"]
        values = dict(turn=ctx.turn, event=ctx.name, handler=self.name, level=plan.level, cwd=ctx.cwd,
                      session_id=ctx.event.get("session_id", ""), source=ctx.event.get("source", ""))
        names = [it.name for it in sorted(plan.omitted, key=lambda i: (i.priority, i.name))]
        # Name a few: 10,000 names would fill the injection and leave no room for a rule.
        shown = names[: ctx.settings["omitted_names_max"]]
        counts = dict(omitted=shown, omitted_count=len(names), omitted_more=len(names) - len(shown))
        line = self._omitted_line(ctx, plan) if names else ""
        return render(self.spec["template"], limits, items=plan.items, omitted_line=line, **counts, **values).strip("\n")

    # -- what did not fit (engine/hooks/overflow.py): nothing dropped in silence --

    def _continue_round(self, ctx, files):
        """(files still to deliver, paths delivered earlier in this round)."""
        from .. import overflow

        done = overflow.delivered_before(ctx, self.name, self.spec)
        return ([f for f in files if f.path not in done] if done else files), done

    def _never(self, omitted, limit):
        from .. import overflow

        return overflow.never_fits(omitted, limit) if overflow.mode(self.spec) == overflow.PENDING else []

    def _fit_digest(self, ctx, chosen, omitted, used, limit, measure, texts):
        """Digest mode: the digest lines count against the budget too."""
        from .. import overflow

        if overflow.mode(self.spec) != overflow.DIGEST or not omitted or "digest_template" not in self.spec:
            return chosen, omitted, used

        def cost(items):
            lines, _rest = overflow.digest_lines(ctx, self.spec, self._ordered(items), texts, self._line_renderer(ctx))
            return measure("\n".join(lines)) if lines else 0

        return overflow.fit_digest(chosen, omitted, limit, used, cost)

    @staticmethod
    def _ordered(items):
        return sorted(items, key=lambda i: (i.priority, i.name))

    def _line_renderer(self, ctx):
        from ..banner import render_cached as render

        limits = ctx.settings["templates"]
        return lambda template, **values: render(template, limits, handler=self.name, turn=ctx.turn, **values)

    def _omitted_line(self, ctx, plan):
        """pending: one line naming what follows at the next events, and a
        digest line per file that can never fit; digest: a digest line per
        omitted file.  Without those templates: the omitted_template line."""
        from .. import overflow

        render = self._line_renderer(ctx)
        spec, cap = self.spec, ctx.settings["omitted_names_max"]
        mode = overflow.mode(spec)
        never = getattr(plan, "never", [])
        head, rest = [], []
        if mode == overflow.PENDING and "pending_template" in spec:
            waiting = self._ordered([it for it in plan.omitted if it not in never])
            digest = self._ordered([it for it in plan.omitted if it in never])
            if waiting:
                head.append(render(spec["pending_template"], omitted=[it.name for it in waiting[:cap]],
                                   omitted_count=len(waiting), omitted_more=max(0, len(waiting) - cap)))
        elif mode == overflow.DIGEST and "digest_template" in spec:
            digest = self._ordered(plan.omitted)
        else:
            digest, rest = [], self._ordered(plan.omitted)
        if digest and "digest_template" in spec:
            lines, more = overflow.digest_lines(ctx, spec, digest, getattr(plan, "texts", {}), render)
            head += lines
            rest += more
        else:
            rest += digest
        if rest:
            names = [it.name for it in rest]
            head.append(render(spec["omitted_template"], omitted=names[:cap], omitted_count=len(names),
                               omitted_more=max(0, len(names) - cap)))
        return "\n".join(head)

    def run(self, ctx):
        plan = self.plan(ctx)
        self._delivered = plan.items
        if not plan.items and not plan.omitted and not plan.problems and not plan.scoped \
                and not getattr(ctx, "in_view_skipped", 0):  # say why, once
            from ..sources import expand

            where = [expand(s["dir"], ctx.cwd) for s in self.spec.get("sources", ())] + [
                expand(f, ctx.cwd) for f in self.spec.get("files", ())]
            ctx.log(f"{self.name}: nothing to inject, no files found in {', '.join(where)}")
        marks = self.marks(ctx)
        marks.update(self._round_marks(plan))
        if not plan.items and not plan.omitted:
            return None, marks
        return plan.text, marks

    def _round_marks(self, plan):
        from .. import overflow

        return overflow.marks(self.name, self.spec, plan, getattr(plan, "done", set()))

    def parts(self, ctx):
        ctx.in_view_held = []
        text, marks = self.run(ctx)
        if text and ctx.settings.get("in_view"):
            from ..inview import delivered_marks

            marks = {**marks, **delivered_marks(ctx, getattr(self, "_delivered", ()))}
        held = [rf.text for rf in ctx.in_view_held]
        return [Part(self.name, text, marks, held=held or None)]

    def marks(self, ctx):
        """State written after this handler injected."""
        out = {f"turn_at:{self.name}": ctx.turn, f"pending:{self.name}": 0}
        if self.every_tokens and ctx.settings.get("in_view"):
            from ..cadence import growth_marks

            out.update(growth_marks(ctx, self.name))
        elif self.every_tokens:
            now = ctx.context_tokens()
            if now is not None:
                out[f"tokens_at:{self.name}"] = now
        return out
