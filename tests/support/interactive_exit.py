#!/usr/bin/env python3
"""What each real agent does with its session-end hook when an interactive
session ends: the agent's quit command, Ctrl-C, Ctrl-D, or its terminal
going away. Offline (tests/support/: loopback-only namespace, scripted
stand-in model, throwaway HOME; root needed); the terminal is a tmux pane.

    python3 tests/support/interactive_exit.py [AGENT ...] [--how quit,ctrlc,ctrld,hup,sighup,ctrlc3]
        [--sleep 8] [--second S2] [--strace] [--screens] [--out /tmp/exitm/out]

(as root, a Python with the test dependencies, tmux and the agents where
tests/support finds them; one agent at a time, the machine being small).
AGENT: claude-code codex gemini copilot (default: all, one after another).
Per agent and way of ending, in OUT/<agent>-<how>/: home/, the project
proj/ (a git repository, where the agent starts), tmux.sock, hook-calls.jsonl
and summary.json.  The logging hook (this file, `hook` mode) is installed
for every event of the agent's pipelines/agents/<agent>.yaml; it writes a
JSON line at its start (payload, pid, process group, session), and on the
session-end event sleeps --sleep seconds (in-process: no child holds its
pipes), logging a SIGTERM/SIGINT/SIGHUP it gets (then dying of it as it
would) and its end; a detached watcher (`watch` mode, its own session) logs
when the hook's process is gone, so a SIGKILL shows too.

What is driven (tmux new-session -d -x 200 -y 50, the agent the pane's
process, `remain-on-exit on` to read its exit status):
  1. the agent starts; once its prompt is on screen, `say hi` + Enter; the
     stand-in answers `hello`; the turn's stop hook fires;
  2. the ending, at time 0: `quit` types the agent's own quit command and
     Enter; `ctrlc` / `ctrld` press the key, and again 0.4 s later if the
     agent is still there; `hup` is `tmux kill-session` (the pty closes);
     `sighup` sends SIGHUP to the agent alone, its terminal left open;
     `ctrlc3` is `ctrlc` and one more Ctrl-C 0.5 s after the session-end
     hook started (a user pressing it again while the agent waits);
  3. the agent's process is watched (/proc) until it is gone, then the
     log waited on until the session-end hook is gone too (sleep + 6 s).
Printed: each hook call with its start/end/signal/gone times from time 0,
the session-end payload, the agent's exit time and status, the last screen.
--second S2 adds a second session-end hook after the first (logged as
`<event>#2`), sleeping S2.  --strace attaches `strace -f` to the agent
(OUT/<agent>-<how>/strace.txt: the signals it sends and gets, its exit
status).  --how defaults to quit,ctrlc,ctrld,hup,sighup.  What was found:
AGENTS-MEASURED.md, "An interactive session's exit".
"""

import json
import os
import signal
import sys
import time


def _stat(pid):
    with open(f"/proc/{pid}/stat") as fh:
        stat = fh.read()
    rest = stat[stat.rindex(")") + 2:].split()
    return {"pid": int(pid), "comm": stat[stat.index("(") + 1:stat.rindex(")")], "state": rest[0],
            "ppid": int(rest[1]), "pgid": int(rest[2]), "sid": int(rest[3]), "tpgid": int(rest[5])}


def _log(log, line):
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(dict(line, t=time.time())) + "\n")


def hook(log, event, sleep):
    """The logging hook: stdlib only, answers nothing."""
    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = raw
    if isinstance(payload, dict):  # the long fields cut: only their presence matters here
        payload = {k: (v[:200] if isinstance(v, str) else v if k != "llm_request" else "...") for k, v in payload.items()}
    me, parents, pid = _stat(os.getpid()), [], os.getppid()
    for _ in range(3):
        try:
            parents.append(_stat(pid))
            pid = parents[-1]["ppid"]
        except (OSError, ValueError):
            break
    _log(log, {"phase": "start", "event": event, "hook": me, "parents": parents, "payload": payload})
    sleep = float(sleep)
    if sleep <= 0:
        return
    subprocess_watch(log, event, os.getpid())

    def on(sig, frame):
        _log(log, {"phase": "signal", "event": event, "signal": signal.Signals(sig).name})
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on)
    end = time.monotonic() + sleep
    while time.monotonic() < end:
        time.sleep(max(0.0, min(0.05, end - time.monotonic())))
    _log(log, {"phase": "end", "event": event})


def subprocess_watch(log, event, pid):
    import subprocess

    subprocess.Popen([sys.executable, os.path.abspath(__file__), "watch", log, event, str(pid)], start_new_session=True,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True)


def watch(log, event, pid):
    """Log when process `pid` is gone (or a zombie), at most 120 s on."""
    end = time.monotonic() + 120
    while time.monotonic() < end:
        try:
            if _stat(pid)["state"] == "Z":
                break
        except (OSError, ValueError):
            break
        time.sleep(0.02)
    _log(log, {"phase": "gone", "event": event, "pid": int(pid)})


if __name__ == "__main__" and sys.argv[1:2] == ["hook"]:
    hook(*sys.argv[2:5])
    sys.exit(0)
if __name__ == "__main__" and sys.argv[1:2] == ["watch"]:
    watch(*sys.argv[2:5])
    sys.exit(0)

import argparse  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
from contextlib import closing  # noqa: E402
from pathlib import Path  # noqa: E402

import yaml  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from support import agent as claude_support  # noqa: E402
from support import codex, copilot, gemini  # noqa: E402
from support.agent import MessagesAPI  # noqa: E402
from support.gemini_api import GeminiAPI  # noqa: E402
from support.nodns import NoDNS  # noqa: E402
from support.offline import Netns, base_env, merge_json  # noqa: E402
from support.responses_api import ResponsesAPI  # noqa: E402
from support.standin import say  # noqa: E402

SESSION_END = {"claude-code": "SessionEnd", "codex": "SessionEnd", "gemini": "SessionEnd", "copilot": "sessionEnd"}
STOP = {"claude-code": "Stop", "codex": "Stop", "gemini": "AfterAgent", "copilot": "agentStop"}
QUIT = {"claude-code": "/exit", "codex": "/quit", "gemini": "/quit", "copilot": "/exit"}
# What the screen shows once the agent takes a prompt (a regular expression).
READY = {"claude-code": r"\? for shortcuts|>\s*$|❯", "codex": r"›|context left|Ask Codex|for shortcuts",
         "gemini": r"Type your message", "copilot": r"Type @ to mention|Enter @|shortcuts|❯|>"}


def events(agent):
    spec = yaml.safe_load((REPO / "pipelines" / "agents" / f"{agent}.yaml").read_text(encoding="utf-8"))
    return list(spec["events"])


def hook_command(log, event, sleep):
    return " ".join(shlex.quote(str(p)) for p in (sys.executable, Path(__file__).resolve(), "hook", log, event, sleep))


# ---------------------------------------------------------------- per agent: files and command line


def setup_claude(home, proj, log, sleep, url):
    claude_support.allow_tools(home)
    table = {}
    for ev in events("claude-code"):
        handler = {"type": "command", "command": hook_command(log, ev, sleep if ev == "SessionEnd" else 0), "timeout": 30}
        table[ev] = [{"matcher": "*", "hooks": [handler]} if "Tool" in ev or ev == "PermissionRequest" else {"hooks": [handler]}]
    merge_json(home / ".claude" / "settings.json", lambda d: d.update(hooks=table))

    def onboarding(d):
        d.update(hasCompletedOnboarding=True, theme="dark", customApiKeyResponses={"approved": ["test"], "rejected": []},
                 projects={str(proj): {"hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True}})
    merge_json(home / ".claude" / ".claude.json", onboarding)
    env = base_env(home, {"CLAUDE_CONFIG_DIR": home / ".claude", "ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": url,
                          "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                          "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"})
    return [claude_support.find_claude()], env


def setup_codex(home, proj, log, sleep, url):
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    table = {ev: [{"hooks": [{"type": "command", "command": hook_command(log, ev, sleep if ev == "SessionEnd" else 0),
                              "timeout": 30}]}] for ev in events("codex")}
    (codex_home / "hooks.json").write_text(json.dumps({"hooks": table}, indent=2), encoding="utf-8")
    codex.write_config(codex_home, url)
    with open(codex_home / "config.toml", "a", encoding="utf-8") as fh:
        fh.write(f'\n[projects."{proj}"]\ntrust_level = "trusted"\n')
    env = base_env(home, {"CODEX_HOME": codex_home, "MOCK_API_KEY": "test"})
    return [codex.find_codex(), "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust"], env


def setup_gemini(home, proj, log, sleep, url):
    table = {}
    for ev in events("gemini") + ["Notification"]:
        entry = {"hooks": [{"type": "command", "name": f"log-{ev}", "timeout": 30000,
                            "command": hook_command(log, ev, sleep if ev == "SessionEnd" else 0)}]}
        if "Tool" in ev:
            entry["matcher"] = "*"
        table[ev] = [entry]
    gemini.write_settings(home, table)
    node, entry = gemini.find_gemini()
    env = base_env(home, {"GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": url, "GEMINI_CLI_TRUST_WORKSPACE": "true",
                          "GEMINI_CLI_NO_RELAUNCH": "true"})
    return [node, *gemini.NODE_FLAGS, entry, "--yolo", "-m", gemini.MODEL], env


def setup_copilot(home, proj, log, sleep, url):
    hooks = {"version": 1, "hooks": {ev: [{"type": "command", "bash": hook_command(log, ev, sleep if ev == "sessionEnd" else 0),
                                           "timeoutSec": 30}] for ev in events("copilot")}}
    path = home / ".copilot" / "hooks" / "log.json"  # personal hooks: run in any folder
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(hooks, indent=2), encoding="utf-8")
    env = base_env(home, {"COPILOT_HOME": home / ".copilot", "COPILOT_PKG_CACHE_HOME": copilot._pkg_cache(home),
                          "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
                          "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_WIRE_API": "responses",
                          "COPILOT_PROVIDER_API_KEY": "test", "COPILOT_MODEL": copilot.MODEL, "COPILOT_ALLOW_ALL": "true",
                          "COPILOT_AUTO_UPDATE": "false"})
    return [copilot.find_copilot(), "--allow-all-tools", "--disable-client-telemetry", "--no-auto-update"], env


def add_second(agent, home, log, seconds):
    """A second session-end hook after the first (logged as `<event>#2`), sleeping `seconds`."""
    ev = SESSION_END[agent]
    command = hook_command(log, f"{ev}#2", seconds)
    if agent == "copilot":
        path = home / ".copilot" / "hooks" / "log.json"
        merge_json(path, lambda d: d["hooks"][ev].append({"type": "command", "bash": command, "timeoutSec": 30}))
        return
    path = {"claude-code": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"}[agent]
    handler = {"type": "command", "command": command, "timeout": 30000 if agent == "gemini" else 30}
    if agent == "gemini":
        handler["name"] = f"log-{ev}-2"
    merge_json(home / path, lambda d: d["hooks"][ev][0]["hooks"].append(handler))


SETUP = {"claude-code": setup_claude, "codex": setup_codex, "gemini": setup_gemini, "copilot": setup_copilot}
API = {"claude-code": MessagesAPI, "codex": ResponsesAPI, "gemini": GeminiAPI, "copilot": ResponsesAPI}


# ---------------------------------------------------------------- the terminal


class Pane:
    def __init__(self, sock):
        self.sock = str(sock)

    def tmux(self, *args, check=False):
        return subprocess.run(["tmux", "-S", self.sock, *args], capture_output=True, text=True, check=check, timeout=20)

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "x").stdout

    def keys(self, *keys, literal=False):
        self.tmux("send-keys", "-t", "x", *(["-l"] if literal else []), *keys)

    def info(self):
        out = self.tmux("display-message", "-p", "-t", "x", "#{pane_pid} #{pane_dead} #{pane_dead_status} #{pane_dead_signal}").stdout
        return out.split()


def alive(pid):
    try:
        return _stat(pid)["state"] != "Z"
    except (OSError, ValueError):
        return False


def calls(log):
    return [json.loads(line) for line in Path(log).read_text().splitlines()] if Path(log).exists() else []


def wait_for(check, timeout, step=0.1):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(step)
    return check()


def measure(agent, how, out, sleep, trace=False, second=None):
    world = out / f"{agent}-{how}"
    subprocess.run(["rm", "-rf", str(world)], check=True)
    home, proj, log = world / "home", world / "proj", world / "hook-calls.jsonl"
    home.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    (proj / "README.md").write_text("a project\n")
    api = API[agent]([say("hello")])
    pane = Pane(world / "tmux.sock")
    notes, screens = [], {}
    dns = NoDNS()
    with Netns() as ns, closing(dns):
        ns.run(dns.bind)
        dns.start()
        ns.run(api.bind)
        cmd, env = SETUP[agent](home, proj, str(log), sleep, api.url)
        if second is not None:
            add_second(agent, home, str(log), second)
        env.pop("TERM", None)  # the pane's own (tmux sets it)
        env["PWD"] = str(proj)
        with api:
            try:
                ns.run(subprocess.run, ["tmux", "-S", pane.sock, "-f", "/dev/null", "new-session", "-d", "-s", "x", "-x", "200",
                                        "-y", "50", "-c", str(proj), shlex.join(str(c) for c in cmd), ";", "set-option", "-g",
                                        "remain-on-exit", "on"], env=env, check=True, timeout=20)
                start = time.time()
                pid = int(pane.info()[0])
                tracer = None
                if trace:  # who signals whom, and the agent's exit status (attached: the process tree stays as it is)
                    tracer = subprocess.Popen(["strace", "-f", "-tt", "-qq", "-e", "trace=kill,tgkill,exit_group", "-p", str(pid),
                                               "-o", str(world / "strace.txt")], stdin=subprocess.DEVNULL,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
                ready = wait_for(lambda: re.search(READY[agent], pane.screen(), re.M), 60, 0.25)
                time.sleep(2)  # let it settle (a first-run notice, the hooks of its start)
                screens["ready"] = pane.screen()
                notes.append(f"ready after {time.time() - start:.1f} s: {bool(ready)}")
                pane.keys("say hi", literal=True)
                time.sleep(0.7)
                pane.keys("Enter")
                stopped = wait_for(lambda: any(c["event"] == STOP[agent] for c in calls(log)), 60, 0.2)
                notes.append(f"turn ended (stop hook) after {time.time() - start:.1f} s: {bool(stopped)}")
                time.sleep(2)
                screens["answered"] = pane.screen()
                t0 = time.time()
                presses = end_session(agent, how, pane, pid, t0, screens, log)
                gone = wait_for(lambda: not alive(pid), sleep + 25, 0.02)
                t_exit = time.time() - t0 if gone else None
                time.sleep(0.5)  # tmux reads the exit status a moment after the pty closes
                info = wait_for(lambda: (lambda i: i if i[1:2] == ["1"] else None)(pane.info()), 3) if how != "hup" else None
                screens["after"] = pane.screen()
                wait_for(lambda: done_with(calls(log), SESSION_END[agent], t0), sleep + (second or 0) + 6, 0.2)
            finally:
                still = alive(pid) if "pid" in locals() else False
                pane.tmux("kill-server")
                if "tracer" in locals() and tracer is not None:
                    time.sleep(0.5)
                    tracer.terminate()
                    tracer.wait(10)
                if still:
                    notes.append("the agent was still running: killed")
                    try:
                        os.kill(pid, 9)
                    except ProcessLookupError:
                        pass
    summary = {"agent": agent, "how": how, "sleep": sleep, "notes": notes, "presses": presses,
               "agent_exit_s": None if t_exit is None else round(t_exit, 2), "pane": info,
               "hook_calls": [dict(c, t=round(c["t"] - t0, 2)) for c in calls(log)], "screens": screens,
               "requests": [(r.method, r.path.split("?")[0], r.kind) for r in api.log]}
    (world / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return summary


def done_with(log_calls, event, t0):
    """True once every session-end hook that started after t0 is gone."""
    mine = [c for c in log_calls if c["event"].startswith(event) and c["t"] >= t0]
    started = {c["hook"]["pid"] for c in mine if c["phase"] == "start"}
    return bool(started) and started <= {c["pid"] for c in mine if c["phase"] == "gone"}


def end_session(agent, how, pane, pid, t0, screens, log):
    """Do the ending; returns the times (from t0) of what was pressed."""
    presses = []
    if how == "quit":
        pane.keys(QUIT[agent], literal=True)
        time.sleep(0.7)
        presses.append(("Enter", round(time.time() - t0, 2)))
        pane.keys("Enter")
    elif how in ("ctrlc", "ctrld"):
        key = "C-c" if how == "ctrlc" else "C-d"
        for n in range(2):
            presses.append((key, round(time.time() - t0, 2)))
            pane.keys(key)
            if wait_for(lambda: not alive(pid), 0.4, 0.02):
                break
            screens[f"after {key} {n + 1}"] = pane.screen()
    elif how == "ctrlc3":  # Ctrl-C twice, then once more 0.5 s after the session-end hook started
        for n in range(2):
            presses.append(("C-c", round(time.time() - t0, 2)))
            pane.keys("C-c")
            if wait_for(lambda: not alive(pid), 0.4, 0.02):
                break
        event = SESSION_END[agent]
        if wait_for(lambda: any(c["event"] == event and c["t"] >= t0 for c in calls(log)), 10, 0.05):
            time.sleep(0.5)
            presses.append(("C-c", round(time.time() - t0, 2)))
            pane.keys("C-c")
    elif how == "hup":
        presses.append(("kill-session", round(time.time() - t0, 2)))
        pane.tmux("kill-session", "-t", "x")
    elif how == "sighup":
        presses.append(("SIGHUP", round(time.time() - t0, 2)))
        os.kill(pid, signal.SIGHUP)
    return presses


def show(s):
    print(f"=== {s['agent']} {s['how']}: agent gone at {s['agent_exit_s']} s, pane {s['pane']}, presses {s['presses']}")
    for n in s["notes"]:
        print(f"  {n}")
    for c in s["hook_calls"]:
        extra = ""
        if c["phase"] == "start":
            p = c["payload"]
            extra = (f"pgid {c['hook']['pgid']} sid {c['hook']['sid']} tpgid {c['hook']['tpgid']} parent "
                     f"{c['parents'][0]['comm'] if c['parents'] else '?'}")
            if c["event"].startswith(SESSION_END[s["agent"]]):
                extra += f" payload {json.dumps(p)[:600]}"
        elif c["phase"] == "signal":
            extra = c["signal"]
        print(f"  {c['t']:7.2f} {c['event']:20} {c['phase']:6} {extra}")
    print("  --- last screen:")
    print("\n".join("  | " + line for line in s["screens"].get("after", "").rstrip().splitlines()[-15:]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agents", nargs="*", default=list(SETUP))
    ap.add_argument("--how", default="quit,ctrlc,ctrld,hup,sighup")
    ap.add_argument("--sleep", type=float, default=8.0)
    ap.add_argument("--out", default="/tmp/exitm/out")
    ap.add_argument("--strace", action="store_true", help="attach strace -f to the agent (kill, tgkill, exit_group, signals)")
    ap.add_argument("--second", type=float, help="a second session-end hook in the same group, sleeping this long")
    ap.add_argument("--screens", action="store_true", help="print the ready and answered screens too")
    args = ap.parse_args(argv)
    for agent in args.agents:  # one after another: the machine is small
        for how in args.how.split(","):
            s = measure(agent, how, Path(args.out), args.sleep, args.strace, args.second)
            if args.screens:
                for k, v in s["screens"].items():
                    if k != "after":
                        print(f"--- {k}:\n" + "\n".join(line for line in v.splitlines() if line.strip()))
            show(s)


if __name__ == "__main__":
    main()
