"""One pass over a transcript's records (engine/agents/records.py, from the
agent's own reader): turns, context fill, compactions, refreshes, tool
results per tool and errors.  Nothing here knows an agent's format.

What it relies on (each reader gives it so):
- a response may be recorded several times under one id (Claude Code: one
  line per content block; Gemini CLI: again when it completes): it counts
  once, with its last usage; a usage of no tokens at all (the agent's own
  messages: an API error, an interrupt) is no response;
- the context is a usage's `context` (input and cached tokens);
- side-chain records (a subagent's, inline) are not the main context; a
  subagent's own file holds only side-chain records, and then that chain is
  the one reported;
- a compaction starts a new stretch of the fill;
- a hook's added context is a `Delivered("hook")` record: recorded as the
  hook's by the agent (`via` "record", listed even when no banner names
  it) or found inside a message's text (`via` "text").

Memory stays bounded by the number of responses and tools, not the size of
the file: no record is kept once it is read.
"""

import re

from .banners import Banners


class Chain:
    """What one chain (main or side) of the transcript holds."""

    def __init__(self):
        self.responses = {}  # response id -> point dict, in first-seen order
        self.turns = 0
        self.turn_x = []
        self.compactions = []
        self.refreshes = []
        self.tool_names = {}  # tool call id -> tool name
        self.tools = {}  # name -> tally, the whole session
        self.epoch_tools = {}  # name -> tally since the last compaction: what is in the context now
        self.errors = []
        self.error_count = 0
        self.segment = 0
        self.records = 0

    def x(self):
        return len(self.responses)


class Analyzer:
    def __init__(self, style, redact, original=None, count=None):
        self.style = style
        self.redact = redact
        # count(text): a refresh's tokens (the report's, with tiktoken); None:
        # not counted (the hooks' context audit reads no encoding)
        self.count = count
        # original(texts): (purge stubs among them, bytes their outputs held beyond
        # them) (engine/ccm/stub.py purged_size); None: no such reading
        self.original = original
        self.purged = 0
        self.main, self.side = Chain(), Chain()
        self.session_id = None
        self.cwd = None
        self.models = {}
        self.model = None  # the model of the latest Window record: a usage that names none ran it
        self.windows = []  # context windows the agent recorded
        self.versions = {}
        self.first_ts = None
        self.last_ts = None
        self.api_errors = 0
        self.hook_contexts = 0
        self.banners = Banners(style["refreshes"])
        self._not_typed = tuple(style["prompts"]["not_typed"])
        self._markers = tuple(style["errors"]["markers"])
        self._skip = [re.compile(p) for p in style["errors"]["skip_lines"]]
        self._strip = [re.compile(p) for p in style["errors"]["strip"]]
        self._by_kind = {"session": self._session, "version": self._version, "window": self._window,
                         "usage": self._usage, "prompt": self._prompt, "tool_call": self._call,
                         "tool_result": self._result, "compaction": self._compaction, "delivered": self._delivered,
                         "api_error": self._api_error}

    # -- one record -------------------------------------------------------
    def feed(self, rec):
        if rec.time:
            self.first_ts = self.first_ts or rec.time
            self.last_ts = rec.time
        chain = self.side if rec.sidechain else self.main
        chain.records += 1
        handler = self._by_kind.get(rec.kind)
        if handler is not None:
            handler(chain, rec)

    def _session(self, chain, rec):
        if isinstance(rec.id, str) and not self.session_id:
            self.session_id = rec.id
        if isinstance(rec.cwd, str) and not self.cwd:
            self.cwd = rec.cwd

    def _version(self, chain, rec):
        self.versions.setdefault(rec.value, None)

    def _window(self, chain, rec):
        if rec.model:
            self.model = rec.model
        if rec.tokens:
            self.windows.append(rec.tokens)

    def _api_error(self, chain, rec):
        self.api_errors += 1

    def _usage(self, chain, rec):
        if rec.window:
            self.windows.append(rec.window)
        tokens = rec.context
        if tokens <= 0:  # the agent's own messages (API errors, interrupts) carry zeros
            return
        model = rec.model or self.model or ""
        if model:
            self.models.setdefault(model, None)
        key = rec.response if isinstance(rec.response, str) else ("unnamed", len(chain.responses))
        point = chain.responses.get(key)
        if point is None:
            chain.responses[key] = {"x": chain.x(), "time": rec.time, "tokens": tokens, "model": model,
                                    "segment": chain.segment}
        else:
            point["tokens"] = tokens  # the same response, recorded again: its last usage

    def _prompt(self, chain, rec):
        typed = rec.text.strip()
        if not typed and not rec.images:
            return
        if typed and rec.text.lstrip().startswith(self._not_typed):
            return
        chain.turns += 1
        chain.turn_x.append(chain.x())

    def _compaction(self, chain, rec):
        trigger = rec.trigger if isinstance(rec.trigger, str) else None
        chain.compactions.append({"x": chain.x(), "time": rec.time, "line": rec.line, "trigger": trigger,
                                  "pre_tokens": rec.pre_tokens})
        chain.segment += 1
        chain.epoch_tools = {}

    def _delivered(self, chain, rec):
        if rec.how != "hook" or rec.kept:  # a compaction's copy of an earlier one is no refresh
            return
        via = "attachment" if rec.via == "record" else "text"
        if via == "attachment":
            self.hook_contexts += 1
        for text in rec.texts:
            for found in self.banners.refreshes(text, via):
                body = found.pop("text")
                tokens = self.count(body) if self.count is not None else None
                chain.refreshes.append({"x": chain.x(), "time": rec.time, "line": rec.line, **found, "tokens": tokens})

    # -- tools --------------------------------------------------------------
    @staticmethod
    def _tallies(chain, name):
        """The tool's tally for the whole session and for the context now."""
        out = []
        for tools in (chain.tools, chain.epoch_tools):
            t = tools.get(name)
            if t is None:
                t = tools[name] = {"calls": 0, "results": 0, "result_bytes": 0, "errors": 0, "images": 0}
            out.append(t)
        return out

    def _call(self, chain, rec):
        name = rec.tool or "?"
        if rec.id:
            chain.tool_names[rec.id] = name
        for tally in self._tallies(chain, name):
            tally["calls"] += 1

    def _result(self, chain, rec):
        name = chain.tool_names.get(rec.id, "?") if rec.id else "?"
        # a marker counts only where the result starts with it: quoted inside a successful result, it is data
        error = rec.is_error or rec.text.lstrip().startswith(self._markers)
        size = self._size(rec)
        for tally in self._tallies(chain, name):
            tally["results"] += 1
            tally["images"] += int(rec.image or 0)
            tally["result_bytes"] += size
            tally["errors"] += error
        if error:
            chain.error_count += 1
            if len(chain.errors) < self.style["errors"]["max_kept"]:
                chain.errors.append({"tool": name, "message": self._first_line(rec.text), "time": rec.time,
                                     "line": rec.line, "tool_use_id": rec.id or None})

    def _size(self, rec):
        """The bytes the model read: those of the outputs purge stubs stand
        for, with the result's other blocks."""
        if self.original is None:
            return rec.size
        stubs, extra = self.original(rec.parts)
        self.purged += stubs
        return rec.size + extra

    def _first_line(self, text):
        """The error's message: the line engine/text/errorline.py's rule
        picks, with the style's lists (the tool memory's rule), redacted
        and cut to `message_chars`."""
        from engine.core.settings import failure_head_chars
        from engine.text.errorline import pick

        for m in self._markers:  # <tool_use_error>...</tool_use_error>: the words, not the tags
            if m.startswith("<") and m.endswith(">"):
                text = text.replace(m, "").replace("</" + m[1:], "")
        errors = self.style["errors"]
        line = pick(text, searched=failure_head_chars(), skip_lines=self._skip, failure_lines=errors["failure_lines"],
                    lead_ins=errors["lead_ins"], generic=errors["generic"], clean=self._unlabelled)
        if not line:
            return ""
        limit = errors["message_chars"]
        line = self.redact(line)
        return line if len(line) <= limit else line[: limit - 1] + "…"

    def _unlabelled(self, raw):
        """A line without the label at its start (`strip`: Gemini CLI's
        "Output: "); a line with none keeps its indentation (a traceback's
        frames are told by it)."""
        line = raw.strip()
        if any(rx.fullmatch(line) for rx in self._skip):
            return line  # an agent's own line around the output: skipped as it is
        for rx in self._strip:
            if rx.match(line):
                return rx.sub("", line, count=1).strip()
        return raw

    # -- the result -------------------------------------------------------
    def chain(self):
        """The chain to report: the main one, or the side chain of a
        subagent's own file (which holds nothing else)."""
        if self.main.responses or self.main.turns or self.main.tools or not self.side.records:
            return "main", self.main
        return "subagent", self.side


def rank(tools, bytes_per_token):
    """[{name, calls, results, result_bytes, errors, images, est_tokens,
    share}] from per-tool tallies, the biggest first: the one ranking of
    tool consumers, used by the session report and by the hooks' context
    audit and monitor (through report.in_context), so their figures agree."""
    total = sum(t["result_bytes"] for t in tools.values())
    rows = []
    for name, t in sorted(tools.items(), key=lambda kv: (-kv[1]["result_bytes"], -kv[1]["calls"], kv[0])):
        rows.append({"name": name, **t, "est_tokens": int(round(t["result_bytes"] / bytes_per_token)),
                     "share": round(100.0 * t["result_bytes"] / total, 1) if total else 0.0})
    return rows
