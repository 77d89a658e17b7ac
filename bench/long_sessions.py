#!/usr/bin/env python3
"""Whole-process cost of `engine hook` on long sessions of each agent: the
wall time and peak memory of one hook process per event, as the transcript
grows (10 MB, 100 MB: hundreds of compactions), and on a transcript whose
last line is one giant line, or a torn line being written.

    python3 bench/long_sessions.py [--sizes 10,100] [--agents claude-code,codex]
                                   [--giant-mb 64] [--payload-mb 25,200]
                                   [--out bench/results-long-sessions.md]

Each transcript is a recorded session of the agent (tests/data/transcripts)
written again and again, ids and all, with each tool output made longer
(`--pad-kb`), until the file has the size asked: the agent's real shape,
with a compaction in each copy (and without any), and the shell call's
event whose payload holds an output of --payload-mb MB.  Each hook runs as the installed one does
(`engine hook --agent NAME`, the payload on stdin) in a throwaway HOME,
state and cache (warmed by one run first); its peak resident memory is the
as /usr/bin/time -f %M reports it, its time the wall clock.  Prints a table
and writes it to --out.  Writes nothing else outside its temporary folder.
"""

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO / "tests" / "data" / "transcripts"
SAMPLES = {
    "claude-code": DATA / "21-erk-ci-compact-17errors-41files-ebe65926.jsonl.zst",
    "codex": DATA / "codex" / "session-0.171.0.jsonl",
    "gemini": DATA / "gemini" / "session-0.61.0.jsonl",
    "copilot": DATA / "copilot" / "session-1.0.102-compacting.jsonl",
}
# (event as the agent names it, extra payload fields) per agent: a prompt,
# a shell call's result, a compaction's restart, the turn's end.
EVENTS = {
    "claude-code": [("UserPromptSubmit", {"prompt": "go on"}),
                    ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1",
                                     "tool_response": {"stdout": "a\n", "stderr": ""}}),
                    ("SessionStart", {"source": "compact"}),
                    ("Stop", {"stop_hook_active": False})],
    "codex": [("UserPromptSubmit", {"prompt": "go on", "turn_id": "t1"}),
              ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "c1",
                               "tool_response": "a\n"}),
              ("SessionStart", {"source": "compact"}),
              ("Stop", {"stop_hook_active": False, "last_assistant_message": "done"})],
    "gemini": [("BeforeAgent", {"prompt": "go on"}),
               ("AfterTool", {"tool_name": "run_shell_command", "tool_input": {"command": "ls"},
                              "tool_response": {"llmContent": "Output: a", "returnDisplay": ""}}),
               ("SessionStart", {"source": "startup"}),
               ("AfterAgent", {"prompt": "go on", "prompt_response": "done"})],
    "copilot": [("userPromptSubmitted", {"prompt": "go on"}),
                ("postToolUse", {"toolName": "bash", "toolArgs": {"command": "ls"},
                                 "toolResult": {"textResultForLlm": "a\n", "resultType": "success"}}),
                ("sessionStart", {"source": "resume"}),
                ("agentStop", {})],
}
COMPACTION = {  # the bytes that mark a compaction's lines, per agent (dropped for a session without any)
    "claude-code": (b'"compact_boundary"', b'"isCompactSummary": true'), "codex": (b'"compacted"',),
    "gemini": (b'{"$set": {"messages":',), "copilot": (b"compaction_",),
}
TOOL_RESULT = {  # the bytes that mark a line holding a tool's output, per agent
    "claude-code": b'"tool_result"', "codex": b'_call_output"', "gemini": b'"functionResponse"',
    "copilot": b'"tool.execution_complete"',
}


def sample_lines(agent):
    raw = SAMPLES[agent].read_bytes()
    if SAMPLES[agent].suffix == ".zst":
        import zstandard

        raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read()
    return [l for l in raw.split(b"\n") if l.strip()]


def _longest_string_grown(obj, pad):
    """`obj` with its longest string made `pad` characters longer."""
    best = [None, None, -1]

    def walk(o):
        items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
        for k, v in items:
            if isinstance(v, str) and len(v) > best[2]:
                best[:] = [o, k, len(v)]
            elif isinstance(v, (dict, list)):
                walk(v)

    walk(obj)
    if best[0] is not None:
        best[0][best[1]] += pad
    return obj


def write_session(agent, path, megabytes, pad_kb, last=b"", compactions=True):
    """A transcript of `agent` of about `megabytes` MB (see the module doc);
    `last` is written after it, without a line break (a line being written);
    without `compactions`, the sample's compaction lines are left out."""
    lines = sample_lines(agent)
    head, body = lines[:1], lines[1:]
    if not compactions:
        body = [l for l in body if not any(m in l for m in COMPACTION[agent])]
    pad = ("build step ok " * (pad_kb * 1024 // 14 + 1))[: pad_kb * 1024]
    grown = [json.dumps(_longest_string_grown(json.loads(l), pad)).encode() if TOOL_RESULT[agent] in l else l
             for l in body]
    copies = 0
    with open(path, "wb") as fh:
        fh.write(b"\n".join(head) + b"\n")
        while fh.tell() < megabytes * 1048576:
            fh.write(b"\n".join(grown) + b"\n")
            copies += 1
        fh.write(last)
    return copies


def giant_line(agent, megabytes):
    """One tool-output line of `agent` of `megabytes` MB."""
    line = next(l for l in sample_lines(agent) if TOOL_RESULT[agent] in l)
    return json.dumps(_longest_string_grown(json.loads(line), "x" * (megabytes * 1048576))).encode()


def payload(agent, event, fields, world, transcript):
    if agent == "copilot":
        return {"sessionId": world["session"], "timestamp": 1795674298969, "cwd": world["project"], **fields,
                **({"transcriptPath": transcript} if event == "agentStop" else {})}
    return {"session_id": world["session"], "transcript_path": transcript, "cwd": world["project"],
            "hook_event_name": event, **fields}


def run_hook(agent, event, data, env, cwd):
    """(peak RSS MB, seconds, exit status, stdout bytes, last stderr line):
    the peak as /usr/bin/time reports it (a child's own ru_maxrss would start
    at this process's, which holds the giant lines)."""
    report = os.path.join(tempfile.gettempdir(), f"long-sessions-time-{os.getpid()}")
    args = ["/usr/bin/time", "-f", "%M %e", "-o", report, sys.executable, "-m", "engine.cli", "hook", "--agent", agent]
    if agent == "copilot":
        args += ["--event", event]
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=out, stderr=err)
        proc.stdin.write(data)
        proc.stdin.close()
        status = proc.wait()
        seconds = time.perf_counter() - t0
        with open(report, encoding="utf-8") as fh:
            kb = int(fh.read().split()[-2])
        out.seek(0)
        err.seek(0)
        said = err.read().decode("utf-8", "replace").strip().splitlines()
        printed = len(out.read())
    return kb / 1024, seconds, status, printed, (said[-1][:60] if said else "")


def world_for(tmp, agent):
    root = Path(tmp) / agent
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "XDG_", "CLAUDE", "CODEX", "GEMINI"))}
    for var, sub in (("HOME", "home"), ("ENGINE_STATE_DIR", "state"), ("ENGINE_CACHE_DIR", "cache")):
        (root / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(root / sub)
    env["PYTHONPATH"] = str(REPO)
    project = root / "project"
    (project / ".claude" / "rules").mkdir(parents=True, exist_ok=True)
    (project / ".claude" / "rules" / "testing.md").write_text("Run the tests before you push.\n")
    for name in ("CLAUDE.md", "AGENTS.md", "GEMINI.md"):
        (project / name).write_text("Keep functions small.\n")
    session = "c03b9526-ecbd-49a5-a45f-34eababde849"
    where = {"claude-code": root / "home/.claude/projects/p" / f"{session}.jsonl",
             "codex": root / "home/.codex/sessions/2026/11/26" / f"rollout-2026-11-26T08-00-00-{session}.jsonl",
             "gemini": root / "home/.gemini/tmp/project/chats" / f"session-2026-11-26T08-56-{session[:8]}.jsonl",
             "copilot": root / "home/.copilot/session-state" / session / "events.jsonl"}[agent]
    where.parent.mkdir(parents=True, exist_ok=True)
    return {"env": env, "project": str(project), "session": session, "transcript": str(where)}


def cases(a):
    for mb in a.sizes:
        yield f"{mb} MB", {"megabytes": mb}
        yield f"{mb} MB, no compaction", {"megabytes": mb, "compactions": False}
    yield f"{a.giant_mb} MB last line", {"megabytes": 1, "giant": a.giant_mb}
    yield "torn last line", {"megabytes": a.sizes[0], "torn": True}


def measure(agent, a, tmp, rows):
    world = world_for(tmp, agent)
    env, path = world["env"], world["transcript"]
    for what, case in cases(a):
        last = giant_line(agent, case["giant"]) + b"\n" if case.get("giant") else b""
        if case.get("torn"):
            last = giant_line(agent, 1)[:700_000]
        copies = write_session(agent, path, case["megabytes"], a.pad_kb, last, case.get("compactions", True))
        size = os.path.getsize(path) / 1048576
        for event, fields in EVENTS[agent]:
            data = json.dumps(payload(agent, event, fields, world, path)).encode()
            run_hook(agent, event, data, env, world["project"])  # warms the cache, as a session's earlier events do
            rss, seconds, rc, printed, said = run_hook(agent, event, data, env, world["project"])
            rows.append([agent, what, f"{size:.0f}", str(copies), event, f"{seconds:.2f}", f"{rss:.0f}",
                         str(rc), str(printed), said])
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)


def with_output(agent, fields, megabytes):
    """The post-tool event's fields with a shell output of `megabytes` MB,
    where each agent's payload holds it."""
    out = "build line ok\n" * (megabytes * 1048576 // 14)
    fields = json.loads(json.dumps(fields))
    if agent == "claude-code":
        fields["tool_response"]["stdout"] = out
    elif agent == "codex":
        fields["tool_response"] = out
    elif agent == "gemini":
        fields["tool_response"]["llmContent"] = "Output: " + out
    else:
        fields["toolResult"]["textResultForLlm"] = out
    return fields


def measure_payloads(agent, a, tmp, rows):
    """The shell call's event with its output of each --payload-mb size."""
    world = world_for(tmp, agent)
    write_session(agent, world["transcript"], 1, a.pad_kb)
    event, fields = EVENTS[agent][1]
    for mb in a.payload_mb:
        data = json.dumps(payload(agent, event, with_output(agent, fields, mb), world, world["transcript"])).encode()
        run_hook(agent, event, data, world["env"], world["project"])
        rss, seconds, rc, printed, said = run_hook(agent, event, data, world["env"], world["project"])
        rows.append([agent, f"payload: {mb} MB output", "1", "-", event, f"{seconds:.2f}", f"{rss:.0f}", str(rc),
                     str(printed), said])
        print(" | ".join(rows[-1]), file=sys.stderr, flush=True)


def table(rows):
    head = ["Agent", "Transcript", "MB", "Copies", "Event", "Seconds", "Peak RSS MB", "Exit", "Stdout bytes",
            "Stderr"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10,100", help="transcript sizes in MB, comma-separated")
    ap.add_argument("--agents", default=",".join(SAMPLES), help="comma list (default: every agent)")
    ap.add_argument("--giant-mb", type=int, default=64, help="the size of the giant last line's case")
    ap.add_argument("--pad-kb", type=int, default=20, help="KB added to each tool output of each copy")
    ap.add_argument("--payload-mb", default="25,200", help="sizes of a shell output in the post-tool payload, MB")
    ap.add_argument("--out", default=str(HERE / "results-long-sessions.md"))
    a = ap.parse_args()
    a.sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    a.payload_mb = [int(s) for s in a.payload_mb.split(",") if s.strip()]
    rows = []
    with tempfile.TemporaryDirectory(prefix="engine-bench-long-") as tmp:
        for agent in [s.strip() for s in a.agents.split(",") if s.strip()]:
            measure(agent, a, tmp, rows)
            measure_payloads(agent, a, tmp, rows)
    text = table(rows)
    print(text)
    Path(a.out).write_text(f"`python3 bench/long_sessions.py` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"
                           f"\n\n{text}", encoding="utf-8")


if __name__ == "__main__":
    main()
