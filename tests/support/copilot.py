"""Copilot CLI, offline: `copilot -p` against the Responses API stand-in
(its bring-your-own-key provider, COPILOT_OFFLINE=true: no GitHub login).

    hooks = copilot_hooks(hook, ["sessionStart", "postToolUse"])   # a .github/hooks file from a LogHook
    run = run_copilot("say hi", home, cwd, [shell("echo hi"), say("done")], hooks=hooks)
    run.requests[1]                   # the body the model got after the tool call
    tool_outputs(run.requests[1])     # what the model read from the shell
    events_of(run)                    # the session's events.jsonl, parsed

Repository hooks (<cwd>/.github/hooks/*.json) load only in a trusted folder:
COPILOT_ALLOW_ALL=true trusts it (and allows every tool).

The binary unpacks its JavaScript (about 235 MB) into a package cache at
its first start. `.ci/run` unpacks it once into .agent/copilot-pkg
(COPILOT_SEA_EXTRACT_ONLY=1); the runs share it read-only. Without it each
run unpacks into its own throwaway HOME (about 2 s more).
"""

import json
import os
from pathlib import Path

from .offline import AGENT_DIR, base_env, find_binary, run_offline
from .responses_api import ResponsesAPI

VERSION = "1.0.102"
BINARY = Path("@github") / "copilot-linux-x64" / "copilot"
PKG_CACHE = AGENT_DIR.parent / "copilot-pkg"  # COPILOT_PKG_CACHE_HOME as .ci/run unpacks it
MODEL = "gpt-5.1"


def find_copilot():
    return find_binary("ENGINE_TEST_COPILOT", BINARY, f"@github/copilot@{VERSION}")


def copilot_hooks(hook, events):
    """A .github/hooks file's object that runs `hook` (a LogHook) for each event."""
    entry = lambda ev: [{"type": "command", "bash": hook.command(ev), "timeoutSec": 30}]
    return {"version": 1, "hooks": {ev: entry(ev) for ev in events}}


def _pkg_cache(home):
    given = os.environ.get("ENGINE_TEST_COPILOT_PKG")
    if given:
        return given
    return PKG_CACHE if (PKG_CACHE / "pkg").is_dir() else Path(home) / ".cache" / "copilot"


def run_copilot(prompt, home, cwd, script, hooks=None, args=(), env=None, timeout=60, api=None, hooks_file="log"):
    """`copilot -p PROMPT --output-format json --allow-all-tools` in `cwd`,
    HOME=home, COPILOT_HOME=home/.copilot, against a ResponsesAPI driven by
    `script`; `hooks` (a hooks file's object) is written to
    cwd/.github/hooks/<hooks_file>.json first."""
    copilot = find_copilot()
    home = Path(home)
    api = api or ResponsesAPI(script)
    if hooks is not None:
        path = Path(cwd) / ".github" / "hooks" / f"{hooks_file}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(hooks, indent=2), encoding="utf-8")
    cmd = [copilot, "-p", prompt, "--output-format", "json", "--allow-all-tools", "--disable-client-telemetry",
           "--no-auto-update", *args]

    def setup(api):
        return base_env(home, {
            "COPILOT_HOME": home / ".copilot", "COPILOT_PKG_CACHE_HOME": _pkg_cache(home),
            "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": f"{api.url}/v1",
            "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_WIRE_API": "responses",
            "COPILOT_PROVIDER_API_KEY": "test", "COPILOT_MODEL": MODEL, "COPILOT_ALLOW_ALL": "true",
            "COPILOT_AUTO_UPDATE": "false", **(env or {})})

    run = run_offline("copilot", cmd, cwd, setup, api, timeout)
    run.home = home
    return run


def copilot_command(args, home, cwd, timeout=60):
    """`copilot ARGS` (`--version`), offline, COPILOT_HOME=home/.copilot."""
    home = Path(home)
    env = lambda api: base_env(home, {"COPILOT_HOME": home / ".copilot", "COPILOT_PKG_CACHE_HOME": _pkg_cache(home),
                                      "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false"})
    run = run_offline("copilot", [find_copilot(), *args], cwd, env, ResponsesAPI(), timeout)
    run.home = home
    return run


def session_dirs(home):
    return sorted((Path(home) / ".copilot" / "session-state").glob("*/"))


def events_of(run):
    """The records of the run's events.jsonl (its only session), parsed."""
    found = [d / "events.jsonl" for d in session_dirs(run.home) if (d / "events.jsonl").exists()]
    if not found:
        return []
    return [json.loads(line) for line in found[-1].read_text(encoding="utf-8").splitlines() if line.strip()]
