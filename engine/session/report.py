"""The session report as plain data (what `--json` prints).

Shape (docs/sessions.md, "Session report"): session_id, transcript, agent (the
agent whose transcript it is), kind (main | subagent), models, versions,
started, ended, turns, turn_starts (the x
each prompt came before), api_calls,
context_window, bytes_per_token, fill [{x, time, tokens, percent, segment,
model}], peak and last (a fill point or null), compactions [{x, time, line,
trigger, pre_tokens}], refreshes [{x, time, line, handler, turn, chars,
tokens, via}], refresh_chars, refresh_tokens, tokenizer (the encoding a
refresh's tokens are counted with), tools [{name, calls, results, result_bytes,
est_tokens, share, errors, images}] (biggest first, at most `tools.top`),
tool_result_bytes, tools_in_context and tool_result_bytes_in_context (the
same since the last compaction), errors [{tool, message, count, time, line,
tool_use_id}] (identical errors grouped, the first one's time and line),
error_count, api_errors, purged_results (tool results `engine purge`
moved out of the file: their bytes are the originals', which the model
read), hook_contexts, subagents [{file (None for the side chain inline in
this file), inline, api_calls, peak_tokens, tool_result_bytes}], problems {lines, bad_lines, long_lines,
non_utf8_lines, partial_tail}, engine (what the engine did, from its
hooks' records: engine/session/did.py; null for a subagent's own
transcript, the records being its whole session's) {recorded_events, added [{handler,
count, chars, tokens}], added_tokens, added_chars, kept_out {outputs,
bytes_before, bytes_after, tokens}, net_tokens, records_full}.
"""

import os
import re

from engine.base.errors import UserError
from engine.core.transcript import Problems

from . import errors as error_sources
from .analyze import Analyzer, rank


def _redactor():
    """Secrets in error messages become [secret]: the report may be written
    to a file, and no secret the engine saw is ever written to disk.  The
    engine's one redactor (engine/core/redact.py)."""
    from engine.core.redact import redactor

    return redactor(replacement="[secret]")


def _window(style, models, peak, recorded=(), agent=None):
    """The context window: the largest the agent recorded, else the style's
    for the session's models, or the agent's for them where larger (its
    YAML's `context`, which the context monitor reads: a model it runs with
    the long window); a larger listed one when the peak passed it."""
    cw = style["context_windows"]
    window = max(recorded) if recorded else _window_of_models(cw, models)
    if not recorded and agent is not None:
        window = max([window] + [agent.model_window(m) for m in models])
    if peak and peak > window:  # the session had a larger window than its model id says
        larger = sorted(m["tokens"] for m in cw["models"] if m["tokens"] >= peak)
        if larger:
            window = larger[0]
    return window


def _window_of_models(cw, models):
    window = cw["default"]
    for model in models:
        for m in cw["models"]:
            if re.search(m["pattern"], model):
                window = max(window, m["tokens"])
                break
    return window


def _open(path):
    from engine.base.files import open_regular

    try:
        return open_regular(path)
    except OSError as exc:
        raise UserError(f"cannot read the transcript ({exc.strerror})", path) from None
    except ValueError:
        raise UserError("not a regular file; give a transcript (.jsonl)", path) from None


def _counter(style):
    """A refresh's tokens, with tiktoken (the style's `refreshes.tokenizer`),
    each distinct text counted once and kept in the results cache."""
    from engine.core.textcache import count_tokens

    encoding = style["refreshes"]["tokenizer"]
    return lambda text: count_tokens(text, encoding)


def analyze_file(path, style, redact, agent=None, original=None, count=None):
    """(Analyzer, Problems) of one transcript, read by its agent's reader;
    `original`: the reader of purge stubs, `count` of a refresh's tokens (Analyzer)."""
    from engine.agents.transcripts import forwards

    from .agent import for_transcript

    agent = agent if agent is not None and not isinstance(agent, str) else for_transcript(path, agent)
    problems = Problems()
    an = Analyzer(with_agent_errors(style, agent), redact, original, count)
    with _open(path) as fh:
        for rec in forwards(agent.data["transcript"]["reader"], fh, style["reading"], problems):
            an.feed(rec)
    return an, problems


def with_agent_errors(style, agent):
    """The report style with the agent's own failure facts added to its
    `errors` (`failure` of the agent's YAML): its error wrappers as markers,
    the lines it writes around an output, its labels to strip."""
    facts, errors = agent.data["failure"], style["errors"]
    return dict(style, errors=dict(errors, markers=[*facts["wrappers"], *errors["markers"]],
                                   skip_lines=[*facts["skip_lines"], *errors["skip_lines"]],
                                   strip=[*facts["strip"], *errors["strip"]]))


def _subagents(path, style, redact, agent, inline):
    """A session's subagents: each file of one, where the agent keeps them
    apart (Claude Code 2.x: <session>/subagents/agent-*.jsonl), and the
    side chain `inline` in the session's own file (Copilot CLI's subagents,
    older Claude Code's), all of its subagents together."""
    from .locate import subagent_files

    out = [_subagent(inline, None)] if inline.records else []
    for sub in subagent_files(agent, path):
        try:
            an, _ = analyze_file(sub, style, redact, agent)
        except UserError:
            continue
        out.append(_subagent(an.chain()[1], sub))
    return out


def _subagent(chain, file):
    """One row of `subagents`: `file` None for the records inline."""
    return {"file": file, "inline": file is None, "api_calls": len(chain.responses),
            "peak_tokens": max((p["tokens"] for p in chain.responses.values()), default=None),
            "tool_result_bytes": sum(t["result_bytes"] for t in chain.tools.values())}


def _engine(session_id, kind):
    """What the engine did: its hooks' own records, kept per session.  A
    subagent's own file names its session's id, whose records are the
    whole session's (its main chain's events too): none are the
    subagent's (None)."""
    from .did import for_session

    return for_session(session_id) if kind == "main" else None


def build_report(path, style, errors=None, redact=None, agent=None, original=None):
    """The report of one transcript file (the module doc: its shape); `errors`:
    their source (errors.py); `agent`: its name (default: the lines show it);
    `original`: engine.ccm.stub.purge_reader(), to count purged outputs."""
    from .agent import for_transcript

    errors = errors or error_sources.default()
    redact = redact or _redactor()
    agent = for_transcript(path, agent, strict=True)
    an, problems = analyze_file(path, style, redact, agent, original, _counter(style))
    kind, chain = an.chain()
    points = list(chain.responses.values())
    peak_tokens = max((p["tokens"] for p in points), default=None)
    window = _window(style, an.models, peak_tokens, an.windows, agent)
    for p in points:
        p["percent"] = round(100.0 * p["tokens"] / window, 1)
    peak = max(points, key=lambda p: p["tokens"]) if points else None
    per_token = style["tools"]["bytes_per_token"]
    total = sum(t["result_bytes"] for t in chain.tools.values())
    tools = rank(chain.tools, per_token)
    in_context = rank(chain.epoch_tools, per_token)
    report = {
        "session_id": an.session_id or os.path.splitext(os.path.basename(path))[0],
        "transcript": os.path.abspath(path),
        "agent": agent.name,
        "kind": kind,
        "models": list(an.models),
        "versions": list(an.versions),
        "started": an.first_ts,
        "ended": an.last_ts,
        "turns": chain.turns,
        "turn_starts": chain.turn_x,
        "api_calls": len(points),
        "context_window": window,
        "bytes_per_token": per_token,
        "fill": points,
        "peak": peak,
        "last": points[-1] if points else None,
        "compactions": chain.compactions,
        "refreshes": chain.refreshes,
        "refresh_chars": sum(r["chars"] for r in chain.refreshes),
        "refresh_tokens": sum(r["tokens"] for r in chain.refreshes),
        "tokenizer": style["refreshes"]["tokenizer"],
        "tools": tools[: style["tools"]["top"]],
        "tool_result_bytes": total,
        # since the last compaction: what the context audit names
        "tools_in_context": in_context[: style["tools"]["top"]],
        "tool_result_bytes_in_context": sum(t["result_bytes"] for t in in_context),
        "api_errors": an.api_errors,
        "purged_results": an.purged,
        "hook_contexts": an.hook_contexts,
        "subagents": _subagents(path, style, redact, agent, an.side) if kind == "main" else [],
        "problems": problems.as_dict(),
    }
    report["engine"] = _engine(report["session_id"], kind)
    found, count = errors(report, chain)
    report["errors"] = grouped(found)
    report["error_count"] = count
    return report


def in_context(transcript, style=None, agent=None):
    """(rows, total result bytes, bytes per token) of the tool results in the
    context now: the main chain since its last compaction, ranked as the
    report ranks them (its `tools_in_context`).  What counts is the
    `tool_result` the model read, never a hook event's `tool_response`
    (for Edit, the whole original file the model never saw)."""
    from .style import load

    style = style or load()
    an, _ = analyze_file(transcript, style, _redactor(), agent)
    _, chain = an.chain()
    per_token = style["tools"]["bytes_per_token"]
    rows = rank(chain.epoch_tools, per_token)
    return rows, sum(r["result_bytes"] for r in rows), per_token


def grouped(errors):
    """Identical errors (same tool, same message) as one row with a count,
    the first one's time, line and tool_use_id; in order of first sight."""
    rows = {}
    for e in errors:
        key = (e.get("tool"), e.get("message"))
        row = rows.get(key)
        if row is None:
            rows[key] = dict(e, count=1)
        else:
            row["count"] += 1
    return list(rows.values())
