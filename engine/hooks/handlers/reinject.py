"""reinject: run named refresh handlers at once when the event matches (after
a compaction: SessionStart with source `compact`; with `when: {pending:
true}`, at any event while a target still has rules to deliver from a
delivery its budget could not hold whole: engine/hooks/overflow.py)."""

from .base import Handler, HandlerSpec
from .part import Part, agent_len


class ReinjectSpec(HandlerSpec):
    handlers: tuple[str, ...]
    when: dict


class Reinject(Handler):
    Spec = ReinjectSpec

    @classmethod
    def check(cls, resolved, h, names, err):
        """Each target is a refresh handler of the profile, and the targets
        fit one injection together unless the later ones may wait (a single
        refresh over the cap would drop whole rules instead)."""
        errors = [err(f"reinject names {target!r}, which is not a refresh handler of this profile", "handlers", i)
                  for i, target in enumerate(h["handlers"])
                  if (names.get(target) or {}).get("kind") not in ("rule_refresh", "file_refresh")]
        cap = resolved.hooks.get("max_injection_chars")
        if errors or cap is None or h["when"].get("pending"):
            return errors  # a pending reinject carries only what waits, deferring the rest
        targets = [names[t] for t in h["handlers"]]
        budgets = [t["budget"].get("chars") if "budget" in t else None for t in targets]
        waits = all(t["overflow"] == "pending" for t in targets[1:])
        if len(budgets) > 1 and all(budgets) and not waits and sum(budgets) + 2 * (len(budgets) - 1) > cap:
            errors.append(err(f"reinject runs {', '.join(h['handlers'])} at once: their budgets "
                              f"({' + '.join(map(str, budgets))} characters) exceed max_injection_chars ({cap}), "
                              "so the later ones would wait for the next event; lower the budgets", "handlers"))
        return errors

    def due(self, ctx):
        when = self.spec.when
        sources = when.get("source")
        if sources and ctx.event.source not in sources:
            return False
        if when.get("subagent_first_call") and not (ctx.name == "pre_tool" and ctx.opens_a_subagent):
            return False
        return not when.get("pending") or bool(self._pending(ctx))

    def _pending(self, ctx):
        """Targets with rules left to deliver; never inside a subagent, whose
        context is not the one the earlier part went to."""
        if ctx.event.subagent:
            return []
        snap = ctx.snapshot()
        return [n for n in self.spec.handlers if snap.get(f"pending:{n}")]

    def targets(self, ctx=None):
        names = self._pending(ctx) if ctx is not None and self.spec.when.get("pending") else self.spec.handlers
        return [self.registry[n] for n in names]

    def parts(self, ctx):
        """Each target's part on its own: the dispatcher fits them under the
        cap and defers what does not fit.  At a subagent's start nothing can
        wait for a next event of its context: each target fits the room the
        ones before it left, and names what it cannot hold."""
        out = []
        for h in self.targets(ctx):
            try:
                got = h.parts(ctx)
            except Exception as exc:  # one broken target must not silence the others
                ctx.log(f"handler {h.name} (run by {self.name}) failed: {type(exc).__name__}: {exc}")
                continue
            out.extend(got)
            if ctx.opens_a_subagent:
                ctx.room_taken += sum(_room(ctx, part) for part in got)
        if _marks_the_subagent(ctx):  # once per subagent, whatever it was given
            out.append(Part(self.name, marks={ctx.subagent_mark(): 1}))
        return out


def _marks_the_subagent(ctx):
    """Whether this event opens a subagent's context that its first tool
    call would open again: that call itself, or a start of an agent whose
    first call stands in for a start that reached no hook
    (`subagent_first_call`)."""
    if not ctx.opens_a_subagent or not ctx.event.subagent:
        return False
    return ctx.name == "pre_tool" or ctx.agent.data["subagent_first_call"]


def _room(ctx, part):
    """The characters `part` takes in the event's answer (dispatch.merge):
    its source line, its text, and the blank line before it."""
    if not part.text:
        return 0
    from ..source import line

    return agent_len(line(ctx.settings, ctx.name, part.name)) + agent_len(part.text) + 2
