"""What a refresh would inject (kept out of the hook hot path)."""

from dataclasses import dataclass, field


@dataclass
class Item:
    name: str
    path: str
    priority: int
    chars_before: int
    chars: int
    text: str
    cost: int = 0  # what the budget counts: characters or tokens of the compressed text


@dataclass
class Plan:
    """What a refresh would inject: for `engine refresh preview` and for the hook."""

    handler: str
    level: str
    items: list = field(default_factory=list)
    omitted: list = field(default_factory=list)  # Items that did not fit
    text: str = ""
    budget: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)  # log lines about files left out
    skipped: list = field(default_factory=list)  # (path, reason): files the trust model left out
