"""Copilot CLI's session events (~/.copilot/session-state/<id>/events.jsonl;
measured with 1.0.102, tests/support/AGENTS-MEASURED.md, and the sample in
tests/data/transcripts/copilot/).

Lines are `{type, data, id, timestamp, parentId}`:
- `session.start`: `sessionId`, `copilotVersion`, `selectedModel`,
  `context.cwd`;
- `user.message`: the prompt (`content`);
- `session.usage_record`: one model call's `usage` (`inputTokens`, which
  counts the cached ones too, `outputTokens`, `cacheReadTokens`,
  `cacheWriteTokens`, `maxPromptTokens`, `model`, `apiCallId`);
- `assistant.message`: `toolRequests` (`toolCallId`, `name`, `arguments`);
- `tool.execution_complete`: `result.content` is what the model read
  (`success` false for a failure; a shell command that exits non-zero is
  still `success`, with `shellExecution.exitCode`); a call that failed (an
  edit whose text is not found, a view of a missing path) has no `result`
  but `error {message, code}`, and fires postToolUseFailure instead of
  postToolUse (measured with 1.0.102);
- `hook.end`: a hook's `output` (its `additionalContext`);
- `session.compaction_start` (`trigger`) and `session.compaction_complete`
  (`success`, `preCompactionTokens`), the same `compactionAttemptId`: a
  compaction in the background.  Its summary is of the history at the
  start; the turn goes on meanwhile (requests with the whole history), and
  the complete comes right before the first request with the summary,
  which keeps every call, result and hook addition made since the start
  (measured with 1.0.102; a compaction still running at the end completes
  with `success` false);
- `session.error`: a failed model call;
- `session.shutdown` ends a run, and `session.resume` starts the next one
  on the same session (`--resume=ID`): a resume.

What a task's subagent does is in the same file: each of its lines carries
`agentId` (its prompt, usage, calls, results, hooks); those records are
`sidechain`, not the main context, and so is what a subagentStart hook
added, which reaches the subagent's first request (measured with 1.0.102).
"""

from ..records import (
    ApiError,
    Compaction,
    CompactionStart,
    Delivered,
    Prompt,
    Resume,
    Session,
    Summary,
    ToolCall,
    ToolResult,
    Usage,
    Version,
    Window,
    clamp,
    tokens,
    usage_figures,
)

# A response's `session.usage_record` comes before its `assistant.message`.
USAGE_AFTER_OUTPUT = False
MARKS = {
    "version": (b'"session.start"',),
    "session": (b'"session.start"',),
    "window": (b'"session.start"',),
    "usage": (b'"session.usage_record"',),
    "tool_call": (b'"toolRequests"',),
    "tool_result": (b'"tool.execution_complete"',),
    "prompt": (b'"user.message"',),
    "delivered": (b'"hook.end"',),
    "compaction": (b"compaction_complete",),
    "compaction_start": (b"compaction_start",),
    "summary": (b"compaction_complete",),
    "api_error": (b'"session.error"',),
    "resume": (b'"session.resume"',),
}
FAMILIES = ("session.", "user.", "assistant.", "tool.", "hook.", "system.", "subagent.")


def looks_like(obj):
    kind = obj.get("type")
    return isinstance(kind, str) and kind.startswith(FAMILIES) and isinstance(obj.get("data"), dict)


def project_key(cwd):
    return cwd


def records_of(obj, seen=None):
    """The records of one line (`seen`: unused, the format needs no memory of earlier lines)."""
    kind, data = obj.get("type"), obj.get("data")
    if not isinstance(data, dict) or not isinstance(kind, str):
        return []
    handler = _BY_TYPE.get(kind)
    out = handler(data) if handler is not None else []
    time = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    side = isinstance(obj.get("agentId"), str) or data.get("hookType") == "subagentStart"
    for rec in out:
        rec.time, rec.sidechain = time, side
    return out


def _start(data):
    out = []
    if isinstance(data.get("copilotVersion"), str):
        out.append(Version(data["copilotVersion"]))
    if isinstance(data.get("selectedModel"), str):
        out.append(Window(model=data["selectedModel"]))
    context = data.get("context") if isinstance(data.get("context"), dict) else {}
    cwd = context.get("cwd") if isinstance(context.get("cwd"), str) else None
    sid = data.get("sessionId") if isinstance(data.get("sessionId"), str) else None
    if sid or cwd:
        out.append(Session(sid, cwd))
    return out


def _prompt(data):
    return [Prompt(data["content"])] if isinstance(data.get("content"), str) else []


def _usage(data):
    usage = data.get("usage")
    if not isinstance(usage, dict):
        return []
    model = usage.get("model") if isinstance(usage.get("model"), str) else None
    # inputTokens counts the cached ones too (the Responses API's
    # input_tokens, which Copilot passes on): the context is inputTokens.
    figures = usage_figures(usage.get("inputTokens"), usage.get("cacheReadTokens"))
    if figures is None:  # a figure that is no number: the usage is left out
        return []
    total_in, cached = figures
    response = usage.get("apiCallId") if isinstance(usage.get("apiCallId"), str) else None
    rec = Usage(input=max(0, total_in - cached), output=tokens(usage.get("outputTokens")) or 0, cache_read=cached,
                cache_write=tokens(usage.get("cacheWriteTokens")) or 0, model=model, response=response,
                window=clamp(usage.get("maxPromptTokens")) or None, context=total_in)
    return [rec]


def _calls(data):
    out = []
    for req in data.get("toolRequests") or ():
        if isinstance(req, dict) and isinstance(req.get("name"), str):
            out.append(ToolCall(str(req.get("toolCallId") or ""), req["name"], req.get("arguments")))
    return out


def _result(data):
    """What the model read; for a call that failed, which has no `result`,
    the record's `error.message` ("No match found", "Path does not exist")."""
    result = data.get("result")
    text = result.get("content") if isinstance(result, dict) else None
    if not isinstance(text, str):
        error = data.get("error")
        text = error.get("message") if isinstance(error, dict) else None
        text = text if isinstance(text, str) else ""
    shell = data.get("shellExecution") if isinstance(data.get("shellExecution"), dict) else {}
    code = shell.get("exitCode")
    exited = isinstance(code, int) and not isinstance(code, bool) and code != 0
    failed = data.get("success") is False
    return [ToolResult(str(data.get("toolCallId") or ""), text, is_error=failed or exited, call_failed=failed)]


def _hook(data):
    output = data.get("output")
    text = output.get("additionalContext") if isinstance(output, dict) else None
    return [Delivered("hook", texts=[text])] if isinstance(text, str) and text else []


def _compacted(data):
    if data.get("success") is False:
        return []
    pre = clamp(data.get("preCompactionTokens")) or None
    trigger = data.get("trigger") if isinstance(data.get("trigger"), str) else None
    summary = data.get("summaryContent") if isinstance(data.get("summaryContent"), str) else ""
    return [Compaction(str(data.get("compactionAttemptId") or "")[:8], pre, trigger), Summary(summary)]


def _compacting(data):
    return [CompactionStart(str(data.get("compactionAttemptId") or "")[:8])]


def _resumed(_data):
    return [Resume()]


def _error(data):
    return [ApiError(data["message"] if isinstance(data.get("message"), str) else "")]


_BY_TYPE = {
    "session.start": _start,
    "user.message": _prompt,
    "session.usage_record": _usage,
    "assistant.message": _calls,
    "tool.execution_complete": _result,
    "hook.end": _hook,
    "session.compaction_start": _compacting,
    "session.compaction_complete": _compacted,
    "session.error": _error,
    "session.resume": _resumed,
}
