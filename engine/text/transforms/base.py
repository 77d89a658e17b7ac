"""What every transform shares: a name, the categories it may rewrite, and the
rule that a set of edits is applied all together or not at all.

A transform is built from its spec: a frozen dataclass made from the
level schema's branch of its kind, the schema's defaults filled in
(engine/core/specs.py), built when the profile compiles.  A kind reads its
fields (`spec.min_depth`) and names no default of its own."""


class Transform:
    kind = ""

    def __init__(self, spec, ctx):
        self.name = spec.name
        self.allow = frozenset(spec.allow)

    def timeout(self, text, ctx_timeout_ms_per_mb):
        """Seconds a pass over text may take; built-in patterns get the same
        budget as the user's, so a runaway is an error, never a hang."""
        from ..protect import pass_timeout

        return pass_timeout(ctx_timeout_ms_per_mb, text)

    def edits(self, text, mask, run):
        """Sorted, disjoint edits that leave every protected span intact."""
        raise NotImplementedError

    def settle(self, text, mask, run, applied):
        """Edits this transform would now make because its own `applied`
        edits (positions in the text before them) changed what their
        neighbours read: a removal that joins a phrase ("make the sure" ->
        "make sure"), a guard whose next word went.  The pipeline applies
        them and asks again until none is left, so one pass gives what two
        would (compression is a fixed point).  Most kinds have none."""
        return []


def admissible(mask, group, allow):
    """True when none of the edits of one match touches a protected span."""
    for e in group:
        if mask.blocking(e.start, e.end, allow):
            return False
    return True
