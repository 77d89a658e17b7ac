"""`engine purge --summarize`: old assistant prose becomes an extractive
summary (the message pipeline `purge.summarize.pipeline`), and the original
`message.content` goes to the content cache first, so nothing is lost: the
summary ends with a reference (`purge.summarize.reference`) that names the
blob, `engine cache show KEY` prints the original back byte for byte, and gc
keeps the blob while the transcript names it.

Only main-chain assistant lines before the last `recency` user/assistant
messages are touched; thinking blocks, tool calls and ids never change (the
pipeline rewrites text blocks only).  A message holding a secret stays as it
is, since the cache never stores one.
"""

import json


def count_messages(path):
    """User and assistant lines of the main chain, for the recency window."""
    from engine.core.transcript import lines

    n = 0
    with open(path, "rb") as fh:
        for _start, _end, raw in lines(fh):
            if raw is None or b'"type"' not in raw:  # a line too long to hold is no message
                continue
            try:
                d = json.loads(raw)
            except ValueError:
                continue
            if isinstance(d, dict) and d.get("type") in ("user", "assistant") and not d.get("isSidechain"):
                n += 1
    return n


class ProseSummarizer:
    def __init__(self, settings, store, total_messages, report, session=None, dry_run=False, recency=None):
        from engine.messages.load import load

        conf = settings["purge"]["summarize"]
        self.pipeline = load(conf["pipeline"])
        from .selfcmd import engine_shell

        self.reference = conf["reference"]
        self.engine = engine_shell()  # {engine}: this engine's absolute command, as stubs name it
        self.recency = conf["recency"] if recency is None else recency
        self.first_kept = max(0, total_messages - self.recency)
        self.store, self.report, self.session, self.dry_run = store, report, session, dry_run
        self.seen = 0  # main-chain user/assistant lines so far

    def line(self, d):
        """Summarize this parsed line in place when it is due; True if changed."""
        if d.get("type") not in ("user", "assistant") or d.get("isSidechain"):
            return False
        index, self.seen = self.seen, self.seen + 1
        if d.get("type") != "assistant" or index >= self.first_kept:
            return False
        from engine.messages import compress_messages

        out = compress_messages([d], self.pipeline, transcript=True, recency=0)
        if not out["verbatim"]:
            return False
        from engine.core.transcript import json_utf8

        original = json_utf8(json.dumps(d["message"]["content"], ensure_ascii=False))  # JSON that reads back
        summary = out["messages"][0]["message"]["content"]
        sized = _with_note(summary, self.reference.format(key="0" * 64, engine=self.engine))
        after = len(json_utf8(json.dumps(sized, ensure_ascii=False)))
        if after >= len(original):  # the summary and its reference would not be shorter
            return False
        cwd = d.get("cwd") if isinstance(d.get("cwd"), str) else None  # its project is the entry's origin
        key = self.store.put(original, {"tool": "assistant_prose", "session": self.session, "cwd": cwd},
                             session=self.session, dry_run=self.dry_run, sync=False)
        if key is None:  # a secret: never cached, so the prose stays
            self.report.repair("kept_secret")
            return False
        new = _with_note(summary, self.reference.format(key=key, engine=self.engine))
        d["message"]["content"] = new
        self.report.add("assistant_prose", len(original) - after)
        self.report.keys.add(key)
        return True


def _with_note(content, note):
    """The summarized content with the reference after its last text."""
    if isinstance(content, str):
        return content + " " + note
    content = [dict(b) for b in content]
    texts = [b for b in content if b.get("type") == "text"]
    texts[-1]["text"] = texts[-1]["text"] + " " + note
    return content
