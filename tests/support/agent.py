"""Run the real Claude Code agent offline, against a local stand-in of the
Messages API, and record exactly what the model would have read.

The rule it keeps: nothing leaves the machine and nothing is written outside
the test's folders. The agent talks only to `MessagesAPI` on 127.0.0.1 (any
request it makes is answered, none is forwarded), its HOME, config, XDG and
engine folders are the test's, and its hooks run this checkout's engine
(PYTHONPATH) with the test's state and cache folders.

Use (see tests/test_real_agent.py):

    script = [tool("Bash", command="echo hi"), text("done")]
    install_hooks(home, cwd)                      # `engine install --user`
    run = run_agent("go", home, cwd, script)      # claude -p go --output-format json
    run.output["result"] == "done"
    run.requests[1]                               # the body the model got after the tool call
    tool_results(run.requests[1])                 # ['hi'] (tool_result texts)
    run = run_agent("/compact", home, cwd, [text("summary")], resume=run.session_id)

A missing agent binary skips the test locally and fails it under CI (env CI
set): CI installs the agent (.ci/run), so it can never skip silently.
"""

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .offline import home_env, merge_json
from .standin import MAIN, SIDE, Call, Say, Shell, StandIn, sse

REPO = Path(__file__).resolve().parents[2]
AGENT_VERSION = "2.1.332"  # the version .ci/run installs; test_real_agent.py measured 2.1.330 and holds for it
BINARY = Path("node_modules") / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
# The tools a scripted session may call without a prompt: as root the agent
# refuses --dangerously-skip-permissions, so allow rules in settings it is.
DEFAULT_ALLOW = ("Bash", "Read", "Write", "Edit")


def find_claude():
    """Path of the agent binary: $ENGINE_TEST_CLAUDE, else the one .ci/run
    installs under <repo>/.agent. Skips the test when absent, fails it in CI."""
    env = os.environ.get("ENGINE_TEST_CLAUDE")
    path = Path(env) if env else REPO / ".agent" / BINARY
    if path.is_file() and os.access(path, os.X_OK):
        return path
    why = (f"no Claude Code binary at {path}: run .ci/run, or `npm install --prefix .agent "
           f"@anthropic-ai/claude-code@{AGENT_VERSION}`, or set ENGINE_TEST_CLAUDE")
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)


# ---------------------------------------------------------------- the script


@dataclass
class ToolCall:
    name: str
    input: dict


@dataclass
class Text:
    text: str


def tool(name, **input):
    """A scripted model turn that calls tool `name` with `input`."""
    return ToolCall(name, input)


def text(value):
    """A scripted model turn that answers `value` and ends the turn."""
    return Text(value)


# ---------------------------------------------------------------- the stand-in


class MessagesAPI(StandIn):
    """The Messages API on 127.0.0.1:<free port>, on the stand-in's clock
    (support/standin.py). Each main-loop `POST /v1/messages` takes the next
    turn of the script (after the script: "done."); side requests (another
    model such as a haiku title, a request without tools, count_tokens,
    GET/HEAD) get a harmless answer and do not consume the script. Every
    request is recorded in `log`; `requests` are the main-loop bodies, in
    order. `tokens` (an int) is every response's input tokens, its usage as
    the agent records it (100 when not given). A turn may be this module's
    (tool, text) or the stand-in's (shell, call, say)."""

    def __init__(self, script=(), tokens=100):
        super().__init__(script, tokens=tokens)

    @staticmethod
    def is_main(req):
        """A main-loop model call: POST /v1/messages (not count_tokens) with
        the agent's tools and not a small side model."""
        if req.method != "POST" or not req.path.split("?")[0].rstrip("/").endswith("/v1/messages"):
            return False
        body = req.body if isinstance(req.body, dict) else {}
        return bool(body.get("tools")) and "haiku" not in str(body.get("model", ""))

    def kind(self, req):
        if req.method != "POST" or "/v1/messages" not in req.path or _counts_tokens(req):
            return None
        return MAIN if self.is_main(req) else SIDE

    def other(self, req):
        if _counts_tokens(req):
            return 200, "application/json", b'{"input_tokens": 100}'
        return 200, "application/json", b"{}"

    def answer(self, req, turn, n):
        return self._message(req.body if isinstance(req.body, dict) else {}, _claude_turn(turn), n,
                             self.input_tokens(req))

    @staticmethod
    def _message(body, turn, n, tokens):
        model = body.get("model", "claude-test")
        if isinstance(turn, ToolCall):
            block = {"type": "tool_use", "id": f"toolu_{n:04d}", "name": turn.name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(turn.input)}
            full = dict(block, input=turn.input)
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": turn.text}
            full = {"type": "text", "text": turn.text}
            stop = "end_turn"
        usage = {"input_tokens": tokens, "output_tokens": 10, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        msg_id = f"msg_{n:04d}"
        if not body.get("stream"):
            msg = {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [full],
                   "stop_reason": stop, "stop_sequence": None, "usage": usage}
            return 200, "application/json", json.dumps(msg).encode()
        events = [
            sse({"type": "message_start", "message": {
                "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": dict(usage, output_tokens=1)}}, "message_start"),
            sse({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start"),
            sse({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"),
            sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
            sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                 "usage": {"output_tokens": 10}}, "message_delta"),
            sse({"type": "message_stop"}, "message_stop"),
        ]
        return 200, "text/event-stream", b"".join(events)


def _counts_tokens(req):
    return req.method == "POST" and req.path.split("?")[0].endswith("/count_tokens")


def _claude_turn(turn):
    """A stand-in turn (shell, call, say) as this module's (tool, text)."""
    if isinstance(turn, Shell):
        return ToolCall("Bash", {"command": turn.command})
    if isinstance(turn, Call):
        return ToolCall(turn.name, dict(turn.args))
    if isinstance(turn, Say):
        return Text(turn.text)
    return turn


# ---------------------------------------------------------------- reading requests


def _texts(content):
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                yield block.get("text", "")
            elif block.get("type") == "tool_result":
                yield from _texts(block.get("content"))


def request_text(body):
    """Every text the model reads in a request: system, messages (text
    blocks, tool results), joined by newlines."""
    parts = list(_texts(body.get("system")))
    for m in body.get("messages", []):
        parts.extend(_texts(m.get("content")))
    return "\n".join(parts)


def tool_results(body):
    """The text of every tool_result block in a request's messages, in order."""
    out = []
    for m in body.get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append("\n".join(_texts(block.get("content"))))
    return out


# ---------------------------------------------------------------- running the agent


def allow_tools(home, rules=DEFAULT_ALLOW):
    """Add allow rules to $HOME/.claude/settings.json (kept with what is there)."""
    def update(data):
        perms = data.setdefault("permissions", {})
        allow = perms.setdefault("allow", [])
        allow.extend(r for r in rules if r not in allow)
    merge_json(Path(home) / ".claude" / "settings.json", update)


def agent_env(home, env=None):
    """The environment of the agent (and so of its hooks and its Bash): this
    process's, without any ENGINE_/XDG_/CLAUDE/ANTHROPIC variable or a CI
    marker (offline.DROPPED_NAMES), with every folder under `home` and the
    engine of this checkout first on PYTHONPATH. `env` adds or (value None)
    removes variables."""
    own = {"CLAUDE_CONFIG_DIR": str(Path(home) / ".claude"), "ANTHROPIC_API_KEY": "test",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1"}
    return home_env(home, ("ENGINE_", "XDG_", "CLAUDE", "ANTHROPIC", "PYTHONWARNINGS", "AI_AGENT"), own, env)


def install_hooks(home, cwd, env=None, args=()):
    """`engine install --user` (plus `args`) of this checkout, with HOME=home:
    it writes the hook entries into home/.claude/settings.json. Returns the
    completed process; fails the test when it does not succeed."""
    import forkrun

    proc = forkrun.completed(["install", "--user", *args], cwd=cwd, env=agent_env(home, env), timeout=120)
    assert proc.returncode == 0, f"engine install failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@dataclass
class AgentRun:
    returncode: int
    stdout: str
    stderr: str
    output: object  # the parsed --output-format json object (None if stdout was not JSON)
    requests: list  # bodies of the scripted /v1/messages calls, in order
    log: list = field(default_factory=list)  # every Request the stand-in got

    @property
    def session_id(self):
        return self.output.get("session_id") if isinstance(self.output, dict) else None

    @property
    def result(self):
        return self.output.get("result") if isinstance(self.output, dict) else None

    def __str__(self):
        return (f"claude -> exit {self.returncode}\nstdout: {self.stdout[:3000]}\nstderr: {self.stderr[-3000:]}\n"
                f"requests: {[(r.method, r.path, r.kind) for r in self.log]}")


def run_agent(prompt, home, cwd, script, resume=None, env=None, timeout=60, allow=DEFAULT_ALLOW, args=(), tokens=100):
    """Run `claude -p PROMPT --output-format json` (with `--resume SESSION_ID`
    when given; PROMPT may be `/compact`) in `cwd`, HOME=home, against a
    MessagesAPI driven by `script`. Allow rules `allow` are added to the user's
    settings first; every response reports `tokens` input tokens. Returns
    an AgentRun; a run past `timeout` seconds is killed and fails the test."""
    claude = find_claude()
    if allow:
        allow_tools(home, allow)
    cmd = [str(claude), "-p", prompt, "--output-format", "json", *args]
    if resume:
        cmd += ["--resume", resume]
    with MessagesAPI(script, tokens) as api:
        full_env = agent_env(home, {"ANTHROPIC_BASE_URL": api.url, **(env or {})})
        proc = subprocess.Popen(cmd, cwd=str(cwd), env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            out, err = proc.communicate()
            pytest.fail(f"the agent ran past {timeout} s and was killed\nstdout: {out[-2000:]}\nstderr: {err[-2000:]}\n"
                        f"requests: {[(r.method, r.path) for r in api.log]}")
        log = list(api.log)
    try:
        output = json.loads(out)
    except ValueError:
        output = None
    return AgentRun(proc.returncode, out, err, output, [r.body for r in log if r.kind == MAIN], log)
