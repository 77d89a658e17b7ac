"""growth_refresh: run refresh handlers between prompts once the context
grew by their `every_tokens` since a rule was last in view.

An agentic session runs hundreds of tool calls on one prompt: a cadence
counted at UserPromptSubmit never fires there.  This handler sits on
PostToolUse and asks each target refresh whether its growth cadence is
due (one stat on the quiet path, engine/hooks/cadence.py); the
target then delivers only the rules that went that far back.  Never at a
subagent's tool call: its context is not the one that grew.

On pre_compact, for an agent whose compaction runs beside the turn and
keeps what the turn adds meanwhile after its summary (Copilot CLI), it
makes each target due at the next tool call: what the summary will take
goes in again before the summary comes (cadence.compaction_ahead).

On before_model, for an agent that compacts with no event after the
compaction but the next request's (Gemini CLI: its BeforeModel), it gives
what the compaction took to that first request of the new epoch
(cadence.compacted_before_this_request); the agent's YAML says how such an
answer reaches that one request (answers.request_context)."""

from .base import Handler, HandlerSpec


class GrowthRefreshSpec(HandlerSpec):
    handlers: tuple[str, ...]


class GrowthRefresh(Handler):
    Spec = GrowthRefreshSpec

    def _live(self, name, ctx):
        """Checked from the target's spec: a target that is not due is never
        built (its module, refresh.py, is not imported)."""
        from ..cadence import grown

        spec = self.registry.specs[name]  # plain data, its defaults filled in (engine/hooks/compiled.py)
        every = spec["every_tokens"]
        return bool(every) and _has_files(spec, ctx.cwd, ctx.agent) and grown(ctx, name, every)

    def _gives(self, name, ctx):
        """Does target `name` give its part now?  Where its growth cadence is
        due; before a request (due: the first after a compaction), wherever
        it has rule files: what the compaction took, whatever its cadence."""
        if ctx.name == "before_model":
            return _has_files(self.registry.specs[name], ctx.cwd, ctx.agent)
        return self._live(name, ctx)

    @classmethod
    def acts_for(cls, agent, event, spec):
        """At pre_compact and before_model only for an agent whose compaction
        no start event announces (the module's docstring)."""
        if event not in ("pre_compact", "before_model"):
            return True
        from ..cadence import acts_on_unannounced_compaction

        return acts_on_unannounced_compaction(agent, event)

    def due(self, ctx):
        # Never inside a subagent: the growth is the main context's, and a
        # delivery there would count as in view while the main model lacks it.
        if ctx.event.subagent:
            return False
        if ctx.name == "pre_compact":
            from ..cadence import compacts_in_background

            return compacts_in_background(ctx.agent)
        if ctx.name == "before_model":
            from ..cadence import compacted_before_this_request

            return compacted_before_this_request(ctx)
        return any(self._live(n, ctx) for n in self.spec.handlers)

    def parts(self, ctx):
        if ctx.name == "pre_compact":
            from ..cadence import compaction_ahead

            compaction_ahead(ctx, self.spec.handlers)
            return []
        out = []
        for n in self.spec.handlers:
            try:
                if self._gives(n, ctx):
                    out.extend(self.registry[n].parts(ctx))
            except Exception as exc:  # one broken target must not silence the others
                ctx.log(f"handler {n} (run by {self.name}) failed: {type(exc).__name__}: {exc}")
        return out


def _has_files(spec, cwd, agent):
    """True when a target has any rule file to deliver (a listing, no read):
    without one, the quiet path never loads the refresh's machinery."""
    import os

    from ..sources import _matches, source_files, source_folders

    for folder, pattern, _src in source_folders(spec, cwd, agent):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        if "/" in pattern or "**" in pattern or any(_matches(n, pattern) for n in names):
            return True
    return any(os.path.isfile(p) for p, _src in source_files(spec, cwd, agent))
