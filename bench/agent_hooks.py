#!/usr/bin/env python3
"""The hook's whole-process time on quiet events, per agent: `engine hook
--agent NAME` fed that agent's own payload (a prompt that is not due, a
finished shell call with a small output; Gemini's BeforeModel with a
request of 100 KB of text, no compression; the variable the agent sets for
its hooks set), beside `python -c pass` of the
same interpreter, in the same rounds (interleaved, so every agent sees the
same machine load).  A warm compiled-profile cache, as after the first
event of a session.

    python3 bench/agent_hooks.py [--runs N] [--venv]

`--venv`: the hook and `python -c pass` of a fresh venv with a regular
`pip install .`, as the README installs the engine.  Without it, this
interpreter's: in a development venv (`pip install -e`) every Python start,
`python -c pass` included, first runs the editable install's import finder
(about 10 ms here), which no user's install has and which makes the ratio
look smaller than a user's.

Prints a table and writes bench/results-agents.md.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import hook_argv, log, make_venv, write_section

HERE = Path(__file__).resolve().parent


def payloads(project, transcript):
    """{agent: [(label, payload, event argument)]}: the quiet events, as each agent sends them."""
    cwd = str(project)
    out = "a\nb\n"
    return {
        "claude-code": [
            ("prompt", {"session_id": "b1", "transcript_path": transcript, "cwd": cwd,
                        "hook_event_name": "UserPromptSubmit", "prompt": "go on"}, None),
            ("post_tool", {"session_id": "b1", "transcript_path": transcript, "cwd": cwd,
                           "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
                           "tool_use_id": "t1", "tool_response": {"stdout": out, "stderr": ""}}, None)],
        "codex": [
            ("prompt", {"session_id": "b2", "transcript_path": transcript, "cwd": cwd, "turn_id": "t",
                        "hook_event_name": "UserPromptSubmit", "prompt": "go on", "model": "gpt-5.1-codex"}, None),
            ("post_tool", {"session_id": "b2", "transcript_path": transcript, "cwd": cwd, "turn_id": "t",
                           "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
                           "tool_use_id": "c1", "tool_response": out, "model": "gpt-5.1-codex"}, None)],
        "gemini": [
            ("prompt", {"session_id": "b3", "transcript_path": transcript, "cwd": cwd,
                        "hook_event_name": "BeforeAgent", "prompt": "go on"}, None),
            ("post_tool", {"session_id": "b3", "transcript_path": transcript, "cwd": cwd,
                           "hook_event_name": "AfterTool", "tool_name": "run_shell_command",
                           "tool_input": {"command": "ls"},
                           "tool_response": {"llmContent": "Output: " + out, "returnDisplay": out}}, None),
            # before each model request: the request's text (here 200 messages, 100 KB) comes through it
            ("before_model", {"session_id": "b3", "transcript_path": transcript, "cwd": cwd,
                              "hook_event_name": "BeforeModel",
                              "llm_request": {"model": "gemini-2.5-flash", "config": {"temperature": 1},
                                              "messages": [{"role": ("user", "model")[i % 2], "content": "w " * 250}
                                                           for i in range(200)]}}, None)],
        "copilot": [
            ("prompt", {"sessionId": "b4", "cwd": cwd, "prompt": "go on", "timestamp": 1}, "userPromptSubmitted"),
            ("post_tool", {"sessionId": "b4", "cwd": cwd, "toolName": "bash", "timestamp": 1,
                           "toolArgs": {"command": "ls"},
                           "toolResult": {"textResultForLlm": out + "<shellId: 0 completed with exit code 0>",
                                          "resultType": "success"}}, "postToolUse")],
    }


def agent_env(env, agent):
    """The environment the agent gives its hooks: with the variable it sets
    for every hook it runs (`hook_env` of its YAML), as a real session has."""
    import yaml

    doc = yaml.safe_load((HERE.parent / "pipelines" / "agents" / f"{agent}.yaml").read_text(encoding="utf-8"))
    return dict(env, **({doc["hook_env"]: "1"} if doc.get("hook_env") else {}))


def timed(argv, data, env, cwd):
    start = time.perf_counter()
    proc = subprocess.run(argv, input=data, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    took = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()[-500:]}")
    return took, proc.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--venv", action="store_true",
                    help="time the hook and python -c pass of a fresh venv with a regular `pip install .`")
    args = ap.parse_args(argv)
    if not args.venv:
        return measure(Path(sys.executable), hook_argv(), args.runs, "")
    python = make_venv(log)[0]
    return measure(python, hook_argv(python), args.runs, " (a fresh venv, regular `pip install .`)")


def measure(python, argv0, runs, where):
    """Time the quiet events of every agent with `argv0` beside `python -c pass`; write the results."""
    with tempfile.TemporaryDirectory(prefix="agent-hooks-") as tmp:
        root = Path(tmp)
        project, home = root / "project", root / "home"
        project.mkdir()
        home.mkdir()
        (project / ".git").mkdir()
        env = dict(os.environ, HOME=str(home), ENGINE_STATE_DIR=str(root / "state"),
                   ENGINE_CACHE_DIR=str(root / "cache"))
        for k in ("ENGINE_PROFILE", "ENGINE_REDIS_URL", "PYTHONPROFILEIMPORTTIME", "PYTHONDONTWRITEBYTECODE"):
            env.pop(k, None)  # bytecode written and read, as on a user's machine
        cases = []
        for agent, events in payloads(project, str(root / "none.jsonl")).items():
            for label, payload, event in events:
                cmd = argv0 + ["--agent", agent]
                cmd += ["--event", event] if event else []
                cases.append((agent, label, cmd, json.dumps(payload).encode()))
        envs = {agent: agent_env(env, agent) for agent, _l, _c, _d in cases}
        for agent, _label, cmd, data in cases:  # warm the caches; a quiet event says nothing
            _ms, out = timed(cmd, data, envs[agent], project)
            _ms, out = timed(cmd, data, envs[agent], project)
            if out.strip():
                raise SystemExit(f"not a quiet event: {' '.join(cmd)} answered {out[:200]!r}")
        base, times = [], {(a, l): [] for a, l, _c, _d in cases}
        for _ in range(runs):  # interleaved rounds
            base.append(timed([str(python), "-c", "pass"], b"", env, project)[0])
            for agent, label, cmd, data in cases:
                times[(agent, label)].append(timed(cmd, data, envs[agent], project)[0])
    pass_ms = statistics.median(base)
    rows = [f"| {a} | {l} | {statistics.median(t):.1f} | {statistics.median(t) / pass_ms:.2f}x |"
            for (a, l), t in times.items()]
    load = os.getloadavg()[0]
    write_section("results-agents.md", "Quiet hook events per agent (median of %d interleaved rounds)" % runs, [
        f"Command: `{' '.join(argv0)} --agent NAME`{where}.",
        f"`python -c pass`: {pass_ms:.1f} ms ({python}, load average {load:.2f}, {os.cpu_count()} CPUs)."],
        ["agent", "event", "ms", "x python -c pass"], rows)


if __name__ == "__main__":
    main()
