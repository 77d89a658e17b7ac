"""Messages of the listed roles stay word for word (default: system)."""

from .base import PRESERVE, Decision, Step


class RolesStep(Step):
    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.roles = frozenset(spec.roles)

    def decide(self, v, run):
        if v.role in self.roles:
            return Decision(PRESERVE, self.name, v.role)
        return None
