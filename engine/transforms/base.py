"""What every transform shares: a name, the categories it may rewrite, and the
rule that a set of edits is applied all together or not at all."""


class Transform:
    kind = ""

    def __init__(self, spec, ctx):
        self.name = spec["name"]
        self.allow = frozenset(spec.get("allow", ()))
        self.timed = not ctx.trusted  # user patterns run under a timeout

    def timeout(self, text, ctx_timeout_ms_per_mb):
        if not self.timed:
            return None
        return ctx_timeout_ms_per_mb / 1000.0 * max(1.0, len(text) / 1_000_000)

    def edits(self, text, mask, run):
        """Sorted, disjoint edits that leave every protected span intact."""
        raise NotImplementedError


def admissible(mask, group, allow):
    """True when none of the edits of one match touches a protected span."""
    for e in group:
        if mask.blocking(e.start, e.end, allow):
            return False
    return True
