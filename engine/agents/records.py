"""What a transcript says, in the engine's words: the records every agent's
reader (transcripts/) yields, whatever the agent writes on disk.

- Version: the agent's version, as its lines name it.
- Prompt: a prompt the user gave.
- Usage: one model response's token figures; `context` is the prompt's size
  (what the context held), `window` the model's window when the agent
  records it.
- Window: the model and its context window, where the agent records them.
- Compaction: the context was compacted here (a new epoch starts).
- ToolCall / ToolResult: a tool call and its result, paired by `id`.
- Delivered: instructions the agent put in view itself (`how`:
  "instructions" at a start or after a compaction, "scoped" when a file
  matched a rule's scope) or a hook's added context ("hook", with its text).

Each record carries `sidechain` (a subagent's, not the main context) and
`line` (its line number, forward reading) or `offset` (the byte where its
line starts, from the end reading).
"""


class Record:
    __slots__ = ("sidechain", "line", "offset")
    kind = "record"

    def __init__(self):
        self.sidechain = False
        self.line = 0
        self.offset = -1


class Version(Record):
    __slots__ = ("value",)
    kind = "version"

    def __init__(self, value):
        super().__init__()
        self.value = value


class Prompt(Record):
    __slots__ = ("text",)
    kind = "prompt"

    def __init__(self, text):
        super().__init__()
        self.text = text


class Usage(Record):
    __slots__ = ("context", "input", "output", "cache_read", "cache_write", "model", "response", "window", "synthetic")
    kind = "usage"

    def __init__(self, input=0, output=0, cache_read=0, cache_write=0, model=None, response=None, window=None,
                 context=None, synthetic=False):
        super().__init__()
        self.input, self.output, self.cache_read, self.cache_write = input, output, cache_read, cache_write
        self.context = context if context is not None else input + cache_read + cache_write
        self.model, self.response, self.window, self.synthetic = model, response, window, synthetic


class Window(Record):
    """The model a session runs and its context window, where the agent records them."""
    __slots__ = ("tokens", "model")
    kind = "window"

    def __init__(self, tokens=None, model=None):
        super().__init__()
        self.tokens, self.model = tokens, model


class Compaction(Record):
    __slots__ = ("id", "pre_tokens", "trigger")
    kind = "compaction"

    def __init__(self, id="", pre_tokens=None, trigger=None):
        super().__init__()
        self.id, self.pre_tokens, self.trigger = id, pre_tokens, trigger


class ToolCall(Record):
    __slots__ = ("id", "tool", "input")
    kind = "tool_call"

    def __init__(self, id, tool, input):
        super().__init__()
        self.id, self.tool, self.input = id, tool, input if isinstance(input, dict) else {}


class ToolResult(Record):
    __slots__ = ("id", "text", "size", "is_error", "image")
    kind = "tool_result"

    def __init__(self, id, text, size=None, is_error=False, image=False):
        super().__init__()
        self.id, self.text, self.is_error, self.image = id, text, bool(is_error), image
        self.size = size if size is not None else len(text.encode("utf-8", "surrogatepass"))


class Delivered(Record):
    __slots__ = ("how", "paths", "texts")
    kind = "delivered"

    def __init__(self, how, paths=(), texts=()):
        super().__init__()
        self.how, self.paths, self.texts = how, list(paths), list(texts)


def clamp(value, limit=None):
    """A token or byte figure from a transcript as an int in 0..`limit`
    (default: the engine's transcripts.max_tokens; garbage: 0), so a
    400-digit figure cannot overflow a sum or a fill."""
    if limit is None:
        from engine.core.settings import transcript_bounds

        limit = transcript_bounds()["max_tokens"]
    if isinstance(value, str) and len(value.strip()) > len(str(limit)) and value.strip().isdigit():
        return limit  # int() of a huge digit string is refused by Python, not a 0
    try:
        n = int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0
    return max(0, min(n, limit))
