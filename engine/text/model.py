"""The compiled profile and what it carries.

Kept apart from the compiler so that loading a cached profile (every hook
and CLI call) imports neither YAML nor JSON Schema nor the tokenizer.
"""

from dataclasses import dataclass, field


class TokenJudge:
    """Decides whether a rewrite pays, by the profile's objective.  Picklable;
    loads the tokenizer only when a decision needs it."""

    def __init__(self, objective, tokenizer):
        self.objective = objective
        self.tokenizer = tokenizer

    def __call__(self, old, new):
        from .tokens import rewrite_pays

        return rewrite_pays(old, new, self.objective, self.tokenizer)


@dataclass
class Profile:
    name: str
    level: str
    objective: str
    tokenizer: str
    timeout_ms_per_mb: int
    max_input_bytes: int  # compress refuses larger texts
    fit_factor: float  # see engine.text.sizes.could_fit
    protector: object  # engine.text.protect.Protector
    transforms: list
    sources: list = field(default_factory=list)  # [(path, sha256)]
    notes: dict = field(default_factory=dict)
    hooks: dict = field(default_factory=dict)  # resolved hooks settings (plain data)
    cache: dict = field(default_factory=dict)  # bounds of the results cache (textcache)

    @property
    def categories(self):
        return self.protector.categories
