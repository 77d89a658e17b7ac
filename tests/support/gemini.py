"""Gemini CLI, offline: `gemini -p` against the Gemini API stand-in.

    hooks = gemini_hooks(hook, ["SessionStart", "AfterTool"])     # settings "hooks" from a LogHook
    run = run_gemini("say hi", home, cwd, [shell("echo hi"), say("done")], hooks=hooks)
    run.requests[1]                   # the body the model got after the tool call
    tool_outputs(run.requests[1])     # the function responses it read
    run.output                        # the parsed --output-format json object

The API key and base URL come from the environment (GEMINI_API_KEY,
GOOGLE_GEMINI_BASE_URL); $HOME/.gemini/settings.json selects API-key auth
and holds the hooks; GEMINI_CLI_TRUST_WORKSPACE=true trusts the folder.
The entry point is a Node script: Node 20 or later runs it.
"""

import json
import os
import shutil
from pathlib import Path

from .gemini_api import GeminiAPI
from .offline import base_env, find_binary, merge_json, missing, run_offline

VERSION = "0.61.0"
ENTRY = Path("@google") / "gemini-cli" / "bundle" / "gemini.js"
MODEL = "gemini-2.5-flash"
# Node waits at exit for V8's background tier-up compile of the WebAssembly
# HTTP parser (undici's llhttp): 1-2 s of every run. Baseline code only
# changes nothing the agent does.
NODE_FLAGS = ("--liftoff-only",)


def find_gemini():
    """(node, gemini.js): Node from $ENGINE_TEST_NODE or PATH, 20 or later."""
    entry = find_binary("ENGINE_TEST_GEMINI", ENTRY, f"@google/gemini-cli@{VERSION}")
    node = os.environ.get("ENGINE_TEST_NODE") or shutil.which("node")
    if not node:
        missing("no `node` on PATH (Gemini CLI needs Node 20 or later): set ENGINE_TEST_NODE")
    return node, entry


def gemini_hooks(hook, events, matcher=None):
    """The settings `hooks` object that runs `hook` (a LogHook) for each event."""
    table = {}
    for ev in events:
        entry = {"hooks": [{"type": "command", "name": f"log-{ev}", "command": hook.command(ev), "timeout": 30000}]}
        if matcher and "Tool" in ev:
            entry["matcher"] = matcher
        table[ev] = [entry]
    return table


def write_settings(home, hooks=None, settings=None):
    """$HOME/.gemini/settings.json: API-key auth, no telemetry, no update
    check, the `hooks`, then `settings` merged on top (top-level keys)."""
    def update(data):
        data.setdefault("security", {}).setdefault("auth", {})["selectedType"] = "gemini-api-key"
        data.setdefault("general", {}).update({"enableAutoUpdate": False, "enableAutoUpdateNotification": False})
        data.setdefault("privacy", {})["usageStatisticsEnabled"] = False
        data.setdefault("telemetry", {})["enabled"] = False
        if hooks is not None:
            data["hooks"] = hooks
        data.update(settings or {})
    merge_json(Path(home) / ".gemini" / "settings.json", update)


def run_gemini(prompt, home, cwd, script, hooks=None, settings=None, args=(), env=None, timeout=60, api=None):
    """`gemini -p PROMPT --output-format json --yolo` in `cwd`, HOME=home,
    against a GeminiAPI driven by `script`; `hooks` (the settings' hooks
    object) and `settings` (top-level keys) are written first."""
    node, entry = find_gemini()
    home = Path(home)
    api = api or GeminiAPI(script)
    write_settings(home, hooks, settings)
    cmd = [node, *NODE_FLAGS, entry, "-p", prompt, "--output-format", "json", "--yolo", "-m", MODEL, *args]

    def setup(api):
        return base_env(home, {"GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": api.url,
                               "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "true", **(env or {})})

    run = run_offline("gemini", cmd, cwd, setup, api, timeout)
    run.home = home
    try:
        run.extra["output"] = json.loads(run.stdout[run.stdout.index("{"):])
    except ValueError:
        run.extra["output"] = None
    return run


def gemini_command(args, home, cwd, env=None, timeout=60):
    """`gemini ARGS` (a subcommand such as `extensions link DIR`), offline,
    HOME=home, settings as run_gemini writes them. Returns an AgentRun."""
    node, entry = find_gemini()
    home = Path(home)
    write_settings(home)

    def setup(api):
        return base_env(home, {"GEMINI_API_KEY": "test", "GOOGLE_GEMINI_BASE_URL": api.url,
                               "GEMINI_CLI_NO_RELAUNCH": "true", **(env or {})})

    run = run_offline("gemini", [node, *NODE_FLAGS, entry, *args], cwd, setup, GeminiAPI(), timeout)
    run.home = home
    return run


def session_files(home):
    """Gemini's chat records under $HOME/.gemini/tmp/<folder>/chats/."""
    return sorted((Path(home) / ".gemini" / "tmp").rglob("chats/session-*.json*"))
