"""What a transcript says, in the engine's words: the records every agent's
reader (transcripts/) yields, whatever the agent writes on disk.

- Version: the agent's version, as its lines name it.
- Session: what a line says of the session: its id, its working folder or
  the agent's key of its project (`project`, see a reader's
  `project_key`), the permission mode.
- Prompt: a prompt the user gave (`images`: how many images came with it).
- Usage: one model response's token figures; `context` is the prompt's size
  (what the context held), `window` the model's window when the agent
  records it.
- Window: the model and its context window, where the agent records them.
- Compaction: the context was compacted here (a new epoch starts).
- CompactionStart: where an agent that compacts in the background took
  the history its summary is made of (its Compaction, with the same `id`,
  comes later); what the session added in between is kept after the
  summary (Copilot).
- Resume: the session goes on in a new run of the agent (`--resume`);
  what the new run's requests hold of what hooks added before is the
  agent's `transcript.resumed`.
- Summary: the compaction's summary, the first thing of the new context
  (on the compaction's own line, or on a line of its own after it).
- ToolCall / ToolResult: a tool call and its result, paired by `id`; a
  result's `text` is what the model read, `size` its bytes, `image` how
  many images it held, `output` the tool's output as the agent's hooks
  receive it where the transcript keeps that shape (else None).
- Delivered: instructions the agent put in view itself (`how`:
  "instructions" at a start or after a compaction, "scoped" when a file
  matched a rule's scope) or a hook's added context ("hook", with its text;
  `via` "record" when the agent recorded it as a hook's, "text" when it is
  found inside a message's text).
- ApiError: a model call that failed (the agent retries or gives up).

Each record carries `sidechain` (a subagent's, not the main context),
`time` (the line's timestamp as the agent wrote it, or None) and `line`
(its line number, forward reading) or `offset` (the byte where its line
starts, from the end reading).
"""


class Record:
    __slots__ = ("sidechain", "line", "offset", "time")
    kind = "record"

    def __init__(self):
        self.sidechain = False
        self.line = 0
        self.offset = -1
        self.time = None


class Version(Record):
    __slots__ = ("value",)
    kind = "version"

    def __init__(self, value):
        super().__init__()
        self.value = value


class Session(Record):
    """`parent`: the session a subagent's own file belongs to (Codex keeps a
    spawned agent's rollout beside its sessions), else None."""

    __slots__ = ("id", "cwd", "project", "mode", "parent")
    kind = "session"

    def __init__(self, id=None, cwd=None, project=None, mode=None, parent=None):
        super().__init__()
        self.id, self.cwd, self.mode, self.parent = id, cwd, mode, parent
        self.project = project if project is not None else cwd


class Prompt(Record):
    __slots__ = ("text", "images")
    kind = "prompt"

    def __init__(self, text, images=0):
        super().__init__()
        self.text, self.images = text, images


class Usage(Record):
    """One response's usage; `cache_write_1h`: the part of `cache_write`
    written with the 1-hour lifetime, which is billed higher (Anthropic)."""
    __slots__ = ("context", "input", "output", "cache_read", "cache_write", "cache_write_1h", "model", "response",
                 "window", "synthetic")
    kind = "usage"

    def __init__(self, input=0, output=0, cache_read=0, cache_write=0, model=None, response=None, window=None,
                 context=None, synthetic=False, cache_write_1h=0):
        super().__init__()
        self.input, self.output, self.cache_read, self.cache_write = input, output, cache_read, cache_write
        self.cache_write_1h = min(cache_write_1h, cache_write)
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
    """`kept_prompts`: where a compaction that keeps the newest turns, written
    again after its summary, keeps them from: how many prompts they hold, so
    they begin at that many prompts' lines from the end of the transcript
    before it (0: it keeps none).  A count, not a text: a prompt typed twice
    names one place."""
    __slots__ = ("id", "pre_tokens", "trigger", "kept_prompts")
    kind = "compaction"

    def __init__(self, id="", pre_tokens=None, trigger=None, kept_prompts=0):
        super().__init__()
        self.id, self.pre_tokens, self.trigger, self.kept_prompts = id, pre_tokens, trigger, kept_prompts


class CompactionStart(Record):
    __slots__ = ("id",)
    kind = "compaction_start"

    def __init__(self, id=""):
        super().__init__()
        self.id = id


class Resume(Record):
    __slots__ = ()
    kind = "resume"


class Summary(Record):
    __slots__ = ("text",)
    kind = "summary"

    def __init__(self, text=""):
        super().__init__()
        self.text = text


class ToolCall(Record):
    __slots__ = ("id", "tool", "input")
    kind = "tool_call"

    def __init__(self, id, tool, input):
        super().__init__()
        self.id, self.tool, self.input = id, tool, input if isinstance(input, dict) else {}


class ToolResult(Record):
    """`parts`: the result's texts one by one, as the agent keeps them (its
    text blocks; `text` joins them): a purge stub is always a whole one.
    `is_error`: the call failed, by any sign (a command's exit status too);
    `call_failed`: the agent itself reported the call failed, so its
    failure event fired (Copilot: `success` false; a command that exited
    non-zero is a success there, reported by postToolUse); by default the
    same as `is_error`."""
    __slots__ = ("id", "text", "size", "is_error", "call_failed", "image", "output", "parts")
    kind = "tool_result"

    def __init__(self, id, text, size=None, is_error=False, image=0, output=None, parts=None, call_failed=None):
        super().__init__()
        self.id, self.text, self.is_error, self.image, self.output = id, text, bool(is_error), image, output
        self.call_failed = self.is_error if call_failed is None else bool(call_failed)
        self.size = size if size is not None else len(text.encode("utf-8", "replace"))
        self.parts = (text,) if parts is None else tuple(parts)


class Delivered(Record):
    """What the agent or a hook put into the context.  `kept`: written again
    by a compaction that kept it (in view after it, no delivery of its own)."""
    __slots__ = ("how", "paths", "texts", "via", "kept")
    kind = "delivered"

    def __init__(self, how, paths=(), texts=(), via="record", kept=False):
        super().__init__()
        self.how, self.paths, self.texts, self.via, self.kept = how, list(paths), list(texts), via, kept


class ApiError(Record):
    __slots__ = ("text",)
    kind = "api_error"

    def __init__(self, text=""):
        super().__init__()
        self.text = text


def tokens(value):
    """A usage's token figure: 0 when absent, the engine's bounded int
    (transcripts.max_tokens; a 400-digit number is clamped), None when it
    is no number (the usage is then left out, never read as 0)."""
    from engine.core.transcript import clamp_tokens

    return clamp_tokens(value or 0)


def usage_figures(*values):
    """The token figures of one usage, or None when one is no number."""
    out = [tokens(v) for v in values]
    return None if None in out else out


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
