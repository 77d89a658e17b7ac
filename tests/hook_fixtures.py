"""Helpers for the end-to-end hook tests (tests/test_hooks_*.py).

Every test gets its own scratch world: HOME (so ~/.claude/rules and
~/.claude/CLAUDE.md are controlled), a project folder with .claude/rules and a
CLAUDE.md, ENGINE_STATE_DIR and ENGINE_CACHE_DIR.  `engine hook` runs as a real
subprocess with event JSON in the shapes the agent sends.

Speed: compiling a profile takes seconds on a loaded 2-core machine, so each
test's own cache folder starts as a copy of a process-wide template that
earlier tests filled (entries are keyed by profile path and validated against
the content of every source file by the engine itself; a stale one is simply
rebuilt).  Profiles written with `shared_profile` live at a path keyed by their
content, so their compiled form is reused the same way.  Tests that need a cold
cache pass warm=False.
"""

import atexit
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import forkrun
from engine.base.paths import install_copy_name

REPO = Path(__file__).resolve().parent.parent
HEAVY = ("yaml", "jsonschema", "jinja2", "tiktoken")

_SHARED = Path(tempfile.mkdtemp(prefix="engine-hook-tests-"))
atexit.register(shutil.rmtree, _SHARED, True)
_TEMPLATE = _SHARED / "cache-template"
_TEMPLATE.mkdir()
_SETTINGS_COPY = install_copy_name("engine-settings")  # the engine settings' JSON copy a hook reads first


# Cursor's rules as a rule source, which a user's profile adds (no agent the
# engine serves reads them itself): a folder only the engine delivers.
CURSOR_SOURCE = {"dir": "{project}/.cursor/rules", "glob": "*.mdc", "scope_key": "globs", "always_key": "alwaysApply"}


def shared_profile(text):
    """A profile file whose path depends only on its content (see module doc)."""
    folder = _SHARED / "profiles"
    folder.mkdir(exist_ok=True)
    path = folder / f"p-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    return path


def profile_text(events=None, name="t", **top):
    """A small profile extending the built-in one; `events` maps event ->
    handler list (merged by name with the default's), `top` adds hooks keys."""
    hooks = dict(top)
    if events is not None:
        hooks["events"] = events
    return json.dumps({"kind": "profile", "name": name, "extends": "default", "hooks": hooks}, indent=2) + "\n"


@dataclass
class HookRun:
    returncode: int
    stdout: str
    stderr: str
    args: tuple = ()
    stdin: bytes = b""

    def __str__(self):
        return (f"engine {' '.join(map(str, self.args))} -> exit {self.returncode}\n"
                f"stdin: {self.stdin[:300]!r}\nstdout: {self.stdout[:3000]!r}\nstderr: {self.stderr[-3000:]}")

    @property
    def json(self):
        """The one JSON object on stdout (asserts there is exactly one)."""
        text = self.stdout.strip()
        assert text, f"expected a JSON object on stdout, got nothing\n{self}"
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise AssertionError(f"stdout is not one JSON object ({exc})\n{self}") from None
        assert isinstance(data, dict), f"stdout is JSON but not an object\n{self}"
        return data

    @property
    def context(self):
        """additionalContext of the printed object, or None when nothing was printed."""
        if not self.stdout.strip():
            return None
        out = self.json.get("hookSpecificOutput")
        assert isinstance(out, dict), f"no hookSpecificOutput object\n{self}"
        ctx = out.get("additionalContext")
        assert isinstance(ctx, str), f"no additionalContext string\n{self}"
        return ctx

    def assert_silent(self):
        assert self.returncode == 0, str(self)
        assert self.stdout == "", f"expected no output\n{self}"
        assert "Traceback" not in self.stderr, str(self)

    def assert_ok(self):
        """Exit 0 and stdout either empty or exactly one valid JSON object."""
        assert self.returncode == 0, str(self)
        assert "Traceback" not in self.stderr, str(self)
        if self.stdout.strip():
            self.json  # noqa: B018 - asserts
        return self


class HookEnv:
    """One isolated world for `engine hook` and the `engine` CLI."""

    def __init__(self, root, warm=True, session=None):
        self.root = Path(root)
        self.home = self.root / "home"
        self.project = self.root / "project"
        self.state = self.root / "state"
        self.cache = self.root / "cache"
        for d in (self.home, self.project):
            d.mkdir(parents=True, exist_ok=True)
        if warm:
            warm_cache(self.cache)
        else:
            self.cache.mkdir(parents=True, exist_ok=True)
        self.session = session or str(uuid.uuid4())
        self.transcript = self.home / ".claude" / "projects" / "p" / f"{self.session}.jsonl"
        self.extra_env = {}

    # -- files ---------------------------------------------------------
    @property
    def global_rules(self):
        return self.home / ".claude" / "rules"

    @property
    def project_rules(self):
        return self.project / ".claude" / "rules"

    def rule(self, name, text, where="project"):
        folder = self.project_rules if where == "project" else self.global_rules
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    def claude_md(self, text, where="project"):
        path = (self.project if where == "project" else self.home / ".claude") / "CLAUDE.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    @property
    def log_path(self):
        return self.state / "hook.log"

    def log_lines(self):
        try:
            return [l for l in self.log_path.read_text(encoding="utf-8").splitlines() if l.strip()]
        except FileNotFoundError:
            return []

    def session_files(self, session=None):
        session = session or self.session
        folder = self.state / "sessions"
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob("*.json") if p.name.startswith(session))

    def file_turn(self, session=None):
        """The turn counter in the session's state file, or None without one."""
        files = self.session_files(session)
        assert len(files) <= 1, f"more than one state file for the session: {files}"
        if not files:
            return None
        text = files[0].read_text(encoding="utf-8")
        try:
            data = json.loads(text)
        except ValueError:
            return f"<not JSON: {text[:80]!r}>"
        return data.get("turn") if isinstance(data, dict) else f"<not an object: {text[:80]!r}>"

    # -- processes -----------------------------------------------------
    def env(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("ENGINE_", "XDG_", "PYTHONWARNINGS", "CLAUDE", "AI_AGENT"))}
        env.update(HOME=str(self.home), ENGINE_STATE_DIR=str(self.state), ENGINE_CACHE_DIR=str(self.cache),
                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
        for k, v in {**self.extra_env, **(extra or {})}.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = str(v)
        return env

    def event(self, name, session=None, **fields):
        """An event in the shape the agent sends (DESIGN.md, "The agent's side")."""
        ev = {
            "session_id": session or self.session,
            "transcript_path": str(self.transcript),
            "cwd": str(self.project),
            "hook_event_name": name,
        }
        if name == "UserPromptSubmit":
            ev["prompt"] = "please continue with the next step"
        elif name == "SessionStart":
            ev["source"] = "startup"
        elif name == "SessionEnd":
            ev["reason"] = "exit"
        elif name in ("PreToolUse", "PostToolUse"):
            ev.update(tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="toolu_01")
            if name == "PostToolUse":
                ev["tool_response"] = {"stdout": "a\nb\n"}
        elif name == "Stop":
            ev["stop_hook_active"] = False
        ev.update(fields)
        return ev

    def prompt(self, n=None, **kw):
        return self.event("UserPromptSubmit", prompt=f"prompt number {n}" if n else "go on", **kw)

    def _args(self, profile):
        args = ["hook"]
        if profile is not None:
            args += ["--profile", str(profile)]
        return args

    @staticmethod
    def _stdin(event):
        if event is None:
            return b""
        if isinstance(event, bytes):
            return event
        if isinstance(event, str):
            return event.encode("utf-8")
        return json.dumps(event).encode("utf-8")

    def hook(self, event, profile=None, env=None, timeout=120):
        args = self._args(profile)
        data = self._stdin(event)
        rc, out, err = forkrun.run(args, input=data, cwd=str(self.project), env=self.env(env), timeout=timeout)
        return HookRun(rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), tuple(args), data)

    def hooks_parallel(self, events, profile=None, env=None, timeout=180):
        """Start one `engine hook` process per event at once, then wait for all."""
        args = self._args(profile)
        inputs = [self._stdin(ev) for ev in events]
        results = forkrun.run_many(args, inputs, cwd=str(self.project), env=self.env(env), timeout=timeout)
        return [HookRun(rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), tuple(args), data)
                for (rc, out, err), data in zip(results, inputs)]

    def engine(self, *args, cwd=None, env=None, stdin=b"", timeout=180):
        rc, out, err = forkrun.run([str(a) for a in args], input=stdin, cwd=str(cwd or self.project),
                                   env=self.env(env), timeout=timeout)
        return HookRun(rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), tuple(args))

    def compiled(self, profile):
        """Compile `profile` outside a hook (a command has no hook deadline):
        on a loaded machine a cold compile can outlast the hook's deadline,
        after which the hook ends with nothing, by design.  Tests about what
        a hook answers, not about its cold start, call this first."""
        probe = self.root / "compile-probe.md"
        probe.write_text("Run the tests.\n", encoding="utf-8")
        run = self.engine("compress", probe, "--profile", profile)
        assert run.returncode == 0, f"compiling {profile} failed\n{run}"

    def python(self, code, stdin=b"", env=None, timeout=120):
        proc = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True,
                              cwd=str(self.project), env=self.env(env), timeout=timeout)
        return HookRun(proc.returncode, proc.stdout.decode("utf-8", "replace"),
                       proc.stderr.decode("utf-8", "replace"), ("python -c",))

    def write_transcript(self, records):
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        with open(self.transcript, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec) + "\n")

    def append_transcript(self, records):
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        with open(self.transcript, "a", encoding="utf-8") as fh:
            for rec in records:
                fh.write(json.dumps(rec) + "\n")

    def engine_files(self):
        """Every file the engine may have written: state, cache, and HOME
        minus the transcripts (.jsonl) the test wrote itself."""
        return [p for root in (self.state, self.cache, self.home) for p in root.rglob("*")
                if p.is_file() and p.suffix != ".jsonl"]

    def harvest(self):
        """Give compiled profiles this test built to the tests that follow."""
        folder = self.cache / "profiles"
        if not folder.is_dir():
            return
        dest = _TEMPLATE / "profiles"
        dest.mkdir(exist_ok=True)
        # compiled profiles, plain entries (the content cache's settings), and
        # the copy of the engine's own settings a hook reads before anything
        for p, target in [*((p, dest / p.name) for p in [*folder.glob("*.pickle"), *folder.glob("*.json")]),
                          (self.cache / _SETTINGS_COPY, _TEMPLATE / _SETTINGS_COPY)]:
            if not p.is_file():
                continue
            if not target.exists():
                tmp = target.with_name(p.name + ".tmp")
                try:
                    shutil.copyfile(p, tmp)
                    os.replace(tmp, target)
                except OSError:
                    pass


def transcript_records(total, sidechain_total=None, session="s"):
    """A transcript tail: a user record, then an assistant record whose usage
    sums to `total`; with sidechain_total, a later side-chain (subagent)
    assistant record carrying that sum, which the engine must ignore."""
    third = total // 3
    usage = {"input_tokens": total - 2 * third, "cache_creation_input_tokens": third,
             "cache_read_input_tokens": third, "output_tokens": 321}
    recs = [
        {"type": "user", "isSidechain": False, "sessionId": session, "uuid": str(uuid.uuid4()),
         "message": {"role": "user", "content": "next"}},
        {"type": "assistant", "isSidechain": False, "sessionId": session, "uuid": str(uuid.uuid4()),
         "message": {"id": "msg_1", "role": "assistant", "model": "claude-x", "type": "message",
                     "content": [{"type": "text", "text": "done"}], "usage": usage}},
    ]
    if sidechain_total is not None:
        recs.append({"type": "assistant", "isSidechain": True, "sessionId": session, "uuid": str(uuid.uuid4()),
                     "message": {"id": "msg_2", "role": "assistant", "model": "claude-x", "type": "message",
                                 "content": [{"type": "text", "text": "sub"}],
                                 "usage": {"input_tokens": sidechain_total, "cache_creation_input_tokens": 0,
                                           "cache_read_input_tokens": 0, "output_tokens": 5}}})
    return recs


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_problems(text):
    """`FILE:LINE:COL: message` lines of an error output."""
    import re

    out = []
    for line in text.splitlines():
        m = re.match(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<msg>\S.*)$", line)
        if m:
            out.append((m["file"], int(m["line"]), int(m["col"]), m["msg"]))
    return out


_warmed = False


def warm_cache(folder):
    """`folder` (an ENGINE_CACHE_DIR) holds the run's compiled built-in profile.
    Hard links, not copies: the engine replaces a cache entry by a rename,
    never in place, so a test cannot change the template (and 400 tests copy
    no 5 MB)."""
    warm_template()
    shutil.copytree(_TEMPLATE, folder, dirs_exist_ok=True, copy_function=os.link)


def warm_template():
    """Compile the built-in profile once for the whole run (hooks settings and
    the standard level an injection needs) into the cache template."""
    global _warmed
    if _warmed:
        return
    with tempfile.TemporaryDirectory(prefix="warm-") as tmp:
        h = HookEnv(tmp, warm=False)
        rule = h.rule("warm.md", "# Warm\nAlways warm the cache.\n")
        # Compiled outside a hook first: on a loaded machine a cold compile
        # can outlast the hook's deadline, which would leave nothing cached.
        pre = h.engine("compress", rule, "--level", "standard")
        assert pre.returncode == 0, f"warming the cache failed\n{pre}"
        run = h.hook(h.event("SessionStart", source="compact"))
        assert run.returncode == 0 and "Always warm" in (run.context or ""), f"warming the cache failed\n{run}\n{h.log_lines()}"
        # the content cache's settings (read by PreToolUse on Bash and Read) belong to a warm cache too
        h.hook(h.event("PreToolUse", tool_name="Bash", tool_input={"command": "git status"})).assert_ok()
        h.harvest()
    _warmed = True


class GeminiChat:
    """A Gemini CLI chat file as 0.61.0 writes it (JSON.stringify: no spaces;
    tests/support/AGENTS-MEASURED.md), a part at a time: the header and the
    context a hook added at the session's start, a prompt, a response (its
    input tokens, a shell call), the call's result, a compression (a shorter
    history with a summary it never had, then an `info` line)."""

    CALL = {"id": "c1", "name": "run_shell_command", "args": {"command": "echo a"}}
    RESULT = {"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "a"}}}

    def __init__(self, path, session, project):
        self.path, self.session, self.project, self.n = Path(path), session, str(project), 0
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def _write(self, **fields):
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(fields, separators=(",", ":")) + "\n")

    def _message(self, kind, **fields):
        self.n += 1
        self._write(id=f"{self.n:08x}-0000-4000-8000-000000000000", timestamp="2026-11-28T12:17:20.000Z", type=kind,
                    **fields)

    def start(self, given):
        self._write(sessionId=self.session, projectHash=hashlib.sha256(self.project.encode()).hexdigest(),
                    startTime="2026-11-28T12:17:20.000Z", kind="main")
        self._message("user", content=[{"text": f"<hook_context>{given}</hook_context>"}])

    def prompt(self, text):
        self._message("user", content=[{"text": text}])

    def response(self, tokens, call=True, text=""):
        usage = {"input": tokens, "output": 10, "cached": 0, "thoughts": 0, "tool": 0, "total": tokens + 10}
        self._message("gemini", content=text, tokens=usage, model="gemini-2.5-flash",
                      **({"toolCalls": [self.CALL]} if call else {}))

    def compression(self, kept=()):
        """The history patch, then its `info` line.  `kept`: the contents of
        the newest messages it keeps after the summary (user messages, each
        written again under a new id, as 0.61.0 does)."""
        tail = [{"id": f"k{i}", "type": "user", "content": c} for i, c in enumerate(kept)]
        self._write(**{"$set": {"messages": [{"id": "s1", "type": "user", "content": [{"text": "SUMMARY"}]},
                                             {"id": "s2", "type": "gemini", "content": "ok"}, *tail]}})
        self._message("info", content="Context compressed from 3% to 0%.")

    def result(self, added=""):
        """The call's result; `added`: what AfterTool added to it."""
        self._message("user", content=[self.result_part(added)])

    def result_part(self, added=""):
        if not added:
            return self.RESULT
        output = f"a\n\n<hook_context>{added}</hook_context>"
        return {"functionResponse": {**self.RESULT["functionResponse"], "response": {"output": output}}}
