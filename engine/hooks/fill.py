"""How full the context is: the latest main-chain usage record of the
session's transcript against the model's window, and where in the
transcript the response that reported it began.

The records come from the agent's transcript reader (engine/agents/
transcripts/), newest first.  One response may span several lines that
repeat its usage (Claude Code's assistant lines sharing `message.id`): the
latest is the response's figure.  Subagent (side-chain) records and the
agent's synthetic records (API errors) say nothing about the main context
and are skipped.  A compaction met before any usage record means the
context was just compacted: its size is unknown until the next response,
and counts as 0.

The figure counts what the response was sent, nothing written after its
first line: its own output, and the tool results the agent writes between
its lines and after them.  So the reader goes on back to the response's
first line, and says where it starts (`since`): a gate that asks how much
the context may have grown since the figure counts the bytes from there
(context_monitor.py, cadence.py), not from where the transcript ended when
it was read.

The window: the one the agent records (Codex's token_count, Copilot's
maxPromptTokens), else the agent's YAML (`context`: the regular window, and
the long one of long-context models).
"""

KINDS = ("usage", "compaction", "window")


class Usage(tuple):
    """(tokens, model, since) of the latest main-chain response: its
    tokens, its model and where it starts in the transcript; `window` the
    model's window where the agent recorded it."""

    def __new__(cls, tokens, model, since, window=None):
        self = super().__new__(cls, (tokens, model, since))
        self.window = window
        return self

    @property
    def tokens(self):
        return self[0]

    @property
    def model(self):
        return self[1]


def last_usage(path, max_bytes, agent=None):
    """The Usage of the latest main-chain response of `agent`'s transcript
    (the default agent when None; 0 tokens right after a compaction), None
    when the transcript says nothing."""
    from engine.agents import DEFAULT_AGENT, table
    from engine.agents.transcripts import backwards

    agent = agent or table.get(DEFAULT_AGENT)
    first, since, window = None, None, None
    # a response line is read whole however long (its usage may follow a
    # long text), within the tail's bound
    for rec in backwards(agent.data["transcript"]["reader"], path, max_bytes, KINDS, head_bytes=max_bytes):
        if rec.sidechain:
            continue
        if rec.kind == "window":
            window = window or rec.tokens
        elif rec.kind == "compaction":
            if first is None:
                return Usage(0, None, rec.offset, window)
            break
        elif rec.synthetic:
            continue
        elif first is None:
            first, since = rec, rec.offset
            if rec.response is None:
                break  # no id: the response cannot be told from the one before
        elif rec.response == first.response:
            since = rec.offset  # an earlier line of the same response
        else:
            break  # the response before it
    return None if first is None else Usage(first.context, first.model, since, first.window or window)


def window(agent, usage):
    """The model's context window: the one recorded, else per the agent's
    YAML: the long window for a model named as a long-context one, or
    once the context is already past the regular window (only a
    long-context model gets there)."""
    if usage.window:
        return usage.window
    size = agent.model_window(usage.model)
    return (agent.data["context"].get("long_window_tokens") or size) if usage.tokens > size else size


def fill_of(agent, usage):
    """(fill in percent, tokens, window) of a last_usage() answer, or None."""
    if usage is None:
        return None
    size = window(agent, usage)
    return 100.0 * usage.tokens / size, usage.tokens, size
