"""rule_refresh / file_refresh: re-inject rule files (dir + glob sources, or a
list of files) compressed at a level, the user's own first and then by
(priority, name) (engine/hooks/origin.py), within a budget, on a cadence of
turns and/or context tokens; the injected text passes the redactor, and a
delivery carries the id that later tells it apart (engine/hooks/delivery.py).
`due()` is cheap and imports nothing heavy; `plan()` may load the tokenizer
and Jinja2, since it only runs when something will be injected."""

from .base import Handler, HandlerSpec
from .part import Part, agent_len, cut_to


def _elapsed():
    """Seconds since the hook process started (its deadline counts from there)."""
    import time

    from ..deadline import STARTED

    return time.monotonic() - STARTED


class RefreshSpec(HandlerSpec):
    level: str
    budget: dict
    sources: tuple
    files: tuple
    skip: tuple[str, ...]
    priority: dict
    every_turns: int
    every_tokens: int
    strip_frontmatter: bool
    path_scope: dict | None
    scope: dict  # path_scope, or its defaults without one: which rule files the agent scopes (inview.narrow)
    template: str
    omitted_template: str
    overflow: str
    pending_template: str | None
    digest_template: str | None
    digest_title_chars: int


class Refresh(Handler):
    Spec = RefreshSpec

    @classmethod
    def check(cls, resolved, h, names, err):
        """Its templates (known variables, a trial render under the hook's
        limits and deadline) and its level (hooks/check.py)."""
        from ..check import refresh_problems

        return refresh_problems(resolved, h)

    @classmethod
    def compile_spec(cls, spec, handler_schema):
        """`scope`: the path_scope, else the defaults of one (its frontmatter
        key and glob bound still say which rule files the agent itself loads
        only on a touch: what is in view, engine/hooks/inview.py)."""
        from engine.core.defaults import fill

        return dict(spec, scope=spec.get("path_scope") or fill(handler_schema("path_scope"), {}))

    def __init__(self, spec, settings, registry):
        super().__init__(spec, settings, registry)
        self.every_turns = self.spec.every_turns
        self.every_tokens = self.spec.every_tokens

    def due(self, ctx):
        snap = ctx.snapshot()
        if snap.get(f"pending:{self.name}"):
            return True
        if ctx.name == "prompt" and self.every_turns and ctx.turn and ctx.turn % self.every_turns == 0:
            return True
        if ctx.name == "prompt" and self.every_tokens:
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

        from ..plan import Plan

        spec, settings = self.spec, ctx.settings
        comp = Compressor(level=spec["level"], chosen=ctx.chosen)
        unit = "tokens" if "tokens" in spec["budget"] else "chars"
        limit = spec["budget"][unit]
        measure = len if unit == "chars" else comp.count
        problems, skipped, scoped = [], [], []

        log = _RefreshLog(ctx, problems)
        files = self._files(ctx, log, skipped, scoped)
        files, done = self._continue_round(ctx, files)
        delivery_id, marker = self._marker(ctx)
        cap = self._cap(ctx, marker)
        texts = {rf.path: rf.text for rf in files}
        never, files = self._cannot_fit(comp, files, cap if unit == "tokens" else min(limit, cap), log)
        items, unread = self._compress(comp, files, measure, settings, log)
        chosen, over, used = self._fill(items, limit)
        omitted = never + unread + over
        never = never + self._never(ctx, over, limit)
        never, omitted = self._held_unfit(ctx, never, omitted, limit)
        chosen, omitted, used = self._fit_digest(ctx, chosen, omitted, used, limit, measure, texts)
        plan = Plan(self.name, comp.info("level"), chosen, omitted, budget={unit: limit, "used": used}, problems=problems,
                    skipped=skipped, scoped=scoped, never=never, texts=texts, done=done)
        log.close(self.name)
        plan.said = log.said
        self._fit_event(ctx, plan, cap, comp)
        if plan.items and marker:
            plan.delivery = delivery_id
            plan.text = plan.text + "\n" + marker  # last: the banner stays the first thing the model reads
        return plan

    def _files(self, ctx, log, skipped, scoped):
        """The rule files this event may deliver: read as the trust model
        allows, narrowed to the path-scoped ones touched and to what is not
        in view already."""
        from ..sources import collect
        from ..trust import for_event

        trust = for_event(ctx.chosen, ctx.cwd or None, ctx.settings)
        touched = (lambda: ctx.touched(self.spec.path_scope)) if self.spec.path_scope else None
        files = collect(self.spec, ctx.cwd, log, trust, skipped, ctx.agent, touched)
        if self.spec.path_scope:  # path-scoped rules only when a matching file was touched
            from ..pathscope import select

            files, found = select(files, self.spec.path_scope, ctx.touched(self.spec.path_scope), log, ctx.cwd)
            scoped.extend(found)
        return self._in_view(ctx, files)

    def _marker(self, ctx):
        """(id, marker line) of this delivery: how the engine later tells its
        own delivery apart in the transcript (engine/hooks/delivery.py)."""
        conf = ctx.settings.get("in_view")
        if not conf or not conf.get("delivery_marker"):
            return None, ""
        from ..delivery import marker_line, new_id

        delivery_id = new_id()
        return delivery_id, marker_line(conf["delivery_marker"], delivery_id)

    def _cap(self, ctx, marker):
        """The characters this handler's text may take in one event: the
        event's cap less the source line dispatch.merge puts before it and
        the delivery's marker line."""
        from ..source import line

        cap = ctx.settings["max_injection_chars"] - agent_len(line(ctx.settings, ctx.name, self.name)) - ctx.room_taken
        return cap - (agent_len(marker) + 1 if marker else 0)

    def _raw(self, rf):
        from ..sources import body

        return (body(rf.text) if self.spec.strip_frontmatter else rf.text).replace("\r\n", "\n")

    def _cannot_fit(self, comp, files, room, log):
        """(Items that cannot fit once compressed, the other files): sizes are
        checked against the room first (engine.text.sizes.could_fit), so such
        a file is never compressed and takes none of hooks.max_files."""
        from engine.text.sizes import Limits, could_fit

        from ..plan import Item

        limits = Limits(comp.info("max_input_bytes"), comp.info("fit_factor"))
        never, rest = [], []
        for rf in files:
            size = len(self._raw(rf))
            if could_fit(limits, size, room):
                rest.append(rf)
                continue
            log(f"rule file {rf.path}: {size:,} characters cannot fit in {room:,} once compressed; "
                "omitted without being compressed", once=("unfit", rf.real, size))
            never.append(Item.of(rf, size, size, "", cost=0))
        return never, rest

    def _compress(self, comp, files, measure, settings, log):
        """(compressed Items of the first files, Items of the rest): at most
        hooks.max_files files, and at most hooks.max_compress_chars of text
        not yet in the results cache, compressed in the first
        compress_share_of_deadline of the hook's deadline; the rest are
        omitted without being compressed and wait for the next part."""
        from engine.core.textcache import redacted

        from ..plan import Item

        max_files = settings["max_files"]
        items, work = [], 0
        for rf in files[:max_files]:
            raw = self._raw(rf)
            text = comp.cached(raw)
            if text is None:
                if work and not self._may_compress(work, len(raw), settings):
                    log(f"{self.name}: compressed {work:,} characters of rule text in this event, {_elapsed():.1f} s "
                        f"into it (hooks.max_compress_chars, hooks.compress_share_of_deadline); the "
                        f"{len(files) - len(items)} files after wait for the next event")
                    break
                work += len(raw)
                text = comp.compress(raw)
            # What goes in view never holds a secret.  Compressed under `scope: all` too, where the whole
            # output is compressed again (compressing twice changes nothing): a project's file goes in
            # quoted, and a quote is never compressed.
            text = redacted(text.strip("\n"), comp.limits)
            items.append(Item.of(rf, len(raw), len(text), text, measure(text)))
        if len(files) > max_files:
            log(f"{self.name}: {len(files)} rule files that could fit; the {len(files) - max_files} past "
                f"hooks.max_files ({max_files}) count as omitted without being compressed")
        return items, [Item.of(rf, len(rf.text), len(rf.text), "", cost=0) for rf in files[len(items):]]

    @staticmethod
    def _may_compress(work, size, settings):
        """True when this event may compress `size` more characters: under
        the bound, and done, at the slowest rate, within its share of the
        deadline."""
        share = settings["compress_share_of_deadline"] * settings["deadline_ms"] / 1000.0
        done_by = _elapsed() + size / settings["compress_slowest_chars_per_s"]
        return work < settings["max_compress_chars"] and done_by < share

    @staticmethod
    def _fill(items, limit):
        """(chosen, over, used): items in order while they fit the budget,
        skipping those that do not (a smaller rule later may still fit)."""
        chosen, over, used = [], [], 0
        for it in items:
            if used + it.cost <= limit:
                chosen.append(it)
                used += it.cost
            else:
                over.append(it)
        return chosen, over, used

    def _fit_event(self, ctx, plan, cap, comp):
        """Render the text within one event's cap (the rule texts and titles
        in it are redacted already): the last rule in leaves until it fits;
        a rule that does not fit even alone can never fit, and is named, not
        kept waiting."""
        if not plan.items and not plan.omitted:
            plan.text = ""  # nothing to say: no template is rendered (the quiet path loads no Jinja2)
            return
        while True:
            plan.text = self._render(ctx, plan)
            if ctx.settings.get("scope") == "all":
                from engine.text.pipeline import compress

                plan.text = compress(comp.profile, plan.text).text  # changes every turn: not cached
            if agent_len(plan.text) <= cap or not plan.items:
                break
            self._leave(ctx, plan, agent_len(plan.text) - cap, cap)
        plan.text = cut_to(plan.text, cap)

    def _leave(self, ctx, plan, excess, cap):
        """Take rules out of the delivery, last in first, until those taken
        out held `excess` characters (a rule's share of the rendering is
        taken as its text, its name or path, and the frame the template
        puts around a file of its origin, measured by `_frame`: never less
        than it takes, so never more rules than needed leave, and the render
        runs a few times, not once per rule).  One that cannot fit the event
        even alone is never pending."""
        taken, frames = 0, {}
        while plan.items and taken < excess:
            it = plan.items.pop()
            plan.omitted.insert(0, it)
            size = agent_len(it.text) + max(agent_len(it.name), agent_len(it.path))  # a heading shows either
            if it.origin not in frames:
                frames[it.origin] = self._frame(ctx, plan, it.origin)
            taken += size + frames[it.origin]
            if (not plan.items or size >= cap // 2) and self._alone_too_long(ctx, plan, it, cap):
                plan.never, plan.omitted = self._held_unfit(ctx, [*plan.never, it], plan.omitted, None)

    @staticmethod
    def _held_unfit(ctx, never, omitted, limit):
        """(never, omitted) less the files that cannot fit even alone and that
        the model has in view in this epoch, gone far back (inview.narrow:
        ctx.in_view_far): a digest line would ask it to read again thousands
        of tokens it holds.  One it lacks is still named (never dropped in
        silence).  `limit`: the budget; None where `never` says it all (_leave)."""
        if not ctx.in_view_far:
            return never, omitted
        from .. import overflow
        from ..delivery import identity

        unfit = never + (overflow.never_fits(omitted, limit) if limit is not None else [])
        held = {id(it) for it in unfit if identity(it) in ctx.in_view_far}
        ctx.in_view_skipped += len(held)  # left out, and said why (run: not "nothing to inject")
        return [it for it in never if id(it) not in held], [it for it in omitted if id(it) not in held]

    def _frame(self, ctx, plan, origin):
        """The characters the template puts around one file of `origin`
        besides its text and name (its heading's words, a quote's fences,
        the blank line between files), and a few more for slack."""
        from ..plan import Item, Plan

        probe = Item("n", "n", 0, 1, 1, "t", origin=origin)
        one = agent_len(self._render(ctx, Plan(plan.handler, plan.level, [probe], [])))
        none = agent_len(self._render(ctx, Plan(plan.handler, plan.level, [], [])))
        return max(one - none - agent_len(probe.text) - agent_len(probe.name), 0) + 8

    def _alone_too_long(self, ctx, plan, it, cap):
        """True when `it` rendered alone, with no omitted line, is over the cap."""
        from ..plan import Plan

        alone = Plan(plan.handler, plan.level, [it], [])
        return agent_len(self._render(ctx, alone)) > cap

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
                      session_id=ctx.event.session, source=ctx.event.source)
        names = _labels(self._ordered(plan.omitted))
        # Name a few: 10,000 names would fill the injection and leave no room for a rule.
        shown = names[: ctx.settings["omitted_names_max"]]
        counts = dict(omitted=shown, omitted_count=len(names), omitted_more=len(names) - len(shown))
        line = self._omitted_line(ctx, plan) if names else ""
        return render(self.spec["template"], limits, items=plan.items, omitted_line=line, **counts, **values).strip("\n")

    # -- what did not fit (engine/hooks/overflow.py): nothing dropped in silence --

    def _continue_round(self, ctx, files):
        """(files still to deliver, the identities delivered or named earlier
        in this round)."""
        from .. import overflow

        done = overflow.delivered_before(ctx, self.name, self.spec)
        return ([f for f in files if overflow.ident(f) not in done] if done else files), done

    def _never(self, ctx, omitted, limit):
        from .. import overflow

        return overflow.never_fits(omitted, limit) if overflow.mode(self.spec, ctx) == overflow.PENDING else []

    def _fit_digest(self, ctx, chosen, omitted, used, limit, measure, texts):
        """Digest mode: the digest lines count against the budget too."""
        from .. import overflow

        if overflow.mode(self.spec, ctx) != overflow.DIGEST or not omitted or "digest_template" not in self.spec:
            return chosen, omitted, used

        def cost(items):
            lines, _rest = overflow.digest_lines(ctx, self.spec, self._ordered(items), texts, self._line_renderer(ctx))
            return measure("\n".join(lines)) if lines else 0

        return overflow.fit_digest(chosen, omitted, limit, used, cost)

    @staticmethod
    def _ordered(items):
        from operator import attrgetter

        return sorted(items, key=attrgetter("order"))  # origin.order_key, computed once per Item

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
        mode = overflow.mode(spec, ctx)
        never = plan.never
        head, rest = [], []
        if mode == overflow.PENDING and "pending_template" in spec:
            waiting = self._ordered([it for it in plan.omitted if it not in never])
            digest = self._ordered([it for it in plan.omitted if it in never])
            if waiting:
                head.append(render(spec["pending_template"], omitted=_labels(waiting)[:cap],
                                   omitted_count=len(waiting), omitted_more=max(0, len(waiting) - cap)))
        elif mode == overflow.DIGEST and "digest_template" in spec:
            digest = self._ordered(plan.omitted)
        else:
            digest, rest = [], self._ordered(plan.omitted)
        if digest and "digest_template" in spec:
            lines, more = overflow.digest_lines(ctx, spec, digest, plan.texts, render)
            head += lines
            rest += more
        else:
            rest += digest
        if rest:
            names = _labels(rest)
            head.append(render(spec["omitted_template"], omitted=names[:cap], omitted_count=len(names),
                               omitted_more=max(0, len(names) - cap)))
        return "\n".join(head)

    def run(self, ctx):
        """(plan, text to inject or None, marks) of this event."""
        plan = self.plan(ctx)
        if plan.items or plan.omitted or plan.problems or plan.scoped or ctx.in_view_skipped:
            ctx.found_something = True
        elif not _a_quiet_start(ctx):  # say why, once for the event (Context.say_nothing_found)
            from ..sources import source_files, source_folders

            where = [f for f, _g, _s in source_folders(self.spec, ctx.cwd, ctx.agent)] + [
                p for p, _s in source_files(self.spec, ctx.cwd, ctx.agent)]
            ctx.nothing_found.append((self.name, where))
        marks = self.marks(ctx)
        marks.update(self._round_marks(plan))
        marks.update(plan.said)
        if not plan.items and not plan.omitted:
            return plan, None, marks
        return plan, plan.text, marks

    def _round_marks(self, plan):
        from .. import overflow

        return overflow.marks(self.name, self.spec, plan, plan.done)

    def parts(self, ctx):
        from .. import overflow

        if ctx.scoped_for is None:  # (a delivery before a write is one of its own: scoped_write.py)
            if self.name in ctx.refreshed:
                return []  # given at this event already: the same files would come twice
            ctx.refreshed.add(self.name)
        ctx.in_view_held, ctx.in_view_far = [], set()
        overflow.open_round(ctx, self.name, self.spec)
        plan, text, marks = self.run(ctx)
        if ctx.opens_a_subagent:
            # given to the subagent's context: the main one's cadence, round and view are as they were
            # (what the session's log was told stays told)
            marks = dict(plan.said)
        elif text and ctx.settings.get("in_view"):
            from ..inview import delivered_marks

            marks = {**marks, **delivered_marks(ctx, plan.items, plan.delivery)}
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


class _RefreshLog:
    """The refresh's log: every problem goes into the plan (engine refresh
    preview lists them all), at most hooks.max_log_lines_per_refresh into
    hook.log, then a line with the count of the rest.  A lasting fact
    about a file (`once`: a key naming it, such as ("unfit", real path,
    size)) goes into hook.log once per session: the session's state keeps
    that it was said (`said`, marks saved with the refresh's), as a long
    session's cadence brings the same file back hundreds of times."""

    def __init__(self, ctx, problems):
        from engine.core.settings import hook_bounds

        self.ctx, self.problems, self.said = ctx, problems, {}
        self.most = hook_bounds()["max_log_lines_per_refresh"]
        self.logged = 0

    def __call__(self, message, once=None):
        self.problems.append(message)
        if once is not None:
            key = said_key(once)
            if key in self.said or self.ctx.snapshot().get(key):
                return
            self.said[key] = 1
        self.logged += 1
        if self.logged <= self.most:  # the rest only in the plan (refresh preview): a bounded log
            self.ctx.log(message)

    def close(self, handler):
        """The count of the lines past the bound, in one line."""
        if self.logged > self.most:
            self.ctx.log(f"{handler}: {self.logged - self.most} more problems of this refresh not logged "
                         "(hooks.max_log_lines_per_refresh); engine refresh preview lists them all")


def said_key(fact):
    """The state key saying `fact` (a tuple of strings and numbers) was logged."""
    from engine.base.digest import sha256

    from ..told import SAID

    text = "\0".join(str(part) for part in fact)
    return SAID + sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _a_quiet_start(ctx):
    """A session or a subagent starting with nothing the agent lacks is the
    common case, not news; nothing to bring back after a compaction is (the
    user may wonder)."""
    return (ctx.name == "session_start" and ctx.event.source != "compact") or ctx.opens_a_subagent


def _labels(files):
    """How a line naming files that did not fit names each: its name, or
    its path where two of them share a name (a CLAUDE.md in each folder),
    as the delivery's own headings name a file."""
    names = [it.name for it in files]
    return [it.path if names.count(it.name) > 1 else it.name for it in files]
