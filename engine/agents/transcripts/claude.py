"""Claude Code's session JSONL (facts: DESIGN.md "Transcripts").

- every line may carry `version`; `isSidechain` marks a subagent's line;
- `assistant` lines hold `message.usage` (one response spans several lines
  sharing `message.id`, each repeating it) and `tool_use` blocks; the model
  `<synthetic>` marks records the agent wrote itself (API errors);
- `user` lines hold the prompt (a string, or text blocks) or `tool_result`
  blocks (`is_error`, content a string or a list of blocks);
- a `system` line of subtype `compact_boundary` opens a new epoch;
- 2.1.328 and later write `attachment` lines: `instructions` (files the agent
  loaded), `nested_memory` (a path-scoped rule), `hook_additional_context`
  (what hooks added).
"""

from ..records import Compaction, Delivered, Prompt, ToolCall, ToolResult, Usage, Version, clamp

MARKS = {
    "version": (b'"version"',),
    "usage": (b'"assistant"',),
    "tool_call": (b'"tool_use"',),
    "tool_result": (b'"tool_result"',),
    "prompt": (b'"user"',),
    "compaction": (b"compact_boundary",),
    "delivered": (b'"attachment"',),
}
SYNTHETIC = "<synthetic>"


def records_of(obj):
    out = []
    version = obj.get("version")
    if isinstance(version, str):
        out.append(Version(version))
    kind = obj.get("type")
    if kind == "assistant":
        _assistant(obj, out)
    elif kind == "user":
        _user(obj, out)
    elif kind == "system" and obj.get("subtype") == "compact_boundary":
        meta = obj.get("compactMetadata") if isinstance(obj.get("compactMetadata"), dict) else {}
        out.append(Compaction(str(obj.get("uuid") or "")[:8], clamp(meta.get("preTokens")) or None, meta.get("trigger")))
    elif kind == "attachment":
        _attachment(obj.get("attachment"), out)
    side = bool(obj.get("isSidechain"))
    for rec in out:
        rec.sidechain = side
    return out


def _assistant(obj, out):
    msg = obj.get("message")
    if not isinstance(msg, dict):
        return
    usage = msg.get("usage")
    if isinstance(usage, dict):
        model = msg.get("model") if isinstance(msg.get("model"), str) else None
        out.append(Usage(input=clamp(usage.get("input_tokens")), output=clamp(usage.get("output_tokens")),
                         cache_read=clamp(usage.get("cache_read_input_tokens")),
                         cache_write=clamp(usage.get("cache_creation_input_tokens")),
                         model=model, response=msg.get("id"), synthetic=model == SYNTHETIC))
    content = msg.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("name"), str):
                out.append(ToolCall(str(block.get("id") or ""), block["name"], block.get("input")))


def _user(obj, out):
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        if not obj.get("isCompactSummary") and not obj.get("isMeta"):
            out.append(Prompt(content))
        return
    if not isinstance(content, list):
        return
    texts = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            text, image = result_text(block.get("content"))
            out.append(ToolResult(str(block.get("tool_use_id") or ""), text, is_error=block.get("is_error") is True,
                                  image=image))
        elif block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
    if texts and not obj.get("isCompactSummary") and not obj.get("isMeta"):
        out.append(Prompt("\n".join(texts)))


def result_text(content):
    """(text, holds an image) of a tool_result's content."""
    if isinstance(content, str):
        return content, False
    parts, image = [], False
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "image":
                    image = True
    return "\n".join(parts), image


def _attachment(att, out):
    if not isinstance(att, dict):
        return
    kind = att.get("type")
    if kind == "instructions":
        paths = [f.get("path") for f in att.get("files") or () if isinstance(f, dict) and isinstance(f.get("path"), str)]
        out.append(Delivered("instructions", paths))
    elif kind == "nested_memory" and isinstance(att.get("path"), str):
        content = att.get("content")
        raw = content.get("rawContent") if isinstance(content, dict) else None
        # the raw text (2.1.328 on): a rule edited since is not in view as it is now
        out.append(Delivered("scoped", [att["path"]], texts=[raw] if isinstance(raw, str) else ()))
    elif kind == "hook_additional_context":
        texts = [t for t in att.get("content") or () if isinstance(t, str)]
        out.append(Delivered("hook", texts=texts))
