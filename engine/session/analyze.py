"""One pass over a transcript's records: turns, context fill, compactions,
refreshes, tool results per tool and errors.

Facts of the transcript format this relies on (../shared/DESIGN.md):
- one API response spans several assistant lines sharing `message.id`, each
  repeating `usage`: a response counts once, with its last usage;
- the context is input + cache creation + cache read tokens of a response;
- side-chain lines (`isSidechain`, subagents in 1.0.x) are not the main
  context; a subagent's own file holds only side-chain lines, and then that
  chain is the one reported;
- a `system` `compact_boundary` line is a compaction: the fill drawn after it
  is a new stretch;
- a hook's additionalContext is an `attachment` of type
  hook_additional_context (2.x), or text inside a user/system line (older).

Memory stays bounded by the number of responses and tools, not the size of
the file: no record is kept once it is read.
"""

import re

from engine.core.transcript import clamp_tokens, usage_tokens


class Chain:
    """What one chain (main or side) of the transcript holds."""

    def __init__(self):
        self.responses = {}  # message id -> point dict, in first-seen order
        self.turns = 0
        self.turn_x = []
        self.compactions = []
        self.refreshes = []
        self.tool_names = {}  # tool_use id -> tool name
        self.tools = {}  # name -> tally, the whole session
        self.epoch_tools = {}  # name -> tally since the last compaction: what is in the context now
        self.errors = []
        self.error_count = 0
        self.segment = 0
        self.lines = 0

    def x(self):
        return len(self.responses)


class Analyzer:
    def __init__(self, style, redact):
        self.style = style
        self.redact = redact
        self.main, self.side = Chain(), Chain()
        self.session_id = None
        self.cwd = None
        self.models = {}
        self.versions = {}
        self.agent_ids = {}
        self.first_ts = None
        self.last_ts = None
        self.api_errors = 0
        self.hook_contexts = 0
        banners = style["refreshes"]["banners"]
        self._banners_rx = [(b["handler"], re.compile(b["pattern"])) for b in banners]
        self._wrappers = tuple(style["refreshes"]["wrappers"])
        self._unmatched = style["refreshes"].get("unmatched") or ""
        self._not_typed = tuple(style["prompts"]["not_typed"])
        self._markers = tuple(style["errors"]["markers"])

    # -- one record -------------------------------------------------------
    def feed(self, lineno, rec):
        kind = rec.get("type")
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if ts:
            self.first_ts = self.first_ts or ts
            self.last_ts = ts
        if isinstance(rec.get("sessionId"), str) and not self.session_id:
            self.session_id = rec["sessionId"]
        if isinstance(rec.get("cwd"), str) and not self.cwd:
            self.cwd = rec["cwd"]
        if isinstance(rec.get("version"), str):
            self.versions.setdefault(rec["version"], None)
        if isinstance(rec.get("agentId"), str):
            self.agent_ids.setdefault(rec["agentId"], None)
        chain = self.side if rec.get("isSidechain") is True else self.main
        if kind in ("user", "assistant", "system", "attachment"):
            chain.lines += 1
        if kind == "assistant":
            self._assistant(chain, rec, ts)
        elif kind == "user":
            self._user(chain, rec, ts, lineno)
        elif kind == "system":
            self._system(chain, rec, ts, lineno)
        elif kind == "attachment":
            att = rec.get("attachment")
            if isinstance(att, dict) and att.get("type") == "hook_additional_context":
                self.hook_contexts += 1
                content = att.get("content")
                texts = content if isinstance(content, list) else [content]
                for t in texts:
                    if isinstance(t, str):
                        self._banners(chain, t, ts, lineno, "attachment")

    def _assistant(self, chain, rec, ts):
        msg = rec.get("message")
        if not isinstance(msg, dict):
            return
        content = msg.get("content")
        if isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    name = b.get("name") if isinstance(b.get("name"), str) else "?"
                    chain.tool_names[b["id"]] = name
                    for tally in self._tallies(chain, name):
                        tally["calls"] += 1
        usage = msg.get("usage")
        if not isinstance(usage, dict):
            return
        tokens = usage_tokens(usage)  # each figure clamped: a 400-digit one cannot overflow the fill
        if tokens is None or tokens <= 0:  # the agent's synthetic messages (API errors, interrupts) carry zeros
            return
        model = msg.get("model") if isinstance(msg.get("model"), str) else ""
        if model:
            self.models.setdefault(model, None)
        mid = msg.get("id") if isinstance(msg.get("id"), str) else f"uuid:{rec.get('uuid')}:{id(rec)}"
        point = chain.responses.get(mid)
        if point is None:
            chain.responses[mid] = {"x": chain.x(), "time": ts, "tokens": tokens, "model": model,
                                    "segment": chain.segment}
        else:
            point["tokens"] = tokens  # the same response, repeated per block: its last usage

    def _texts(self, content):
        if isinstance(content, str):
            return [content]
        if isinstance(content, list):
            return [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
                    and isinstance(b.get("text"), str)]
        return []

    def _user(self, chain, rec, ts, lineno):
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        for b in results:
            self._result(chain, b, ts, lineno)
        texts = self._texts(content)
        for t in texts:
            if rec.get("isMeta") or any(w in t for w in self._wrappers):
                self._banners(chain, t, ts, lineno, "text")
        if results or rec.get("isMeta") or rec.get("isCompactSummary") or not isinstance(content, (str, list)):
            return
        typed = [t for t in texts if t.strip()]
        others = isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "image" for b in content)
        if not typed and not others:
            return
        if typed and all(t.lstrip().startswith(self._not_typed) for t in typed):
            return
        chain.turns += 1
        chain.turn_x.append(chain.x())

    def _system(self, chain, rec, ts, lineno):
        sub = rec.get("subtype")
        if sub == "compact_boundary":
            meta = rec.get("compactMetadata") if isinstance(rec.get("compactMetadata"), dict) else {}
            pre = meta.get("preTokens")
            chain.compactions.append({"x": chain.x(), "time": ts, "line": lineno,
                                      "trigger": meta.get("trigger") if isinstance(meta.get("trigger"), str) else None,
                                      "pre_tokens": clamp_tokens(pre) if isinstance(pre, int) else None})
            chain.segment += 1
            chain.epoch_tools = {}
        elif sub == "api_error":
            self.api_errors += 1
        content = rec.get("content")
        if isinstance(content, str) and any(w in content for w in self._wrappers):
            self._banners(chain, content, ts, lineno, "text")

    def _banners(self, chain, text, ts, lineno, via):
        found = sorted((m.start(), handler, m) for handler, rx in self._banners_rx for m in rx.finditer(text))
        if not found and via == "attachment" and self._unmatched and text.strip():
            # a hook's injection no banner names: listed all the same
            chain.refreshes.append({"x": chain.x(), "time": ts, "line": lineno, "handler": self._unmatched,
                                    "turn": None, "chars": len(text.rstrip()), "via": via})
            return
        for i, (start, handler, m) in enumerate(found):
            end = found[i + 1][0] if i + 1 < len(found) else len(text)
            body = text[start:end].rstrip()
            # a wrapper's closing tag is the agent's, not the injection's
            for w in self._wrappers:
                if w.startswith("<") and body.endswith("</" + w[1:]):
                    body = body[: -len(w) - 1].rstrip()
            turn = m.groupdict().get("turn")
            chain.refreshes.append({"x": chain.x(), "time": ts, "line": lineno, "handler": handler,
                                    "turn": int(turn) if turn and turn.isdigit() else None,
                                    "chars": len(body), "via": via})

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

    def _result(self, chain, block, ts, lineno):
        tid = block.get("tool_use_id")
        name = chain.tool_names.get(tid, "?") if isinstance(tid, str) else "?"  # a list is no id
        content = block.get("content")
        images = 0
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            texts = [b.get("text") for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
            images = sum(1 for b in content if isinstance(b, dict) and b.get("type") == "image")
        else:
            texts = []
        size = sum(len(t.encode("utf-8", errors="replace")) for t in texts)
        text = "\n".join(texts)
        # a marker counts only where the result starts with it: quoted inside a successful result, it is data
        error = block.get("is_error") is True or text.lstrip().startswith(self._markers)
        for tally in self._tallies(chain, name):
            tally["results"] += 1
            tally["images"] += images
            tally["result_bytes"] += size
            tally["errors"] += error
        if error:
            chain.error_count += 1
            if len(chain.errors) < self.style["errors"]["max_kept"]:
                chain.errors.append({"tool": name, "message": self._first_line(text), "time": ts, "line": lineno,
                                     "tool_use_id": block.get("tool_use_id")})

    def _first_line(self, text):
        for m in self._markers:  # <tool_use_error>...</tool_use_error>: the words, not the tags
            if m.startswith("<") and m.endswith(">"):
                text = text.replace(m, "").replace("</" + m[1:], "")
        for line in text.splitlines():
            line = line.strip()
            if line:
                limit = self.style["errors"]["message_chars"]
                line = self.redact(line)
                return line if len(line) <= limit else line[: limit - 1] + "…"
        return ""

    # -- the result -------------------------------------------------------
    def chain(self):
        """The chain to report: the main one, or the side chain of a
        subagent's own file (which holds nothing else)."""
        if self.main.responses or self.main.turns or self.main.tools or not self.side.lines:
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

