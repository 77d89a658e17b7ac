"""`engine replay`'s work: recorded sessions sent through a profile's hooks,
offline, and what the hooks would have done, counted and priced.

Each transcript runs in a throwaway world (world.py): its events
(events.py) are answered in this process by the hooks' own dispatcher
(engine.hooks.dispatch.handle), each one seeing the transcript as it stood
then (the prefix grows by appends, never rewritten: a 4 MB session stays
linear).  Nothing is executed: the hooks only answer; a PreToolUse rewrite
is an answer, not a run, and the content cache only stores.

What is counted, from every answer and the handler that gave each part:
- injections (additionalContext) by handler and kind: count, characters,
  tokens;
- already in view: the rule files a refresh held back because the model
  had them in view already (engine/hooks/inview.py: delivered by the agent
  or the engine in this compaction epoch, and not far back), each counted
  once per epoch as the raw file's tokens, priced as an injection would
  have been;
- kept out: a Bash output the content cache replaced, the original minus
  the stub the model reads (bytes, tokens);
- warnings (systemMessage, shown to the user) and compaction instructions;
- the net effect in tokens and priced (pricing.py).
Tokens: tiktoken o200k_base (engine.text.tokens), a stand-in for the
provider's own tokenizer.
"""

import os

TOKENIZER = "o200k_base"
IN_VIEW_METHOD = ("rule files a refresh held back because the model had them in view already "
                  "(engine/hooks/inview.py), each counted once per compaction epoch as the raw file's tokens")


class _Log:
    """The hooks' log for a replay: lines kept in memory, not written."""

    def __init__(self):
        self.lines = []
        self.event = {}
        self.max_bytes = None

    def __call__(self, message):
        ev = self.event if isinstance(self.event, dict) else {}
        self.lines.append(f"{ev.get('hook_event_name', '?')}: {message}")


class _Counter:
    """Token counts, each distinct text counted once."""

    def __init__(self):
        self.seen = {}

    def __call__(self, text):
        if not text:
            return 0
        n = self.seen.get(text)
        if n is None:
            from engine.text.tokens import count

            n = self.seen[text] = count(text, TOKENIZER)
        return n


def _bucket():
    return {"count": 0, "chars": 0, "tokens": 0, "cache_writes": 0, "cache_read_tokens": 0, "cost": 0.0}


def _settings(profile_ref, project):
    """The profile's hooks settings, with what could reach the user's things
    pointed into the world: the tool memory in the world's state, no Redis."""
    import copy

    from engine.hooks.dispatch import settings_for

    hooks = copy.deepcopy(settings_for(profile_ref, project))
    hooks.setdefault("memory", {})["path"] = "{state}/tool-memory.ndjson"
    hooks.setdefault("state", {})["redis_url"] = ""
    return hooks


def _wrapper_stubs(ev, settings):
    """What `engine cache run` would have printed for a rewritten call whose
    recorded output is the event's: [(original text, stub)] per stream over
    the threshold (each stream judged on its own, as runner.py does),
    stored in the world's content cache; nothing is run."""
    from engine.ccm.store import Store
    from engine.ccm.stub import render

    resp = ev.get("tool_response") if isinstance(ev.get("tool_response"), dict) else {}
    tool_input = ev.get("tool_input") if isinstance(ev.get("tool_input"), dict) else {}
    command = tool_input.get("command") if isinstance(tool_input.get("command"), str) else ""
    status = resp.get("returnCodeInterpretation") or "0"
    store = None
    out = []
    for stream in ("stdout", "stderr"):
        text = resp.get(stream) if isinstance(resp.get(stream), str) else ""
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= settings["intercept"]["bash"]["threshold_bytes"]:
            continue
        store = store or Store(settings, log=lambda _m: None)
        source = {"tool": "Bash", "command": command, "cwd": ev.get("cwd") or "", "exit": status,
                  "tool_use_id": ev.get("tool_use_id")}
        key = store.put(data, source, session=str(ev.get("session_id") or "") or None)
        if key is not None:
            out.append((text, render(settings, "template", key, store, store.meta(key), status, command) + "\n"))
    return out


def replay_one(path, world, profile_ref, pricing, count, progress=None, project=None):
    from engine.agents import DEFAULT_AGENT, table
    from engine.hooks.dispatch import handle, neutral_event
    from engine.hooks.handlers.ccm_output import stored_bytes

    from engine.core.transcript import copy_range

    from .events import events
    from .pricing import Timeline, family, price

    size = os.path.getsize(path)
    timeline = Timeline(path)  # one bounded line at a time: the file is never held whole
    agent = table.get(DEFAULT_AGENT)  # the transcripts replayed are Claude Code's
    context_events = set(agent.answer("context")["events"])
    rates = family(pricing, timeline.model)
    per = pricing["per_tokens"]
    folder = world.fresh()
    project = project or world.project
    session = f"replay-{abs(hash((str(path), size))) % 10**12:012d}"
    tpath = os.path.join(folder, f"{session}.jsonl")
    hooks = _settings(profile_ref, project)
    kinds = {s["name"]: s["kind"] for specs in hooks.get("events", {}).values() for s in specs}
    log = _Log()
    answers, by_handler = [], {}
    in_view = {"count": 0, "chars": 0, "tokens": 0, "cost": 0.0, "method": IN_VIEW_METHOD}
    kept = {"count": 0, "bytes": 0, "tokens": 0, "original_bytes": 0, "stub_bytes": 0,
            "cache_writes": 0, "cache_read_tokens": 0, "cost": 0.0}
    warnings = {"count": 0, "chars": 0}
    instructions = {"count": 0, "chars": 0}
    decisions = {}
    rewritten = set()
    held_seen = set()
    n_events = 0
    written = 0
    skipped = []  # lines too long to hold: copied through, no event
    with open(tpath, "wb") as out, open(path, "rb") as src:
        for ev, offset in events(path, cwd=project, session_id=session, transcript_path=tpath, skipped=skipped):
            if offset > written:
                copy_range(src, out, written, offset)  # the prefix the event saw, in pieces
                out.flush()
            elif offset < written:  # events.py never goes back; kept right if it did
                out.truncate(offset)
                out.seek(offset)
            written = offset
            n_events += 1
            name = ev["hook_event_name"]
            log.event = ev
            trace = []
            try:
                handle(ev, profile_ref, log, hooks, None, trace=trace)
            except Exception as exc:  # noqa: BLE001 - the hook would log it and print nothing
                log(f"internal error: {type(exc).__name__}: {exc}")
            if progress is not None:
                progress(offset)
            outputs = []
            if name == "PostToolUse" and ev.get("tool_use_id") in rewritten:
                from engine.ccm import config

                outputs = _wrapper_stubs(ev, config.load())
            if not outputs and (not trace or not trace[0].origins):
                continue
            writes, reads = timeline.exposure(offset)
            parts = []
            for text, stub in outputs:
                original, stub_b = text.encode("utf-8", "surrogatepass"), stub.encode("utf-8", "surrogatepass")
                saved = count(text) - count(stub)
                kept["count"] += 1
                kept["original_bytes"] += len(original)
                kept["stub_bytes"] += len(stub_b)
                kept["bytes"] += len(original) - len(stub_b)
                kept["tokens"] += saved
                kept["cache_writes"] += writes * saved
                kept["cache_read_tokens"] += reads * saved
                kept["cost"] += price(saved, writes, reads, rates, per)
                parts.append({"handler": "engine cache run", "field": "wrapped output", "bytes": len(original),
                              "stub_bytes": len(stub_b), "tokens_kept_out": saved})
            if trace and trace[0].decision and name == "PreToolUse":
                handler = next((h for h, f, _ in trace[0].origins if f == "decision"), "?")
                d = trace[0].decision
                what = d.get("decision") or "rewrite"
                decisions[what] = decisions.get(what, 0) + 1
                command = (d.get("input") or {}).get("command")
                if isinstance(command, str) and ev.get("tool_name") == "Bash":
                    rewritten.add(ev.get("tool_use_id"))
                parts.append({"handler": handler, "field": "decision", "decision": what})
            for handler, field, value in trace[0].origins:
                if field == "context" and agent.neutral(name) in context_events:
                    tokens = count(value)
                    b = by_handler.setdefault(handler, {"kind": kinds.get(handler, "?"), **_bucket()})
                    b["count"] += 1
                    b["chars"] += len(value)
                    b["tokens"] += tokens
                    b["cache_writes"] += writes * tokens
                    b["cache_read_tokens"] += reads * tokens
                    b["cost"] += price(tokens, writes, reads, rates, per)
                    parts.append({"handler": handler, "field": field, "chars": len(value), "tokens": tokens})
                elif field == "in_view":  # rules a refresh held back: the model had them in view already
                    epoch = timeline.epoch_at(offset)
                    for text in value:
                        if (epoch, text) in held_seen:
                            continue  # once per compaction epoch: a re-delivery avoided, not each check
                        held_seen.add((epoch, text))
                        t = count(text)
                        in_view["count"] += 1
                        in_view["chars"] += len(text)
                        in_view["tokens"] += t
                        in_view["cost"] += price(t, writes, reads, rates, per)
                    parts.append({"handler": handler, "field": field, "files": len(value)})
                elif field == "user_message":
                    warnings["count"] += 1
                    warnings["chars"] += len(value)
                    parts.append({"handler": handler, "field": field, "chars": len(value)})
                elif field == "tool_output" and name == "PostToolUse":
                    original = stored_bytes(neutral_event(ev, DEFAULT_AGENT).output_streams() or ("", ""))
                    stub = value.get("text", "") if isinstance(value, dict) else ""
                    text = original.decode("utf-8", "replace")
                    saved = count(text) - count(stub)
                    kept["count"] += 1
                    kept["original_bytes"] += len(original)
                    kept["stub_bytes"] += len(stub.encode("utf-8", "surrogatepass"))
                    kept["bytes"] += len(original) - len(stub.encode("utf-8", "surrogatepass"))
                    kept["tokens"] += saved
                    kept["cache_writes"] += writes * saved
                    kept["cache_read_tokens"] += reads * saved
                    kept["cost"] += price(saved, writes, reads, rates, per)
                    parts.append({"handler": handler, "field": field, "bytes": len(original), "stub_bytes":
                                  len(stub.encode("utf-8", "surrogatepass")), "tokens_kept_out": saved})
                elif field == "stdout" and name == "PreCompact":
                    instructions["count"] += 1
                    instructions["chars"] += len(value)
                    parts.append({"handler": handler, "field": field, "chars": len(value)})
            if parts:
                answers.append({"event": name, "offset": offset, "epoch": timeline.epoch_at(offset), "api_calls_before":
                                sum(1 for end, _ in timeline.calls if end <= offset),
                                "cache_writes": writes, "cache_reads": reads, "parts": parts})
    injected = _bucket()
    for b in by_handler.values():
        for k in injected:
            injected[k] += b[k]
    net = {"tokens": injected["tokens"] - kept["tokens"],
           "cache_write_tokens": injected["cache_writes"] - kept["cache_writes"],
           "cache_read_tokens": injected["cache_read_tokens"] - kept["cache_read_tokens"],
           "cost": injected["cost"] - kept["cost"]}
    return {"transcript": str(path), "bytes": size, "events": n_events, "api_calls": len(timeline.calls),
            "compactions": len(timeline.boundaries), "model": timeline.model,
            "rates": {k: rates[k] for k in ("name", "input", "cache_write", "cache_read", "output")},
            "answers": answers, "injected": injected, "by_handler": by_handler, "already_in_view": in_view,
            "kept_out": kept, "warnings": warnings, "compaction_instructions": instructions, "net": net,
            "tool_decisions": decisions,
            "problems": _long_lines(skipped) + [l for l in log.lines if "failed" in l or "internal error" in l]}


def _long_lines(skipped):
    """The lines replay could not hold, each said once."""
    from engine.core.settings import transcript_bounds

    limit = transcript_bounds()["max_line_bytes"]
    return [f"line {n}: {size:,} bytes, over transcripts.max_line_bytes ({limit:,}): not replayed (no event)"
            for n, size in skipped]


TOTAL_KEYS = {"injected": ("count", "chars", "tokens", "cache_writes", "cache_read_tokens", "cost"),
              "already_in_view": ("count", "chars", "tokens", "cost"),
              "kept_out": ("count", "bytes", "tokens", "original_bytes", "stub_bytes", "cache_writes",
                           "cache_read_tokens", "cost"),
              "warnings": ("count", "chars"), "compaction_instructions": ("count", "chars"),
              "net": ("tokens", "cache_write_tokens", "cache_read_tokens", "cost")}


def replay(transcripts, profile=None, progress=None, pricing=None, project=None):
    """The replay of each transcript through the profile's hooks, and the
    totals.  `profile`: a name or path (default: the profile the hook would
    choose here); `pricing`: a pricing document's path (default: the
    built-in); `progress(done_bytes, total_bytes, transcript)`; `project`:
    the folder the events run in (default: an empty one in the world)."""
    from engine.core.profile import locate

    from . import pricing as pricing_module
    from .world import World

    profile_ref = str(locate(profile))  # chosen here, before the world replaces HOME
    project = os.path.abspath(project) if project else None
    total = sum(os.path.getsize(p) for p in transcripts)
    done = 0
    count = _Counter()
    sessions = []
    with World() as world:
        rates = pricing_module.load(pricing)  # in the world: reading YAML writes no copy of the settings into yours
        for path in transcripts:
            tick = None if progress is None else _ticker(progress, done, total, str(path))
            sessions.append(replay_one(path, world, profile_ref, rates, count, tick, project))
            done += os.path.getsize(path)
        notes = list(world.notes)
    totals = {k: {f: sum(s[k][f] for s in sessions) for f in fields} for k, fields in TOTAL_KEYS.items()}
    totals["by_kind"] = {}
    for s in sessions:
        for handler, b in s["by_handler"].items():
            t = totals["by_kind"].setdefault(b["kind"], {"count": 0, "chars": 0, "tokens": 0, "cost": 0.0})
            for f in t:
                t[f] += b[f]
    return {"profile": profile_ref, "pricing": {"file": rates["file"], "currency": rates["currency"],
                                                 "per_tokens": rates["per_tokens"]},
            "tokenizer": TOKENIZER, "sessions": sessions, "totals": totals, "notes": notes}


def _ticker(progress, base, total, name):
    """progress(bytes done of all transcripts, total, this transcript's name)."""
    return lambda offset: progress(base + offset, total, name)
