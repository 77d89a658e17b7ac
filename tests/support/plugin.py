"""Run bin/plugin-hook (the plugin's hook command) as the agent would, in a
test's folders: its environment, one event or several at once, and waiting
for the detached build it starts."""

import json
import os
import subprocess
import time

from hook_fixtures import HookEnv, warm_template
from support.agent import REPO, agent_env

HOOK = REPO / "bin" / "plugin-hook"
START = {"hook_event_name": "SessionStart", "session_id": "s1", "source": "startup"}
TOOL = {"hook_event_name": "PreToolUse", "session_id": "s1", "tool_name": "Bash", "tool_input": {"command": "ls"}}


def plugin_env(tmp, **extra):
    """The agent's environment for the plugin's hooks: HOME under tmp, the
    plugin's data folder tmp/data, this checkout as the plugin's root."""
    (tmp / "home").mkdir(exist_ok=True)
    env = agent_env(tmp / "home", {"CLAUDE_PLUGIN_ROOT": REPO, "CLAUDE_PLUGIN_DATA": tmp / "data", **extra})
    env.pop("PYTHONPATH", None)  # the engine comes from the plugin's environment only
    return env


def start_hook(env, cwd=None, hook=HOOK):
    return subprocess.Popen([str(hook)], env=env, cwd=str(cwd or env["HOME"]), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_hook(env, event=START, cwd=None, hook=HOOK):
    """(exit status, stdout, stderr) of one event."""
    proc = start_hook(env, cwd, hook)
    out, err = proc.communicate(json.dumps(event), timeout=60)
    return proc.returncode, out, err


def said(out):
    """The systemMessage of a hook's stdout, None when it printed nothing."""
    if not out.strip():
        return None
    data = json.loads(out)
    assert set(data) == {"systemMessage"}, out
    return data["systemMessage"]


def wait_for(path, seconds=120):
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


def wait_gone(path, seconds=120):
    end = time.monotonic() + seconds
    while path.exists():
        assert time.monotonic() < end, f"{path} never went"
        time.sleep(0.05)


def gated_python(tmp):
    """A PATH whose `python3` waits for the file tmp/go, then fails: a build
    that is still running, then one that failed."""
    bindir = tmp / "gated-bin"
    bindir.mkdir(exist_ok=True)
    fake = bindir / "python3"
    fake.write_text(f"#!/bin/sh\nwhile [ ! -e '{tmp}/go' ]; do sleep 0.05; done\necho no venv for you >&2\nexit 1\n")
    fake.chmod(0o755)
    return f"{bindir}{os.pathsep}{os.environ['PATH']}"


def warm_cache(tmp):
    """A compiled-profile cache already holding the built-in profile, for a
    hook that must answer within its deadline on a loaded machine."""
    warm_template()
    return HookEnv(tmp / "warm").cache
