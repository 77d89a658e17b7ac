"""Run a compiled pipeline over messages: decide each message once, then
render the outcome for a recency window (and, with a token budget, find the
largest window that fits).

Deciding is done once per run: the recency step is deferred (a message
records only that it reached it), so trying another window size costs a
look-up, not a new pass, and an external classifier is asked once per
message however many windows a budget tries.
"""

from collections import Counter

from .shapes import replaced
from .steps.base import CODE_SPLIT, COMPRESS, DUPLICATE, PRESERVE, Decision


class Run:
    def __init__(self, messages, views):
        self.messages = messages  # the message mappings, by view index
        self.views = views
        self.counts = Counter()
        self._texts = {}
        self._memos = {}

    def text(self, v):
        t = self._texts.get(v.index)
        if t is None:
            t = self._texts[v.index] = v.text
        return t

    def memo(self, v):
        return self._memos.setdefault(v.index, {})

    def forget(self, index=None):
        """Let go of the protect scans of one message (rendered: it will not
        be scanned again), or of all of them (the result is built): they are
        most of what a run holds, and token counting comes after."""
        if index is None:
            self._memos.clear()
        else:
            self._memos.pop(index, None)

    def message(self, v):
        return self.messages[v.index]

    def count(self, key, n=1):
        self.counts[key] += n


class Decided:
    """The decisions of one run, and the messages rendered from them."""

    def __init__(self, pipeline, run, positions, decisions, recency_default):
        self.pipeline = pipeline
        self.run = run
        self.positions = positions  # view index -> position in the caller's list
        self.decisions = decisions  # [(Decision, reached the recency step)]
        self.recency_default = recency_default
        self._rendered = {}

    def decision(self, i, window):
        d, eligible = self.decisions[i]
        n = len(self.decisions)
        if eligible and window and i >= n - window:
            step = self.pipeline.step("recency")
            return step.decision()
        return d

    def rendered(self, i):
        """(new message or None when it stays as it is, the outcome applied)."""
        if i not in self._rendered:
            self._rendered[i] = _render(self, i, self.decisions[i][0])
            self.run.forget(i)
        return self._rendered[i]


def decide(pipeline, messages, views, positions, window=None):
    """window: the recency window when it is known (no budget to search):
    a message inside it stops at the recency step, so later steps (an
    external classifier) never look at it."""
    classifier = pipeline.step("classifier")
    mode = classifier.mode if classifier is not None and classifier.active else None
    steps = [s for s in pipeline.steps if mode not in s.skip_modes]
    run = Run(messages, views)
    for s in steps:
        s.prepare(run)
    recency = pipeline.step("recency")
    decisions = []
    for v in views:
        if not v.units:
            decisions.append((Decision(PRESERVE, "shape", "no text"), False))
            continue
        eligible, d = False, None
        for s in steps:
            if s.deferred:
                eligible = True
                if window is not None and window and v.index >= len(views) - window:
                    break  # decided by the window (Decided.decision gives it)
                continue
            d = s.decide(v, run)
            if d is not None:
                break
        if d is None:
            d = Decision(PRESERVE, "end", "no step decided")
        decisions.append((d, eligible))
    return Decided(pipeline, run, positions, decisions, recency.window if recency else 0)


def _entities(markers, refs):
    if not refs:
        return ""
    return markers["entities"].format(entities=markers["entity_separator"].join(refs))


def _summary_marker(pipeline, text, memo, template="summary", code=""):
    summary, refs = pipeline.summarizer.summarize(text, memo)
    m = pipeline.markers
    return m[template].format(summary=summary, entities=_entities(m, refs), code=code)


def _split_marker(pipeline, text, memo):
    step = pipeline.step("code_split")
    fences = step.fences(text, memo) if step is not None else []
    if not fences:
        return _summary_marker(pipeline, text, memo)
    prose, code, pos = [], [], 0
    for s, e in fences:
        prose.append(text[pos:s])
        code.append(text[s:e])
        pos = e
    prose.append(text[pos:])
    m = pipeline.markers
    # a memo of its own: the prose is scanned once, not once per category set the summary asks for
    return _summary_marker(pipeline, "\n".join(p.strip() for p in prose if p.strip()), {}, "code_split",
                           m["code_separator"].join(code))


def _percent(similarity):
    """A near-duplicate's likeness in whole percent: never 100, which would
    say the texts are the same (shingles alike in every word may still
    differ in case or spacing)."""
    return min(99, int(similarity * 100))


def _render(decided, i, d):
    if d.outcome == PRESERVE:
        return None, d
    pipeline, run = decided.pipeline, decided.run
    v = run.views[i]
    memo = run.memo(v)
    changes = {}
    for path, text in v.units:
        if d.outcome == DUPLICATE:
            m = pipeline.markers
            # index: the copy's position in the caller's list; number: among the messages, from 1
            ref, number = decided.positions[d.ref], d.ref + 1
            new = (m["duplicate"].format(index=ref, number=number) if d.reason == "exact"
                   else m["near_duplicate"].format(index=ref, number=number, similarity=_percent(d.similarity)))
        elif d.outcome == CODE_SPLIT:
            new = _split_marker(pipeline, text, memo)
        else:
            new = _summary_marker(pipeline, text, memo)
        if len(new) < len(text):
            changes[path] = new
    if not changes:
        return None, Decision(PRESERVE, d.step, "not shorter")
    return replaced(run.message(v), changes), d


def apply(decided, window):
    """(new messages by view index, {view index: original}, decisions applied)."""
    out, originals, applied = [], {}, []
    for i, v in enumerate(decided.run.views):
        d = decided.decision(i, window)
        if d.outcome == PRESERVE:
            new = None
        else:
            new, d = decided.rendered(i)
        applied.append(d)
        if new is None:
            out.append(decided.run.messages[i])
        else:
            out.append(new)
            originals[i] = decided.run.messages[i]
    return out, originals, applied


def text_of(views_or_messages):
    """Total characters of the text units."""
    from .shapes import view

    return sum(len(t) for m in views_or_messages for _, t in view(m, 0).units)


__all__ = ["decide", "apply", "COMPRESS", "CODE_SPLIT", "DUPLICATE", "PRESERVE"]
