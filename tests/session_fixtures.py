"""Transcripts for the session report tests: the real samples of
tests/data/transcripts (tests/testdata.py), an independent reading of their context fill, and
small synthetic sessions in the same shapes (refresh banners as the agent
records hook output, a compaction boundary)."""

import json
import uuid
from pathlib import Path

from testdata import transcripts

REAL = transcripts()


def independent_fill(path):
    """(kind, [tokens per API response]) computed the plain way: every JSON
    line, the main chain (or the side chain of a subagent's own file), one
    value per message.id (its last usage), zero usage left out."""
    recs = [json.loads(l) for l in Path(path).read_bytes().splitlines() if l.strip()]
    main = [r for r in recs if not r.get("isSidechain")]
    use = main if any(r.get("type") == "assistant" for r in main) else [r for r in recs if r.get("isSidechain")]
    seen = {}
    for r in use:
        if r.get("type") != "assistant":
            continue
        u = r["message"].get("usage") or {}
        total = u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0) + u.get("cache_read_input_tokens", 0)
        if total:
            seen[r["message"]["id"]] = total
    return ("main" if use is main else "subagent"), list(seen.values())


def independent_tools(path, kind):
    recs = [json.loads(l) for l in Path(path).read_bytes().splitlines() if l.strip()]
    chain = [r for r in recs if bool(r.get("isSidechain")) == (kind == "subagent")]
    names, sizes, errors = {}, {}, {}
    for r in chain:
        content = (r.get("message") or {}).get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if b.get("type") == "tool_use":
                names[b["id"]] = b["name"]
            elif b.get("type") == "tool_result":
                name = names.get(b["tool_use_id"], "?")
                c = b.get("content")
                text = c if isinstance(c, str) else "".join(x.get("text", "") for x in c or [] if isinstance(x, dict))
                sizes[name] = sizes.get(name, 0) + len(text.encode("utf-8"))
                if b.get("is_error") or "<tool_use_error>" in text:
                    errors[name] = errors.get(name, 0) + 1
    return sizes, errors


def _u(tokens):
    third = tokens // 3
    return {"input_tokens": tokens - 2 * third, "cache_creation_input_tokens": third,
            "cache_read_input_tokens": third, "output_tokens": 50}


def assistant(mid, tokens, blocks=None, model="claude-sonnet-4-5-20250929", side=False, ts="2026-01-01T10:00:00Z"):
    return {"type": "assistant", "isSidechain": side, "uuid": str(uuid.uuid4()), "sessionId": "synthetic-1",
            "timestamp": ts, "message": {"id": mid, "role": "assistant", "model": model, "type": "message",
                                         "content": blocks or [{"type": "text", "text": "ok"}], "usage": _u(tokens)}}


def user(content, side=False, **extra):
    return {"type": "user", "isSidechain": side, "uuid": str(uuid.uuid4()), "sessionId": "synthetic-1",
            "timestamp": "2026-01-01T10:00:00Z", "message": {"role": "user", "content": content}, **extra}


def hook_context(text, event="UserPromptSubmit"):
    """How 2.x records a hook's additionalContext."""
    return {"type": "attachment", "isSidechain": False, "uuid": str(uuid.uuid4()), "sessionId": "synthetic-1",
            "timestamp": "2026-01-01T10:00:00Z",
            "attachment": {"type": "hook_additional_context", "hookName": event, "hookEvent": event,
                           "toolUseID": str(uuid.uuid4()), "content": [text]}}


def compact(pre):
    return {"type": "system", "subtype": "compact_boundary", "parentUuid": None, "isSidechain": False,
            "logicalParentUuid": str(uuid.uuid4()), "uuid": str(uuid.uuid4()), "sessionId": "synthetic-1",
            "timestamp": "2026-01-01T11:00:00Z", "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto", "preTokens": pre}}


RULES_BANNER = "[Rules refresh, turn 20: 2 file(s), level standard]\n\n## a.md\nRun the tests.\n\n## b.md\nNo force push."
CLAUDE_BANNER = "[CLAUDE.md refresh, turn 40, level standard]\n\n## /p/CLAUDE.md\nProject notes."


def synthetic():
    """Four responses (20K, 60K, 100K, 140K), a refresh before the third
    (two banners in one event), a compaction, two more (30K, 50K), an old-style
    refresh in a user text, a tool error holding a secret, a side-chain
    response that must not count."""
    return [
        {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
        user("first prompt"),
        assistant("m1", 20000, [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/a"}}]),
        assistant("m1", 20000, [{"type": "text", "text": "same response, second block"}]),
        user([{"type": "tool_result", "tool_use_id": "t1", "content": "x" * 4000}]),
        assistant("m2", 60000),
        user("second prompt"),
        hook_context(RULES_BANNER + "\n\n" + CLAUDE_BANNER),
        assistant("m3", 100000, [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "make"}}]),
        user([{"type": "tool_result", "tool_use_id": "t2", "is_error": True,
               "content": "Exit code 2\nmake: token sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123 rejected"}]),
        assistant("s1", 190000, side=True),
        assistant("m4", 140000),
        {"type": "queue-operation", "operation": "enqueue"},
        {"type": "some-future-line-type", "data": [1, 2]},
        compact(141000),
        user("This session is being continued from a previous conversation.", isCompactSummary=True),
        user("<user-prompt-submit-hook>" + RULES_BANNER + "</user-prompt-submit-hook>", isMeta=True),
        assistant("m5", 30000),
        user("third prompt"),
        user("[Request interrupted by user]"),
        assistant("m6", 50000),
    ]


def write(path, records, tail=b""):
    with open(path, "wb") as fh:
        for r in records:
            fh.write(json.dumps(r).encode() + b"\n")
        fh.write(tail)
    return path
