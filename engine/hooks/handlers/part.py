"""What one handler contributes to an event's answer.

The dispatcher merges the parts of every due handler, in order, into the one
answer the agent reads (see dispatch.merge):
- `text`: added to the model's context (`additionalContext`), under the
  per-event cap; a part that does not fit waits for the next event;
- `marks`: session state written after the event;
- `user_message`: shown to the user, not to the model (`systemMessage`);
- `tool_decision`: PreToolUse only, the `permissionDecision`,
  `permissionDecisionReason` and/or `updatedInput` fields; the first handler
  that decides wins, later ones are logged and ignored;
- `stdout`: printed as plain text instead of JSON (PreCompact: the agent
  takes it as the compaction's instructions);
- `tool_output`: PostToolUse only, the `updatedToolOutput` that replaces what
  the model reads of the tool's output (in the tool's own output shape); the
  first handler that gives one wins.
"""


class Part:
    __slots__ = ("name", "text", "marks", "user_message", "tool_decision", "stdout", "tool_output", "held")

    def __init__(self, name, text=None, marks=None, user_message=None, tool_decision=None, stdout=None,
                 tool_output=None, held=None):
        self.name = name
        self.text = text
        self.marks = marks
        self.user_message = user_message
        self.tool_decision = tool_decision
        self.stdout = stdout
        self.tool_output = tool_output
        self.held = held  # [rule text] left out because the model has it in view already (nothing is sent)


def agent_len(text):
    """The length the agent gives a hook's string: UTF-16 code units
    (JavaScript's `length`: an emoji counts two).  Claude Code's 10,000
    limit counts them (measured with 2.1.332: 5,010 emoji were kept, 6,000
    went to a file), and hooks.max_injection_chars with it."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def cut_to(text, cap):
    """`text` within `cap` such units: cut, an ellipsis last."""
    if agent_len(text) <= cap:
        return text
    return text.encode("utf-16-le", "surrogatepass")[: 2 * (cap - 1)].decode("utf-16-le", "ignore") + "\u2026"


def as_int(value):
    """A counter read back from state: garbage counts as 0."""
    try:
        return int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0
