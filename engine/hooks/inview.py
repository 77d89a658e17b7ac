"""What is in view: the rule files the agent and the engine put in the
model's context, per compaction epoch, and how far back (in tokens of
context) each one went in.

The rule it keeps: the engine injects only what the model does not already
have, or has only far back.  The transcript says what the agent delivered:
2.1.x agents write `attachment` lines (`instructions`: the unscoped rules
and CLAUDE.md files; `nested_memory`: a path-scoped rule after a Read, and
since 2.1.328 after a Write, of a matching file; `hook_additional_context`:
what hooks injected).  Older agents write none: then the documented
behaviour stands in (hooks.in_view in the profile, by the transcript's
`version`): the root CLAUDE.md and the unscoped rules at the start of every
epoch, a scoped rule when a matching file is read.  What the engine itself
delivered is known by the id it made for each delivery (delivery.py): the
session's state records what the delivery held, by real path and content
digest, and where the agent records hook output its
`hook_additional_context` lines witness where it went in.  Nothing is in
view by its base name or by a text inside a rule.

The transcript is read backwards, bounded (engine.core.transcript), and only
as far as the start of the epoch before the current one.  Positions are
tokens of context per the latest main-chain usage record before a line; 0
stands for the start of an epoch (before its first usage record).
"""

import os

from engine.base.fastjson import loads

from . import delivery


class Epoch:
    """One compaction epoch as seen in the transcript."""

    __slots__ = ("id", "ids", "base", "tokens", "agent", "agent_digest", "delivered", "touched", "complete",
                 "instructions")

    def __init__(self, epoch_id, after=None):
        self.id = epoch_id
        # The names the engine may have recorded it under: at SessionStart
        # (compact) the agent may not have written the boundary yet, and the
        # new epoch is then "next:<the one before>" (see read()).
        self.ids = (epoch_id,) if after is None else (epoch_id, "next:" + after)
        self.base = None  # tokens of the epoch's first usage record
        self.tokens = None  # tokens of its last one
        self.agent = {}  # real path -> position: delivered by the agent (its attachments)
        self.agent_digest = {}  # real path -> content digest, where the agent's record holds the raw file
        self.delivered = {}  # delivery id -> position: the engine's marker in a hook_additional_context
        self.touched = []  # (project-relative path, tool name, position), in order
        self.complete = False  # its start was read (not cut by the read bound)
        self.instructions = False  # an `instructions` attachment was seen in it

    def growth(self, position):
        """Tokens of context added since `position` in this epoch."""
        if self.tokens is None:
            return 0
        return max(0, self.tokens - max(position or 0, self.start()))

    def start(self):
        """Tokens at the epoch's start: 0 for the session's first (the rules
        went in before any turn), the first usage record after a compaction
        (the summary and the system prompt are already there)."""
        return self.base if self.base is not None and self.id != "start" else 0


class InView:
    __slots__ = ("version", "attachments", "current", "previous")

    def __init__(self):
        self.version = None
        self.attachments = False
        self.current = Epoch("start")
        self.previous = None


def version_tuple(text):
    out = []
    for piece in str(text or "").split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        out.append(int(digits) if digits else 0)
    return tuple(out)


def at_least(version, threshold):
    """True when the agent's `version` is `threshold` or later (False when unknown)."""
    return bool(version) and version_tuple(version) >= version_tuple(threshold)


def _real(path):
    try:
        return os.path.realpath(os.path.expanduser(path))
    except (TypeError, ValueError):
        return None


def read(path, cwd, settings, compacting=False):
    """The InView of a transcript: its current epoch and the one before.
    `compacting` (SessionStart `compact`): when the last epoch read already
    holds model turns, the agent has not written this compaction's boundary
    yet, and the current epoch is a new, empty one after it."""
    from engine.core.transcript import reversed_lines, usage_tokens
    from .pathscope import input_paths, tool_inputs

    iv = InView()
    conf = settings["in_view"]
    fields = conf["input_fields"]
    marker = conf["delivery_marker"]
    lines = []  # (kind, payload) in reverse order
    boundaries = 0
    for raw in reversed_lines(path, conf["max_tail_bytes"]):
        if not (b'"attachment"' in raw or b"compact_boundary" in raw or b'"assistant"' in raw):
            continue
        try:
            rec = loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            continue
        if not isinstance(rec, dict) or rec.get("isSidechain"):
            continue
        lines.append(rec)
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            boundaries += 1
            if boundaries == 2:
                break
    lines.reverse()
    epochs = [Epoch("start")]
    epochs[0].complete = boundaries < 2
    position = 0
    for rec in lines:
        kind = rec.get("type")
        ep = epochs[-1]
        if kind == "system" and rec.get("subtype") == "compact_boundary":
            uid = str(rec.get("uuid") or "")[:8] or f"c{len(epochs)}"
            new = Epoch(uid, after=ep.id)
            new.complete = True
            epochs.append(new)
            position = 0
            continue
        if kind == "attachment":
            att = rec.get("attachment")
            if not isinstance(att, dict):
                continue
            t = att.get("type")
            if t == "instructions":
                iv.attachments = ep.instructions = True
                for f in att.get("files") or ():
                    real = _real(f.get("path")) if isinstance(f, dict) else None
                    if real:
                        ep.agent[real] = position
            elif t == "nested_memory":
                iv.attachments = True
                real = _real(att.get("path"))
                if real:
                    ep.agent[real] = position
                    _agent_digest(ep, real, att.get("content"))
            elif t == "hook_additional_context":
                for text in att.get("content") or ():
                    for did in delivery.found_in(text, marker):
                        ep.delivered[did] = position
            continue
        if kind != "assistant":
            continue
        msg = rec.get("message")
        if not isinstance(msg, dict):
            continue
        usage = msg.get("usage")
        if isinstance(usage, dict) and msg.get("model") != "<synthetic>":
            found = usage_tokens(usage)  # clamped: the one reader of a usage figure
            if found is not None:
                position = found
                if ep.base is None:
                    ep.base = position
                ep.tokens = position
        for name, inp in tool_inputs(msg.get("content")):
            for rel in input_paths(inp, fields, cwd):
                ep.touched.append((rel, name, position))
    if compacting and (epochs[-1].tokens is not None or epochs[-1].touched):
        fresh = Epoch("next:" + epochs[-1].id)
        fresh.complete = True
        epochs.append(fresh)
    iv.current = epochs[-1]
    iv.previous = epochs[-2] if len(epochs) > 1 else None
    # No version: not an agent's transcript; nothing is assumed in view.
    from engine.core.agentversion import from_transcript

    iv.version = from_transcript(path)
    if iv.version:
        _documented(iv)
    return iv


def _agent_digest(ep, real, content):
    """The digest of the file as the agent delivered it, when its record holds
    the raw text (`nested_memory` since 2.1.328: content.rawContent): a rule
    edited since is not in view as it is now."""
    raw = content.get("rawContent") if isinstance(content, dict) else None
    if isinstance(raw, str):
        import hashlib

        ep.agent_digest[real] = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    else:
        ep.agent_digest.pop(real, None)


def _documented(iv):
    """The documented behaviour where the transcript does not (yet) say:
    the unscoped rules and root CLAUDE.md are in view from each epoch's
    start (`UNSCOPED` at position 0).  An agent that writes attachments
    writes its `instructions` only after the epoch's first prompt, so an
    epoch without one is taken the same way."""
    for ep in (iv.previous, iv.current):
        if ep is not None and not ep.instructions:
            ep.agent[UNSCOPED] = 0


UNSCOPED = "<unscoped rules and root CLAUDE.md>"


def loads_scoped_on(iv, conf):
    """The tools after which this agent delivers a matching scoped rule itself."""
    tools = list(conf["scoped_load_tools"])
    if at_least(iv.version, conf["scoped_on_write_since"]):
        tools += conf["write_tools"]
    return tools


class Seen:
    """When a rule file was last in view in one epoch, from every source."""

    def __init__(self, iv, epoch, snapshot, conf, scope_key, limit):
        self.iv, self.epoch, self.conf = iv, epoch, conf
        others = [e for e in (iv.previous, iv.current) if e is not None and e is not epoch]
        witnessing = at_least(iv.version, conf["attachments_since"])
        self.engine = delivery.positions(snapshot, epoch, others, witnessing) if epoch is not None else {}
        self.scope_key, self.limit = scope_key, limit
        self.tools = set(loads_scoped_on(iv, conf))

    def position(self, rf, globs):
        """The latest position `rf` was in view in the epoch, or None."""
        ep = self.epoch
        if ep is None:
            return None
        real = getattr(rf, "real", None) or _real(rf.path)
        found = []
        # the agent's record of another content: what it delivered then is not this file now
        stale = ep.agent[real] if real in ep.agent and ep.agent_digest.get(real, rf.digest) != rf.digest else None
        if real in ep.agent and stale is None:
            found.append(ep.agent[real])
        ident = delivery.identity(rf)
        if ident in self.engine:
            found.append(self.engine[ident])
        if globs is None and UNSCOPED in ep.agent and _agent_loads(rf, self.conf):
            found.append(ep.agent[UNSCOPED])
        # A scoped rule is in view from the touch of a matching file by a
        # tool that loads it: the agent's own record of it (nested_memory)
        # comes only after the tool's PostToolUse, and older agents write none.
        if globs is not None and self.iv.version:
            from .pathscope import decide

            loaded = [t for t in ep.touched if t[1] in self.tools and (stale is None or t[2] > stale)]
            for rel, _tool, pos in reversed(loaded):
                if decide(globs, [rel], self.limit)[0] == "in":
                    found.append(pos)
                    break
        return max(found) if found else None


def _agent_loads(rf, conf):
    """True when the agent loads this unscoped file itself at an epoch's start
    (a rule under one of its rule folders, or a CLAUDE.md)."""
    name = os.path.basename(rf.path)
    if name in conf["agent_files"]:
        return True
    parent = os.path.basename(os.path.dirname(rf.path))
    grand = os.path.basename(os.path.dirname(os.path.dirname(rf.path)))
    return parent == "rules" and grand == ".claude"


def globs_of(rf, key):
    from .pathscope import scope_of

    scope = scope_of(rf.text, key)
    return scope.globs


def narrow(ctx, spec, files):
    """The rule files a refresh should deliver at this event, given what is
    in view (hooks.in_view).  Unchanged without the in_view settings or a
    transcript.  Modes:
    - after a compaction (SessionStart `compact`): the path-scoped rules in
      view, or matched by the files touched, in the epoch before it; the
      unscoped ones only with in_view.after_compact_unscoped;
    - PreToolUse delivery of a scoped rule (ctx.scoped_for: a path): the
      scoped rules matching it;
    - otherwise (a cadence): with every_tokens, the rules not in view in
      this epoch or in view at least every_tokens tokens back.
    In every mode, nothing already in view in this epoch (within
    every_tokens when that is set) is delivered again."""
    conf = ctx.settings.get("in_view")
    if not conf or not files or not ctx.event.get("transcript_path"):
        return files
    iv = ctx_inview(ctx)
    far = spec.get("every_tokens", 0) or 0
    compact = ctx.name == "SessionStart" and ctx.event.get("source") == "compact"
    scoped_for = getattr(ctx, "scoped_for", None)
    if not iv.version:
        # No agent's transcript to read (missing, empty, or not the agent's):
        # nothing is known to be in view, so nothing is held back, and the
        # growth counts from this delivery.
        if far and not compact and scoped_for is None:
            ctx.in_view_next_due = (iv.current.tokens or 0) + far
        return files
    key = (spec.get("path_scope") or {}).get("key", "paths")
    limit = (spec.get("path_scope") or {}).get("max_brace_expansions", 1024)
    snap = ctx.snapshot()
    now = Seen(iv, iv.current, snap, conf, key, limit)
    out, next_due = [], []
    engine_now = now.engine
    for rf in files:
        globs = globs_of(rf, key)
        pos = now.position(rf, globs)
        if compact:
            if globs is None:
                # The agent reloads these itself after a compaction; the
                # switch brings them back all the same (once per epoch).
                if conf["after_compact_unscoped"] and delivery.identity(rf) not in engine_now:
                    out.append(rf)
            elif pos is None and _before(iv, rf, globs, snap, conf, key, limit):
                out.append(rf)
            continue
        if scoped_for is not None:
            if globs is not None and pos is None:
                from .pathscope import decide

                if decide(globs, [scoped_for], limit)[0] == "in":
                    out.append(rf)
            continue
        if not far or pos is None or iv.current.growth(pos) >= far:
            out.append(rf)
            next_due.append((iv.current.tokens or 0) + far)
        else:
            next_due.append(max(pos, iv.current.start()) + far)
    if far and not compact and scoped_for is None:
        ctx.in_view_next_due = min(next_due) if next_due else None
    if files and not out:
        ctx.in_view_skipped = len(files)
    kept = {id(rf) for rf in out}
    ctx.in_view_held = [rf for rf in files if id(rf) not in kept]  # what the model has already (engine replay counts it)
    return out


def _before(iv, rf, globs, snap, conf, key, limit):
    """True when a scoped rule was in view in the epoch before this one
    (delivered by anyone, or matched by a file touched there); when that
    epoch was not read, the session's touched files decided (path_scope)."""
    prev = iv.previous
    if prev is None:
        return True
    if Seen(iv, prev, snap, conf, key, limit).position(rf, globs) is not None:
        return True
    from .pathscope import decide

    return any(decide(globs, [rel], limit)[0] == "in" for rel, _t, _p in prev.touched)


def ctx_inview(ctx):
    """The event's InView, read once per event."""
    iv = getattr(ctx, "_inview", None)
    if iv is None:
        compacting = ctx.name == "SessionStart" and ctx.event.get("source") == "compact"
        iv = read(ctx.event.get("transcript_path"), ctx.cwd, ctx.settings, compacting)
        ctx._inview = iv
    return iv


def delivered_marks(ctx, items, delivery_id):
    """The state record of delivery `delivery_id`: these items went in view
    now, in this epoch (delivery.py)."""
    conf = ctx.settings.get("in_view")
    if not conf or not items or not delivery_id or not ctx.event.get("transcript_path"):
        return {}
    iv = ctx_inview(ctx)
    compact = ctx.name == "SessionStart" and ctx.event.get("source") == "compact"
    position = 0 if compact else (iv.current.tokens or 0)
    read = [e for e in (iv.previous, iv.current) if e is not None]
    out = delivery.forgotten(ctx.snapshot(), read) if iv.version else {}
    out[delivery.KEY + delivery_id] = delivery.record(iv.current.id, position, items)
    return out


def agent_version(ctx):
    """The agent's version (engine/core/agentversion.py): the transcript's
    (already read with the event's InView, if it was), else the variable the
    agent sets in its hooks' environment: at a session's first tool call
    the transcript may not be on disk yet."""
    iv = getattr(ctx, "_inview", None)
    if iv is not None and iv.version:
        return iv.version
    from engine.core.agentversion import of_session

    return of_session(ctx.event.get("transcript_path"))
