"""Codex CLI, offline: `codex exec` against the Responses API stand-in.

    hooks = codex_hooks(hook, ["SessionStart", "PostToolUse"])   # hooks.json from a LogHook
    run = run_codex("say hi", home, cwd, [shell("echo hi"), say("done")], hooks=hooks)
    run.requests[1]                  # the body the model got after the tool call
    tool_outputs(run.requests[1])    # what the model read from the shell
    run.extra["rollout"]             # the session's rollout JSONL (the transcript)

The provider is a `[model_providers.mock]` in $CODEX_HOME/config.toml
(OPENAI_BASE_URL is ignored); hooks go in $CODEX_HOME/hooks.json and run
without the per-hook trust prompt under --dangerously-bypass-hook-trust.
"""

import json
import subprocess
from pathlib import Path

from .offline import Netns, base_env, find_binary, run_offline
from .responses_api import ResponsesAPI

VERSION = "0.171.0"
BINARY = Path("@openai") / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "bin" / "codex"
MODEL = "gpt-5.1-codex"


def find_codex():
    return find_binary("ENGINE_TEST_CODEX", BINARY, f"@openai/codex@{VERSION}")


def codex_hooks(hook, events, matcher=None):
    """The hooks.json object that runs `hook` (a LogHook) for each event."""
    entry = lambda ev: {"hooks": [{"type": "command", "command": hook.command(ev), "timeout": 30}]}
    table = {}
    for ev in events:
        table[ev] = [dict(entry(ev), matcher=matcher)] if matcher and "Tool" in ev else [entry(ev)]
    return {"hooks": table}


BEGIN, END = "# >>> offline test settings", "# <<< offline test settings"


def write_config(codex_home, url, config=""):
    """config.toml: the stand-in as the model provider, plus `config` (top
    level keys, then tables), kept apart from what the agent or a test wrote
    there (a plugin, a hook's trust), which stays as it was; a later run
    replaces only its own lines."""
    path = codex_home / "config.toml"
    codex_home.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    while BEGIN in text and END in text:  # an earlier run's lines
        text = text[:text.index(BEGIN)] + text[text.index(END) + len(END):].lstrip("\n")
    lines = text.splitlines()
    first_table = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
    head, rest = "\n".join(lines[:first_table]), "\n".join(lines[first_table:])
    ours_top = f'{BEGIN}\nmodel = "{MODEL}"\nmodel_provider = "mock"\n{config}\n{END}\n'
    ours_table = (f'{BEGIN}\n[model_providers.mock]\nname = "mock"\nbase_url = "{url}/v1"\nwire_api = "responses"\n'
                  f'env_key = "MOCK_API_KEY"\n{END}\n')
    path.write_text("\n".join(filter(None, [head, ours_top, rest, ours_table])) + "\n", encoding="utf-8")


def run_codex(prompt, home, cwd, script, hooks=None, config="", args=(), env=None, timeout=60, resume=None,
              api=None, bypass_hook_trust=True):
    """`codex exec --json PROMPT` in `cwd`, HOME=home, CODEX_HOME=home/.codex,
    against a ResponsesAPI driven by `script`; `hooks` (a hooks.json object)
    is written first; `config` adds lines to config.toml (e.g.
    'model_auto_compact_token_limit = 1500'); `resume` continues a session
    by id (`codex exec resume ID`); bypass_hook_trust=False runs hooks only
    as trusted in config.toml (see trust_hooks)."""
    codex = find_codex()
    home, codex_home = Path(home), Path(home) / ".codex"
    api = api or ResponsesAPI(script)
    codex_home.mkdir(parents=True, exist_ok=True)
    if hooks is not None:
        (codex_home / "hooks.json").write_text(json.dumps(hooks, indent=2), encoding="utf-8")
    head = [codex, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
            *(["--dangerously-bypass-hook-trust"] if bypass_hook_trust else []), *args]
    cmd = head + (["resume", resume, prompt] if resume else [prompt])

    def setup(api):
        write_config(codex_home, api.url, config)
        return base_env(home, {"CODEX_HOME": codex_home, "MOCK_API_KEY": "test", **(env or {})})

    run = run_offline("codex", cmd, cwd, setup, api, timeout)
    run.home = home
    run.extra["rollout"] = rollout_of(run)
    return run


def codex_command(args, home, cwd, timeout=60):
    """`codex ARGS` (`--version`, `plugin add ...`), offline, CODEX_HOME=home/.codex."""
    codex_home = Path(home) / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    run = run_offline("codex", [find_codex(), *args], cwd, lambda api: base_env(home, {"CODEX_HOME": codex_home}),
                      ResponsesAPI(), timeout)
    run.home = Path(home)
    return run


def thread_id(run):
    """The session (thread) id `codex exec --json` printed."""
    for ev in run.json_lines():
        if ev.get("type") == "thread.started":
            return ev.get("thread_id")
    return None


def rollout_of(run):
    """The rollout JSONL of the run's session, or None."""
    tid = thread_id(run)
    found = sorted((Path(run.home) / ".codex" / "sessions").rglob(f"rollout-*{tid}.jsonl")) if tid else []
    return found[-1] if found else None


def rollout_lines(path):
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def list_hooks(home, cwd, timeout=30):
    """The hooks Codex sees for `cwd` as its app server lists them (JSON-RPC
    `hooks/list` over stdio, the call its TUI's /hooks makes): each with
    `key`, `currentHash`, `trustStatus`, `source`, `command`, ..."""
    codex_home = Path(home) / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    env = base_env(home, {"CODEX_HOME": codex_home})
    calls = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"clientInfo": {"name": "tests", "title": "tests", "version": "1"}}},
             {"jsonrpc": "2.0", "method": "initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(cwd)]}}]
    with Netns() as ns:
        proc = ns.run(subprocess.Popen, [str(find_codex()), "app-server"], cwd=str(cwd), env=env, text=True,
                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            proc.stdin.write("".join(json.dumps(c) + "\n" for c in calls))
            proc.stdin.flush()
            for line in proc.stdout:
                answer = json.loads(line)
                if answer.get("id") == 2:
                    return [h for entry in answer["result"]["data"] for h in entry["hooks"]]
        finally:
            proc.kill()
            proc.wait(timeout)
    return []


def trust_hooks(home, cwd):
    """Trust every hook Codex lists for `cwd` the way its /hooks dialog
    does: `[hooks.state."KEY"] trusted_hash = "HASH"` in config.toml."""
    listed = list_hooks(home, cwd)
    lines = "".join(f'\n[hooks.state."{h["key"]}"]\ntrusted_hash = "{h["currentHash"]}"\n' for h in listed)
    path = Path(home) / ".codex" / "config.toml"
    path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + lines, encoding="utf-8")
    return listed
