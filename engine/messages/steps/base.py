"""What a step returns and what every step kind shares."""

from dataclasses import dataclass

PRESERVE, DUPLICATE, CODE_SPLIT, COMPRESS = "preserve", "duplicate", "code_split", "compress"


@dataclass(frozen=True)
class Decision:
    outcome: str  # PRESERVE, DUPLICATE, CODE_SPLIT or COMPRESS
    step: str  # the name of the step that decided
    reason: str = ""
    ref: int = -1  # DUPLICATE: the position of the copy that stays
    similarity: float = 1.0

    def label(self):
        return f"{self.outcome}/{self.step}" + (f"/{self.reason}" if self.reason else "")


class Step:
    kind: str
    deferred = False  # the recency step: applied after the others, per window size

    def __init__(self, spec, ctx) -> None:
        """spec: the step's frozen spec (engine/core/specs.py), its defaults filled in."""
        self.name: str = spec.name
        self.kind = spec.kind
        self.skip_modes = frozenset(spec.skip_in_classifier_modes)

    def prepare(self, run) -> None:
        """Called once per run, before any message is decided."""

    def decide(self, v, run) -> Decision | None:
        """A Decision for the message view v, or None to let later steps decide."""
        return None
