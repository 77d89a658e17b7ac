"""What a refresh would inject (kept out of the hook hot path).

Plain classes, not dataclasses: importing dataclasses (and inspect through
it) costs several milliseconds of an injecting hook's budget."""


class _Record:
    FIELDS: tuple[str, ...] = ()

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={getattr(self, k)!r}' for k in self.FIELDS)})"

    def __eq__(self, other):
        return type(other) is type(self) and all(getattr(self, k) == getattr(other, k) for k in self.FIELDS)


class Item(_Record):
    FIELDS = ("name", "path", "priority", "chars_before", "chars", "text", "cost", "origin", "real", "digest")

    def __init__(self, name, path, priority, chars_before, chars, text, cost=0, origin="project", real=None,
                 digest=""):
        self.name = name
        self.path = path
        self.priority = priority
        self.chars_before = chars_before
        self.chars = chars
        self.text = text
        self.cost = cost  # what the budget counts: characters or tokens of the compressed text
        # whose file it is (origin.py) and its identity: real path and content digest (sources.RuleFile)
        self.origin = origin
        self.real = real or path
        self.digest = digest
        from .origin import order_key

        self.order = order_key(self)  # sorted many times while a delivery is fitted

    @property
    def fence(self):
        """A fence for quoting the text whole: a run of tildes longer than
        any in the text (at least three), so no line of a project's rule
        can close the quote and write lines of the engine's own frame."""
        import re

        longest = max((len(run) for run in re.findall("~+", self.text)), default=0)
        return "~" * max(3, longest + 1)

    @classmethod
    def of(cls, rf, chars_before, chars, text, cost=0):
        """The Item of a sources.RuleFile."""
        return cls(rf.name, rf.path, rf.priority, chars_before, chars, text, cost, rf.origin, rf.real, rf.digest)


class Plan(_Record):
    """What a refresh would inject: for `engine refresh preview` and for the
    hook.  FIELDS are what it shows and compares; the refresh also keeps,
    declared here: `never` (Items that can never fit, named rather than kept
    waiting), `texts` (path -> the rule file's text, for digest lines),
    `done` (identities delivered or named earlier in this round, overflow.py),
    `delivery` (the id of this delivery's marker, or None) and `said`
    (state marks of the lasting facts logged at this event: refresh._RefreshLog)."""

    FIELDS = ("handler", "level", "items", "omitted", "text", "budget", "problems", "skipped", "scoped")

    def __init__(self, handler, level, items=None, omitted=None, text="", budget=None, problems=None, skipped=None,
                 scoped=None, never=None, texts=None, done=None, delivery=None):
        self.handler = handler
        self.level = level
        self.items = items if items is not None else []
        self.omitted = omitted if omitted is not None else []  # Items that did not fit
        self.text = text
        self.budget = budget if budget is not None else {}
        self.problems = problems if problems is not None else []  # log lines about files left out
        self.skipped = skipped if skipped is not None else []  # (path, reason): files the trust model left out
        self.scoped = scoped if scoped is not None else []  # pathscope.Decision per path-scoped rule file
        self.never = never if never is not None else []
        self.texts = texts if texts is not None else {}
        self.done = done if done is not None else set()
        self.delivery = delivery
        self.said = {}
