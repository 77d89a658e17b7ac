#!/usr/bin/env python3
"""What each real agent does when its working folder is removed during a
session, offline (tests/support/: loopback-only namespace, scripted stand-in
model, throwaway HOME; root needed).

    python3 tests/support/rmcwd.py [claude-code codex gemini copilot] [--out DIR]

(a Python with the test dependencies; the agents where tests/support finds
them).  Per agent, in DIR/<agent>/ (default /tmp/rmcwd, emptied first):
home/, the project proj/ (a git repository, where the agent starts, with
PWD set to it: an inherited PWD changes what Copilot allows), and
hook-calls.jsonl.  The engine's hooks are installed
(`engine install --agent NAME --user`) and beside each of them, plus a few
events the engine does not take, a logging hook (this file, `hook` mode)
that writes one JSON line per call: the payload, the hook process's own
os.getcwd() (or its error), $PWD, and the working folder of the hook and of
its parent processes as /proc shows it ("... (deleted)").  For Copilot the
logging hook is both a personal one (~/.copilot/hooks) and a repository
one (proj/.github/hooks, tag "repo").

The model's turns:
  1. shell `rm -rf "$PWD"`
  2-4. while proj/ is still there (the agent refused), `cd / && rm -rf PROJ`,
     `rm -r "$PWD"`, `find "$PWD" -delete`; once it is gone, `pwd; ls`
  5. shell `pwd; ls; echo "PWD=$PWD"`
  6. the answer `done`
Printed: the exit status, each tool output the model read, each hook call
(event, payload cwd, getcwd, parent cwd), the engine's hook.log, and
whether proj/ came back.  DIR/<agent>/summary.json keeps all of it.
"""

import json
import os
import sys


def hook(log, tag, event):
    """The logging hook: stdlib only, answers nothing."""
    from loghook import read_payload  # beside this file: the script's folder is on the path

    _, payload = read_payload()

    def short(v):
        if isinstance(v, str):
            return v if len(v) <= 300 else v[:300] + f"...<{len(v)} chars>"
        if isinstance(v, list):
            return [short(x) for x in v[:20]]
        if isinstance(v, dict):
            return {k: short(x) for k, x in v.items()}
        return v

    try:
        here = os.getcwd()
    except OSError as err:
        here = f"ERROR {err.__class__.__name__}: {err}"
    chain, pid = [], os.getpid()
    for _ in range(4):  # this process, its parent, ...
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            chain.append({"pid": pid, "comm": comm, "cwd": os.readlink(f"/proc/{pid}/cwd")})
            pid = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError):
            break
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    line = {"tag": tag, "event": event, "getcwd": here, "PWD": os.environ.get("PWD"), "procs": chain,
            "payload_cwd": cwd, "payload_cwd_exists": os.path.isdir(cwd) if cwd else None,
            "payload": short(payload)}
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


if __name__ == "__main__" and sys.argv[1:2] == ["hook"]:
    hook(*sys.argv[2:5])
    sys.exit(0)

import argparse  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
from pathlib import Path  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from support import agent as claude_support  # noqa: E402
from support import gemini_api, responses_api  # noqa: E402
from support.codex import run_codex  # noqa: E402
from support.copilot import events_of, run_copilot  # noqa: E402
from support.gemini import run_gemini  # noqa: E402
from support.offline import base_env, run_offline  # noqa: E402
from support.standin import say, shell  # noqa: E402

# The events logged, per agent (the engine's own plus a few it does not take).
EVENTS = {
    "claude-code": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
                    "Stop", "SessionEnd", "Notification"],
    "codex": ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"],
    "gemini": ["SessionStart", "BeforeAgent", "BeforeModel", "BeforeTool", "AfterTool", "AfterAgent",
               "SessionEnd", "Notification"],
    "copilot": ["sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop", "sessionEnd",
                "errorOccurred"],
}
SETTINGS = {"claude-code": ".claude/settings.json", "codex": ".codex/hooks.json",
            "gemini": ".gemini/settings.json", "copilot": ".copilot/hooks/rules-engine.json"}


def run_claude(prompt, home, cwd, script=None, api=None, env=None, timeout=60):
    claude = claude_support.find_claude()
    claude_support.allow_tools(home)
    api = api or claude_support.MessagesAPI(script)

    def setup(api):
        return base_env(home, {"CLAUDE_CONFIG_DIR": Path(home) / ".claude", "ANTHROPIC_API_KEY": "test",
                               "ANTHROPIC_BASE_URL": api.url, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                               "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
                               "DISABLE_ERROR_REPORTING": "1", **(env or {})})

    run = run_offline("claude-code", [claude, "-p", prompt, "--output-format", "json"], cwd, setup, api, timeout)
    run.home = Path(home)
    return run


RUNS = {"claude-code": run_claude, "codex": run_codex, "gemini": run_gemini, "copilot": run_copilot}


def log_command(log, tag, event):
    return " ".join(shlex.quote(str(p)) for p in (sys.executable, Path(__file__).resolve(), "hook", log, tag, event))


def install(agent, home, project, log):
    """The engine's hooks for the user, then the logging hook beside them."""
    env = base_env(home, {"CODEX_HOME": home / ".codex", "COPILOT_HOME": home / ".copilot"})
    proc = subprocess.run([sys.executable, "-m", "engine.cli", "install", "--agent", agent, "--user"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = home / SETTINGS[agent]
    data = json.loads(path.read_text(encoding="utf-8"))
    if agent == "copilot":  # flat lists; the logging hook in a file of its own, and in the repository
        mine = lambda tag: {"version": 1, "hooks": {ev: [{"type": "command", "bash": log_command(log, tag, ev),
                                                          "timeoutSec": 30}] for ev in EVENTS[agent]}}
        (path.parent / "log.json").write_text(json.dumps(mine("user"), indent=2), encoding="utf-8")
        (project / ".github" / "hooks").mkdir(parents=True)
        (project / ".github" / "hooks" / "log.json").write_text(json.dumps(mine("repo"), indent=2), encoding="utf-8")
        return
    for ev in EVENTS[agent]:
        handler = {"type": "command", "command": log_command(log, "user", ev), "timeout": 30}
        if agent == "gemini":
            handler.update(name=f"log-{ev}", timeout=30000)
        groups = data["hooks"].setdefault(ev, [])
        if groups:
            groups[0]["hooks"].append(handler)
        else:
            groups.append({"matcher": "*", "hooks": [handler]} if "Tool" in ev else {"hooks": [handler]})
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def script(project):
    """The removal, tried each way until proj/ is gone; then shell calls in what is left."""
    after = 'pwd; ls; echo "PWD=$PWD"'
    def unless_gone(command):
        return lambda body: shell(command if project.exists() else after)
    tries = [f"cd / && rm -rf {shlex.quote(str(project))}", 'rm -r "$PWD"', 'find "$PWD" -delete']
    return [shell('rm -rf "$PWD"'), *map(unless_gone, tries), shell(after), say("done")]


def tool_outputs(agent, body):
    if agent == "claude-code":
        return claude_support.tool_results(body)
    if agent == "gemini":
        return gemini_api.tool_outputs(body)
    return responses_api.tool_outputs(body)


def measure(agent, out):
    world = out / agent
    subprocess.run(["rm", "-rf", str(world)], check=True)
    home, project, log = world / "home", world / "proj", world / "hook-calls.jsonl"
    home.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "README.md").write_text("a project\n")
    install(agent, home, project, log)
    api = (gemini_api.GeminiAPI if agent == "gemini" else claude_support.MessagesAPI if agent == "claude-code"
           else responses_api.ResponsesAPI)(script(project))
    run = RUNS[agent]("go", home, project, None, api=api, timeout=120, env={"PWD": project})  # as a terminal in proj/
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    hook_log, memory = home / ".engine-state" / "hook.log", home / ".engine-state" / "tool-memory.ndjson"
    summary = {
        "agent": agent, "returncode": run.returncode, "seconds": round(run.seconds, 1),
        "stdout": run.stdout[-3000:], "stderr": run.stderr[-3000:],
        "requests": [(r.method, r.path.split("?")[0], r.kind, str(r.turn)[:120]) for r in run.api.log],
        "tool_outputs_read": tool_outputs(agent, run.api.requests[-1]) if run.api.requests else [],
        "hook_calls": calls,
        "engine_hook_log": hook_log.read_text()[-4000:] if hook_log.exists() else None,
        "tool_memory": [json.loads(line) for line in memory.read_text().splitlines()] if memory.exists() else [],
        "project_after": sorted(p.name for p in project.iterdir()) if project.exists() else None,
        "world_after": sorted(p.name for p in world.iterdir()),
    }
    if agent == "copilot":
        summary["copilot_hook_ends"] = [
            {k: r["data"].get(k) for k in ("hookType", "success", "error")}
            for r in events_of(run) if r["type"] == "hook.end"]
    (world / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


def show(s):
    print(f"=== {s['agent']}: exit {s['returncode']} in {s['seconds']} s")
    for i, t in enumerate(s["tool_outputs_read"], 1):
        print(f"  tool output {i}: {t[:300]!r}")
    for c in s["hook_calls"]:
        procs = " < ".join(f"{p['comm']}:{p['cwd']}" for p in c["procs"][1:3])
        print(f"  hook {c['tag']:4} {c['event']:20} payload cwd={c['payload_cwd']} "
              f"(exists {c['payload_cwd_exists']}) getcwd={c['getcwd']} PWD={c['PWD']} parents {procs}")
    for e in s.get("copilot_hook_ends", []):
        if not e.get("success"):
            print(f"  copilot hook.end failed: {e}")
    print(f"  project after: {s['project_after']}; world: {s['world_after']}")
    print(f"  engine hook.log: {s['engine_hook_log']!r}"[:1500])
    for e in s["tool_memory"]:  # lessons the next session in a project of that path would be shown
        print(f"  tool memory: {e['tool']} {e['error'][:100]!r} (input {e['input'][:60]!r}, project {e['project']})")
    print(f"  stderr: {s['stderr'][-800:]!r}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agents", nargs="*", default=list(RUNS))
    ap.add_argument("--out", default="/tmp/rmcwd")
    args = ap.parse_args(argv)
    for agent in args.agents:  # one after another: the machine is small
        show(measure(agent, Path(args.out)))


if __name__ == "__main__":
    main()
