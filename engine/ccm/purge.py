"""`engine purge`: shrink a session transcript without losing anything, and
repair its structure.

What goes: thinking blocks (unless kept; a kept block, signature included,
is never changed), and every string over the threshold that holds a tool's
output, wherever the transcript keeps a copy: a tool_result's content (a
string or text blocks), the top-level `toolUseResult` and progress lines'
`data` (these duplicates hold most of a transcript's bytes).  Each such
string is stored in the content cache first and replaced by a stub naming
its key, so `engine cache show KEY` prints it back byte-exact.  A string
holding a secret stays inline (it is never cached).

What is repaired: a `parentUuid` naming no line of the file is pointed at
the nearest earlier user/assistant/system line (never a progress line); a
line left empty by the purge is dropped and its children take its parent;
a tool_result whose tool_use is nowhere is removed.  A repair never invents
content: a tool_use that never got a result is left as it is (the agent
answers it itself when the session resumes).

How: two streaming passes (ids first, then the rewrite), one bounded line
at a time (engine/core/transcript.py), so memory follows the longest line
up to `transcripts.max_line_bytes`, not the file.  A line not changed is
written back as its original bytes; a line changed keeps each number as it
was written (1E5 stays 1E5), and a line naming a key twice is kept whole
(only the key's last value would be written back); a longer line is never
parsed nor held: it is copied through unchanged, in pieces (reported as
kept_long_line).  The original is copied to a timestamped backup first; the
result is written to a temporary file and renamed over the transcript, and
only if the transcript did not change meanwhile.  A transcript modified in
the last `purge.busy_seconds` is refused unless forced: a live session is
writing it.
"""

import json
import os
import time

from engine.base.errors import UserError

from .stub import is_stub, opening

THINKING = ("thinking", "redacted_thinking")
CONVERSATION = ("user", "assistant", "system")
# Keys whose strings are never stubbed: thinking signatures must never change.
NEVER_STUB = ("signature",)


class Report:
    def __init__(self):
        self.kinds = {}  # kind -> [count, bytes removed, removed texts (for tokens) or None]
        self.lines_in = self.lines_out = self.bytes_in = self.bytes_out = 0
        self.keys = set()
        self.repairs = {}
        self.changed = False  # any line changed, dropped or added: the file is rewritten only then

    def add(self, kind, removed_bytes, text=None):
        k = self.kinds.setdefault(kind, [0, 0, []])
        k[0] += 1
        k[1] += removed_bytes
        if text is not None and k[2] is not None:
            k[2].append(text)

    def repair(self, kind):
        self.repairs[kind] = self.repairs.get(kind, 0) + 1


def _utf8_len(text):
    return len(text.encode("utf-8", "surrogatepass"))


class Purger:
    def __init__(self, settings, store, threshold=None, keep_thinking=False, repair_only=False,
                 dry_run=False, session=None, keep_texts=False, summarize=False, recency=None):
        self.settings = settings
        self.store = store
        self.threshold = settings["purge"]["threshold_bytes"] if threshold is None else threshold
        self.keep_thinking = keep_thinking
        self.repair_only = repair_only
        self.dry_run = dry_run
        self.session = session
        self.keep_texts = keep_texts
        self.report = Report()
        self._openings = [opening(settings, t) for t in ("template", "purge_template")]
        self._stubs = {}  # sha256 of an output -> its stub, this run (not the output: memory stays bounded)
        self.summarize = summarize and not repair_only
        self.recency = recency
        self.first_cwd = None  # the transcript's first cwd: the folder of a line that names none

    # -- the stub -------------------------------------------------------------
    def _stub(self, text, kind, source):
        """The stub replacing `text`, or None to keep it (small, a stub, a secret)."""
        if not isinstance(text, str) or len(text) * 4 <= self.threshold:  # 4 bytes per character at most
            return None
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= self.threshold or is_stub(text, self._openings):
            return None
        # The agent keeps each output up to four times (tool_result,
        # toolUseResult, progress): stored once per run, stubbed everywhere.
        digest = self.store.key_for(data, self.store.project_for(None, source), create=not self.dry_run)
        stub = self._stubs.get(digest)
        if stub is None:
            key = self.store.put(data, source, session=self.session, dry_run=self.dry_run, sync=False)
            if key is None:
                self.report.repair("kept_secret")
                return None
            from .store import count_lines
            from .stub import render

            meta = {"bytes": len(data), "lines": count_lines(data), "pin": {"level": "none"}}
            if not self.dry_run:
                meta = self.store.meta(key) or meta
            stub = self._stubs[digest] = render(self.settings, "purge_template", key, self.store, meta, "",
                                              source.get("tool", ""))
            self.report.keys.add(key)
        self.report.add(kind, len(data) - _utf8_len(stub), text if self.keep_texts else None)
        return stub

    def _stub_tree(self, node, kind, source):
        """Stub every long string inside a JSON value; (new value, changed)."""
        if isinstance(node, str):
            s = self._stub(node, kind, source)
            return (s, True) if s is not None else (node, False)
        changed = False
        if isinstance(node, dict):
            out = {}
            for k, v in node.items():
                if k in NEVER_STUB:
                    out[k] = v
                    continue
                out[k], c = self._stub_tree(v, kind, source)
                changed |= c
            return (out, True) if changed else (node, False)
        if isinstance(node, list):
            out = []
            for v in node:
                nv, c = self._stub_tree(v, kind, source)
                out.append(nv)
                changed |= c
            return (out, True) if changed else (node, False)
        return node, False

    # -- pass 1 ---------------------------------------------------------------
    def scan(self, path):
        from engine.core.transcript import lines

        uuids, uses = set(), {}
        self.unparsable = 0
        with open(path, "rb") as fh:
            for _start, _end, raw in lines(fh):
                d = None if raw is None else _parse(raw)  # a line too long to hold is not parsed
                if d is None:
                    self.unparsable += 1
                    continue
                if self.first_cwd is None and isinstance(d.get("cwd"), str) and os.path.isabs(d["cwd"]):
                    self.first_cwd = d["cwd"]
                if isinstance(d.get("uuid"), str):
                    uuids.add(d["uuid"])
                content = _content(d)
                if d.get("type") == "assistant":
                    ids = {b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"
                           and isinstance(b.get("id"), str)}  # a list is no id (and no key)
                    for i in ids:
                        uses[i] = d.get("uuid")
        return uuids, uses

    # -- pass 2 ---------------------------------------------------------------
    def rewrite(self, path, out):
        uuids, uses = self.scan(path)
        rep = self.report
        prose = None
        if self.summarize:
            from .summarize import ProseSummarizer, count_messages

            prose = ProseSummarizer(self.settings, self.store, count_messages(path), rep, self.session,
                                    self.dry_run, self.recency)
        reparent = {}
        last_conv = {}
        # A line that does not parse may hold the tool_use, the tool_result or
        # the uuid another line names: with one in the file, nothing is judged
        # missing (no parent relinked, no orphan removed, no result added).
        sure = not self.unparsable
        from engine.core.transcript import lines

        w = _Writer(out, rep)
        with open(path, "rb") as fh, open(path, "rb") as src:
            for start, end, raw in lines(fh):
                rep.lines_in += 1
                rep.bytes_in += end - start
                if raw is None:  # too long to hold: copied through unchanged, in pieces
                    rep.repair("kept_long_line")
                    w.copy(src, start, end)
                    continue
                d = _parse(raw)
                if d is None:
                    rep.repair("kept_unparsable_line")  # byte for byte, torn or not
                    w.raw(raw)
                    continue
                try:
                    line = self._line(d, raw, uses, uuids, reparent, last_conv, sure, prose)
                except RecursionError:  # nested deeper than the walk can follow: kept as it was
                    rep.repair("kept_unparsable_line")
                    w.raw(raw)
                    continue
                if line is None:
                    rep.changed = True
                    continue
                if line is raw:
                    w.raw(raw)
                else:
                    rep.changed = True
                    w.line(line)
                uid, kind = d.get("uuid"), d.get("type")
                side = bool(d.get("isSidechain"))
                if isinstance(uid, str) and kind in CONVERSATION:
                    last_conv[side] = uid
        return rep

    def _line(self, d, raw, uses, uuids, reparent, last_conv, sure, prose):
        """The new bytes of one parsed line: `raw` itself when unchanged,
        None when the line goes."""
        changed = self._relink(d, uuids, reparent, last_conv, sure)
        kind = d.get("type")
        touched, drop = self._content(d, kind, uses, sure)
        changed |= touched
        if not self.repair_only and not drop:
            changed |= self._stub_fields(d, kind)
        if prose is not None and not drop and prose.line(d):
            changed = True
        if drop:
            uid = d.get("uuid")
            if isinstance(uid, str):
                reparent[uid] = d.get("parentUuid")
            self.report.repair("dropped_empty_line")
            return None
        return _dump(d) if changed else raw

    def _relink(self, d, uuids, reparent, last_conv, sure):
        """Point the line's parent past the lines dropped (and, when `sure`,
        at the last conversation line of its chain when it names none there);
        True when it changed."""
        parent = d.get("parentUuid")
        if not isinstance(parent, str):
            return False
        fixed = _follow(parent, reparent)
        if sure and isinstance(fixed, str) and fixed not in uuids:
            fixed = last_conv.get(bool(d.get("isSidechain")))
            self.report.repair("relinked_parent")
        if fixed == parent:
            return False
        d["parentUuid"] = fixed
        return True

    def _content(self, d, kind, uses, sure):
        """(changed, drop) after the line's message blocks: thinking purged,
        orphan tool results removed (when `sure`), tool results stubbed; a
        line whose every block went is dropped (never left as content: [])."""
        rep = self.report
        msg = d.get("message") if isinstance(d.get("message"), dict) else None
        content = msg.get("content") if msg else None
        if not isinstance(content, list):
            return False, False
        new = []
        touched = False
        for b in content:
            if not isinstance(b, dict):
                new.append(b)
                continue
            t = b.get("type")
            if t in THINKING and kind == "assistant" and not self.keep_thinking and not self.repair_only:
                rep.add("thinking", _utf8_len(json.dumps(b, ensure_ascii=False)), b.get("thinking", ""))
                touched = True
                continue
            if sure and t == "tool_result" and isinstance(b.get("tool_use_id"), str) and b["tool_use_id"] not in uses:
                rep.repair("removed_orphan_tool_result")
                touched = True
                continue
            if t == "tool_result" and not self.repair_only:
                b, c = self._result_block(b, d)
                touched |= c
            new.append(b)
        if not touched:
            return False, False
        msg["content"] = new
        return True, not new and kind in ("assistant", "user")

    def _stub_fields(self, d, kind):
        """Stub the long strings of the line's toolUseResult (and a progress
        line's data); True when one was."""
        changed = False
        src = {"tool": "toolUseResult", "session": d.get("sessionId"), "cwd": self._cwd(d)}
        for field, what in (("toolUseResult", "toolUseResult"), ("data", "progress")):
            if field in d and (field != "data" or kind == "progress"):
                # One rule: each long string is stubbed where it sits, its
                # blob the string's exact bytes; an object stays an object.
                v, c = self._stub_tree(d[field], what, dict(src, tool=what))
                if c:
                    d[field] = v
                    changed = True
        return changed

    def _cwd(self, d):
        """The folder a line's output was made in (its project is the
        entry's origin): the line's cwd, else the transcript's first."""
        cwd = d.get("cwd")
        return cwd if isinstance(cwd, str) and os.path.isabs(cwd) else self.first_cwd

    def _result_block(self, b, line):
        src = {"tool": "tool_result", "tool_use_id": b.get("tool_use_id"), "cwd": self._cwd(line)}
        c = b.get("content")
        if isinstance(c, str):
            s = self._stub(c, "tool_result", src)
            if s is not None:
                return dict(b, content=s), True
            return b, False
        if isinstance(c, list):
            changed, new = False, []
            for blk in c:
                if isinstance(blk, dict) and blk.get("type") == "text":
                    s = self._stub(blk.get("text"), "tool_result", src)
                    if s is not None:
                        blk = dict(blk, text=s)
                        changed = True
                new.append(blk)
            if changed:
                return dict(b, content=new), True
        return b, False


class _Writer:
    """Writes lines out, counting them; a line that came without its newline
    (a torn last line) is written as it was, and a newline goes before
    anything written after it, so no two lines ever join."""

    def __init__(self, out, report):
        self.out, self.report, self.open = out, report, False

    def raw(self, data):
        self._write(data)

    def copy(self, src, start, end):
        """Bytes start..end of `src`, copied in pieces (engine/core/transcript.py)."""
        from engine.core.transcript import copy_range

        if self.open:
            self.out.write(b"\n")
            self.report.bytes_out += 1
        self.out.flush()  # the pieces go after what is buffered
        copied = copy_range(src, self.out, start, end)
        src.seek(end - 1)
        self.open = src.read(1) != b"\n"
        self.report.lines_out += 1
        self.report.bytes_out += copied

    def line(self, data):
        self._write(data)

    def _write(self, data):
        if self.open:
            self.out.write(b"\n")
            self.report.bytes_out += 1
        self.out.write(data)
        self.open = not data.endswith(b"\n")
        self.report.lines_out += 1
        self.report.bytes_out += len(data)


def _parse(raw):
    """A transcript line as a dict, or None when it is not one (not JSON, not
    UTF-8, torn, not an object, nested too deep to parse) or not one a
    rewrite keeps whole: a number JSON cannot write back (1e400 would come
    back as Infinity, no JSON), or an object naming a key twice (only the
    last would be written back).  A number is written back as it was
    written (1E5 stays 1E5: strictjson.loads_exact)."""
    from engine.base import strictjson

    try:
        d = strictjson.loads_exact(raw)
    except (ValueError, RecursionError):
        return None
    return d if isinstance(d, dict) else None


def _follow(parent, reparent):
    """Where a parent that was dropped leads; a cycle (a line its own parent,
    two lines each other's) ends where it closes."""
    seen = set()
    fixed = parent
    while isinstance(fixed, str) and fixed in reparent and fixed not in seen:
        seen.add(fixed)
        fixed = reparent[fixed]
    if isinstance(fixed, str) and fixed in seen:
        return None  # the chain led back into itself: the line is a root now
    return fixed


def _content(d):
    msg = d.get("message")
    c = msg.get("content") if isinstance(msg, dict) else None
    return c if isinstance(c, list) else []


def _dump(d):
    from engine.base.strictjson import dumps_exact
    from engine.core.transcript import json_utf8

    return json_utf8(dumps_exact(d) + "\n")


# -- the whole operation -------------------------------------------------------

def busy(path, seconds, now=None):
    now = time.time() if now is None else now
    return now - os.stat(path).st_mtime < seconds


def purge_file(path, settings, store, threshold=None, keep_thinking=False, repair_only=False,
               dry_run=False, analyze=False, force=False, summarize=False, recency=None):
    """Purge one transcript; returns (Report, backup path or None: the file
    was not rewritten)."""
    given = os.path.abspath(path)
    if not os.path.isfile(given):
        raise UserError("no such transcript; give a session id, a path, or --current", given)
    path = os.path.realpath(given)  # a symlink is followed: the real transcript is purged, the link stays a link
    before = os.stat(path)
    writes = not (dry_run or analyze)
    if writes and not force and busy(path, settings["purge"]["busy_seconds"]):
        raise UserError(f"modified less than {settings['purge']['busy_seconds']} s ago: a live session may be "
                        "writing it; end the session first, or pass --force", given)
    session = os.path.splitext(os.path.basename(given))[0]
    p = Purger(settings, store, threshold, keep_thinking, repair_only, dry_run=not writes, session=session,
               keep_texts=analyze, summarize=summarize, recency=recency)
    if not writes:
        with open(os.devnull, "wb") as sink:
            p.rewrite(path, sink)
        return p.report, None
    from . import purge_files

    with purge_files.locked(path, given):
        purge_files.clean_leftovers(path, settings["purge"]["busy_seconds"])
        tmp = purge_files.temp(path, "new")
        try:
            with purge_files.writing(tmp, path):
                with open(tmp, "wb") as out:
                    p.rewrite(path, out)
                    out.flush()
                    os.fsync(out.fileno())
            if not p.report.changed:  # nothing to remove or repair: not rewritten, no new backup
                return p.report, None
            os.sync()  # the blobs the stubs name are on disk before the outputs leave the transcript
            backup = purge_files.backup(path, settings["purge"])
            now = os.stat(path)
            if (now.st_size, now.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
                raise UserError("the transcript changed while it was being purged (a live session?); nothing was "
                                "replaced, run again when it is idle", given)
            from .refs import remember

            with purge_files.writing(path, path):
                if p.report.keys:  # gc searches it for its stubs from now on
                    remember(store, path, settings["gc"]["transcripts"])
                os.replace(tmp, path)
                tmp = None
                purge_files.sync_folder(path)
        finally:
            if tmp is not None:
                purge_files.unlink(tmp)
        purge_files.prune_backups(path, settings["purge"])
    store.bound(keep=p.report.keys)  # the size bound, once for the batch; never a blob this purge's stubs name
    return p.report, backup


def analysis(report, tokenizer):
    """Per kind: count, bytes and tokens removed (tokens with the tokenizer)."""
    from engine.text.tokens import count

    rows = {}
    for kind, (n, b, texts) in sorted(report.kinds.items()):
        rows[kind] = {"count": n, "bytes": b, "tokens": count("\n".join(texts), tokenizer) if texts else 0}
    return rows
