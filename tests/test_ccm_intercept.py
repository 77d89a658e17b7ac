"""Interception: PreToolUse decisions, the `engine cache run` wrapper, the
hook end to end, learned commands and pins (engine/ccm, handlers ccm_*)."""

import json
import os
import subprocess
import sys
import time

import pytest

from engine.ccm import config
from engine.ccm.intercept import decide
from engine.ccm.store import Store
from engine.hooks.dispatch import neutral_event
from hook_fixtures import warm_cache, warm_template

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def settings():
    return config.load(config.builtin_path())


@pytest.fixture
def world(tmp_path, monkeypatch):
    warm_template()  # before the variables below: warming forks, and the worker's first fork writes its cache folder
    home, proj = tmp_path / "home", tmp_path / "proj"
    (home / ".claude").mkdir(parents=True)
    (proj / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    env = dict(os.environ, HOME=str(home), PYTHONPATH=REPO, ENGINE_CACHE_DIR=str(tmp_path / "cache"),
               ENGINE_STATE_DIR=str(tmp_path / "state"), CLAUDE_CONFIG_DIR=str(home / ".claude"),
               CLAUDE_PROJECT_DIR=str(proj))
    for name in ("ENGINE_CACHE_DIR", "CLAUDE_CONFIG_DIR", "CLAUDE_PROJECT_DIR"):
        monkeypatch.setenv(name, env[name])
    warm_cache(tmp_path / "cache")  # the built-in profile compiled once for the run
    return type("W", (), {"home": home, "proj": proj, "env": env, "tmp": tmp_path})


def event(cmd, mode="bypassPermissions", cwd="/p", **kw):
    """The neutral event of a Claude Code PreToolUse payload."""
    return neutral_event(payload(cmd, mode, cwd, **kw))


def payload(cmd, mode="bypassPermissions", cwd="/p", **kw):
    e = {"session_id": "s1", "transcript_path": "", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": cmd, "description": "d", "timeout": 60000}, "tool_use_id": "toolu_1",
         "permission_mode": mode}
    e.update(kw)
    return e


def rules(world, **perms):
    (world.home / ".claude" / "settings.json").write_text(json.dumps({"permissions": perms}))


def test_bypass_mode_rewrites_keeping_every_other_field(world, settings):
    d = decide(event("find .", cwd=str(world.proj)), settings)
    assert set(d) == {"input"}, "no permission decision: the mode decides, as for the original"
    new = d["input"]
    assert new["description"] == "d" and new["timeout"] == 60000, "the Bash tool's own timeout still applies"
    assert "dangerouslyDisableSandbox" not in new
    assert new["command"].endswith("-- 'find .'") and " cache run --cwd=" in new["command"]


@pytest.mark.parametrize("cmd,why", [
    ("git status", "pass-through list"),
    ("echo hi", "pass-through list"),
    ("python script.py", "neither listed nor learned"),
    ("", "empty"),
])
def test_commands_not_intercepted(world, settings, cmd, why):
    assert decide(event(cmd), settings) is None, why


def test_subagent_background_and_plan_pass_through(world, settings):
    assert decide(event("find .", agent_id="a1"), settings) is None
    e = payload("find .")
    e["tool_input"]["run_in_background"] = True
    assert decide(neutral_event(e), settings) is None
    assert decide(event("find .", mode="plan"), settings) is None
    assert decide(event("find .", mode="someFutureMode"), settings) is None


def test_a_mode_not_listed_or_not_named_gets_what_the_settings_say(world, settings):
    """The policy of a mode `modes` does not list, and the mode of an event
    that names none, are the settings' (unlisted_mode, mode_when_unnamed)."""
    e = payload("find .", cwd=str(world.proj))
    del e["permission_mode"]
    unnamed = neutral_event(e)
    assert decide(unnamed, settings) is None  # taken as default: no allow rule, so it passes
    bold = json.loads(json.dumps(settings))
    bold["intercept"].update(unlisted_mode="rewrite", mode_when_unnamed="bypassPermissions")
    assert set(decide(event("find .", mode="someFutureMode", cwd=str(world.proj)), bold)) == {"input"}
    assert set(decide(unnamed, bold)) == {"input"}


def test_a_command_the_user_is_asked_about_is_still_asked_about(world, settings):
    """Default mode, no allow rule for `find`: the agent would ask.  A user
    rule allowing `engine` commands must not turn the wrapped call into an
    auto-run one: the call passes through untouched."""
    rules(world, allow=["Bash(engine:*)", f"Bash({sys.executable}:*)"])
    assert decide(event("find .", mode="default", cwd=str(world.proj)), settings) is None
    assert decide(event("find .", mode="acceptEdits", cwd=str(world.proj)), settings) is None


def test_allowed_command_is_rewritten_with_allow(world, settings):
    rules(world, allow=["Bash(find:*)"])
    d = decide(event("find . -name x", mode="default", cwd=str(world.proj)), settings)
    assert d["decision"] == "allow" and "input" in d


@pytest.mark.parametrize("perms", [
    {"allow": ["Bash(find:*)"], "deny": ["Bash(find . -delete)"]},
    {"allow": ["Bash(find:*)"], "ask": ["Bash(find:*)"]},
    {"allow": ["Bash"], "deny": ["Bash(rm:*)"]},  # compound command below: parts are not checked here
])
def test_deny_and_ask_rules_win(world, settings, perms):
    rules(world, **perms)
    for cmd in ("find . -delete", "find . | xargs rm"):
        for mode in ("default", "bypassPermissions"):
            if "find . -delete" == cmd and "deny" in perms and "rm" in perms["deny"][0]:
                continue
            assert decide(event(cmd, mode=mode, cwd=str(world.proj)), settings) is None, (cmd, mode, perms)


def test_unreadable_settings_pass_through(world, settings):
    (world.proj / ".claude" / "settings.json").write_text("{not json")
    assert decide(event("find .", cwd=str(world.proj)), settings) is None


def test_large_read_is_denied_with_a_way_to_read_it(world, settings):
    big = world.proj / "big.py"
    big.write_text("x = 1\n" * 10000)
    d = decide(neutral_event(dict({"tool_name": "Read", "tool_input": {"file_path": str(big)}}, hook_event_name="PreToolUse")), settings)
    assert d["decision"] == "deny"
    assert "offset" in d["reason"] and "not an error" in d["reason"]
    assert decide(neutral_event(dict({"tool_name": "Read", "tool_input": {"file_path": str(big), "offset": 1, "limit": 400}},
                                     hook_event_name="PreToolUse")), settings) is None
    cfg = world.proj / "big.json"
    cfg.write_text("[" + "1," * 20000 + "1]")
    assert decide(neutral_event(dict({"tool_name": "Read", "tool_input": {"file_path": str(cfg)}}, hook_event_name="PreToolUse")), settings) is None
    assert decide(neutral_event(dict({"tool_name": "Read", "tool_input": {"file_path": str(big)}, "agent_id": "a"},
                                     hook_event_name="PreToolUse")), settings) is None


def engine(world, *args, stdin=None, cwd=None, timeout=60):
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], input=stdin, capture_output=True,
                          env=world.env, cwd=cwd or str(world.proj), timeout=timeout)


GEN = "python3 -c \"import sys; sys.stdout.buffer.write(bytes(range(256)) * 400 + b'tail-without-newline')\""


def test_wrapper_keeps_every_byte_and_the_exit_code(world):
    """Seed fault: its interception read 4,096 bytes through a text pipe and
    then lost them to communicate()."""
    r = engine(world, "cache", "run", "--cwd", str(world.proj), "--", GEN + "; exit 7")
    assert r.returncode == 7
    out = r.stdout.decode()
    assert out.startswith("[CCM_CACHED]") and "exit: 7" in out and "not an error" in out
    key = out.split("key: sha256:")[1].split()[0]
    shown = engine(world, "cache", "show", key)
    assert shown.returncode == 0
    assert shown.stdout == bytes(range(256)) * 400 + b"tail-without-newline"
    part = engine(world, "cache", "show", "sha256:" + key, "--lines", "1:1")
    assert part.stdout == (bytes(range(256)) * 400).split(b"\n")[0] + b"\n"


def test_wrapper_small_output_is_unchanged_and_runs_once_in_the_event_cwd(world, tmp_path):
    """Seed fault: it ran commands in its own working folder, not the event's cwd."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    r = engine(world, "cache", "run", "--cwd", str(world.proj), "--", "echo ran >> count.txt; pwd; printf 'a\\0b'",
               cwd=str(other))
    assert r.returncode == 0 and r.stdout == (str(world.proj) + "\n").encode() + b"a\0b"
    assert (world.proj / "count.txt").read_text() == "ran\n"
    r = engine(world, "cache", "run", "--cwd", str(world.proj), "--", "echo ran >> count.txt; seq 1 5000")
    assert r.stdout.startswith(b"[CCM_CACHED]")
    assert (world.proj / "count.txt").read_text() == "ran\nran\n", "the command ran exactly once"


def test_wrapper_never_caches_a_secret(world):
    secret = "ghp_" + "A1b2C3d4E5" * 4
    r = engine(world, "cache", "run", "--", f"seq 1 3000; echo {secret}")
    assert secret.encode() in r.stdout and not r.stdout.startswith(b"[CCM_CACHED]")
    blobs = world.tmp / "cache" / "ccm" / "blobs"
    assert not blobs.exists() or os.listdir(blobs) == []


def test_hook_never_runs_the_command_and_returns_at_once(world):
    e = payload(f"find . -newer x; touch {world.proj}/MARK; sleep 30", cwd=str(world.proj))
    t = time.monotonic()
    r = engine(world, "hook", stdin=json.dumps(e).encode(), timeout=20)
    assert r.returncode == 0
    assert not (world.proj / "MARK").exists(), "the hook ran the command"
    new = json.loads(r.stdout)["hookSpecificOutput"]["updatedInput"]["command"]
    # the rewritten call runs inside the Bash tool: its timeout (here, a kill
    # of the process group once the command has started) ends the wrapper and the command alike
    p = subprocess.Popen(["/bin/bash", "-c", new], env=world.env, cwd=str(world.proj), start_new_session=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    until = time.monotonic() + 20
    while not (world.proj / "MARK").exists() and time.monotonic() < until:
        time.sleep(0.05)
    os.killpg(p.pid, 9)
    p.wait(timeout=10)
    assert (world.proj / "MARK").exists()
    ps = subprocess.run(["pgrep", "-f", f"touch {world.proj}/MARK; sleep 30"], capture_output=True, text=True)
    assert ps.stdout.strip() == "", "a child outlived the tool's timeout"
    assert time.monotonic() - t < 60  # not a speed check: the hook did not wait for `sleep 30`


HOT = r"""
import io, json, sys
from engine.hooks import dispatch
heavy = {"yaml", "jsonschema", "jinja2", "tiktoken", "redis", "zstandard"}
out = io.StringIO()
dispatch.main(None, stdin=io.StringIO(sys.stdin.read()), stdout=out)
sys.__stdout__.write(json.dumps({"out": out.getvalue(), "mods": sorted(m for m in sys.modules if m.split('.')[0] in heavy)}))
"""


def test_pass_through_pre_tool_use_imports_nothing_heavy(world):
    e = json.dumps(payload("git status", cwd=str(world.proj))).encode()
    engine(world, "hook", stdin=e)  # warm the caches
    log = world.tmp / "state" / "hook.log"
    before = log.read_text() if log.exists() else ""
    r = subprocess.run([sys.executable, "-c", HOT], input=e, capture_output=True, env=world.env, cwd=str(world.proj))
    res = json.loads(r.stdout)
    assert res["out"] == ""
    assert res["mods"] == [], res["mods"]
    # passed through, not failed: a handler that crashed would print and import nothing too
    assert (log.read_text() if log.exists() else "") == before


def test_learned_command_is_intercepted_next_time(world):
    cmd = "python3 make_report.py --all"
    e = payload(cmd, cwd=str(world.proj))
    assert json.loads(engine(world, "hook", stdin=json.dumps(e).encode()).stdout or "null") is None
    post = dict(e, hook_event_name="PostToolUse", tool_response={"stdout": "row\n" * 1000, "stderr": ""})
    engine(world, "hook", stdin=json.dumps(post).encode())
    out = json.loads(engine(world, "hook", stdin=json.dumps(e).encode()).stdout)
    assert "cache run" in out["hookSpecificOutput"]["updatedInput"]["command"]
    listed = engine(world, "cache", "learned", "--project", str(world.proj))
    assert "python3 make_report.py" in listed.stdout.decode()


def test_a_command_learned_in_a_subfolder_is_the_projects(world):
    """Audit: learned commands were kept per folder, not per project as the
    docs say: a report learned large in svc/ was run unwrapped at the
    repository's root, and `engine cache learned` listed every project
    whatever its --project said by default.  Now the project is the
    repository's root, as for the cache's entries; the listing is this
    project's unless --all."""
    (world.proj / ".git").mkdir()
    (world.proj / "svc").mkdir()
    cmd = "python3 make_report.py --all"
    post = dict(payload(cmd, cwd=str(world.proj / "svc")), hook_event_name="PostToolUse",
                tool_response={"stdout": "row\n" * 1000, "stderr": ""})
    engine(world, "hook", stdin=json.dumps(post).encode())
    out = json.loads(engine(world, "hook", stdin=json.dumps(payload(cmd, cwd=str(world.proj))).encode()).stdout)
    assert "cache run" in out["hookSpecificOutput"]["updatedInput"]["command"], out
    other = world.tmp / "other"
    other.mkdir()
    assert "python3 make_report.py" in engine(world, "cache", "learned", cwd=str(world.proj / "svc")).stdout.decode()
    assert "make_report" not in engine(world, "cache", "learned", cwd=str(other)).stdout.decode()
    assert "make_report" in engine(world, "cache", "learned", "--all", cwd=str(other)).stdout.decode()


# -- the learned file's bounds ---------------------------------------------------
# Audit: the learned file had no bound but age.  Every shell call's PreToolUse
# read and parsed it whole; thousands of distinct large commands (or a model
# told to run them) grew it for ever, and every later shell call paid for it.

BOUND = {"expiry_days": 30, "max_entries": 5, "max_bytes": 1024}


def _learn_many(root, conf, count, start=1_000_000, project="/p"):
    from engine.ccm.learned import learn

    for i in range(count):
        learn(root, project, f"python3 tool_{i:04d}.py", 5000, conf, now=start + i)


def test_a_write_keeps_the_most_recently_learned_entries(tmp_path):
    from engine.ccm.learned import learn, read

    conf = dict(BOUND, max_bytes=131072)
    _learn_many(str(tmp_path), conf, 12)
    assert sorted(read(str(tmp_path), "/p", conf, now=1_000_100)) == [f"python3 tool_{i:04d}.py" for i in range(7, 12)]
    learn(str(tmp_path), "/p", "python3 tool_0007.py", 5000, conf, now=1_000_100)  # learned again: the newest now
    learn(str(tmp_path), "/p", "make check", 5000, conf, now=1_000_101)
    kept = read(str(tmp_path), "/p", conf, now=1_000_200)
    assert sorted(kept) == ["make check"] + [f"python3 tool_{i:04d}.py" for i in (7, 9, 10, 11)]
    assert kept["python3 tool_0007.py"]["count"] == 2  # what it knew of the entry is kept


def test_a_write_keeps_the_file_within_its_bytes(tmp_path):
    from engine.ccm.learned import _path, read

    conf = dict(BOUND, max_entries=500)
    _learn_many(str(tmp_path), conf, 40)
    path = _path(str(tmp_path), "/p")
    kept = read(str(tmp_path), "/p", conf, now=1_000_100)
    assert os.path.getsize(path) <= conf["max_bytes"]
    assert 3 < len(kept) < 40 and "python3 tool_0039.py" in kept  # the newest that fit
    newest = sorted(range(40), reverse=True)[:len(kept)]
    assert sorted(kept) == sorted(f"python3 tool_{i:04d}.py" for i in newest)


def test_a_command_too_long_for_the_file_drops_nothing_else(tmp_path):
    from engine.ccm.learned import learn, read

    conf = dict(BOUND, max_entries=500)
    _learn_many(str(tmp_path), conf, 3)
    learn(str(tmp_path), "/p", "python3 '" + "x " * 600 + "'", 5000, conf, now=1_000_100)
    assert sorted(read(str(tmp_path), "/p", conf, now=1_000_100)) == [f"python3 tool_{i:04d}.py" for i in range(3)]


def test_a_learned_command_run_through_the_wrapper_is_learned_again(world, settings):
    """Where calls are wrapped, the hook learns nothing from them (the
    wrapper's call): a learned command in daily use kept its first
    last_seen, expired, and was the first to go from the bounded file."""
    from engine.ccm.learned import learn, read
    from engine.ccm.origin import project_of

    root, project, conf = config.folder(settings), project_of(str(world.proj)), settings["learned"]
    learn(root, project, "python3 make_report.py", 9000, conf, now=time.time() - 20 * 86400)
    (world.proj / "make_report.py").write_text("for i in range(3000):\n    print('row', i)\n")
    r = engine(world, "cache", "run", "--cwd", str(world.proj), "--", "python3 make_report.py --all")
    assert r.returncode == 0 and r.stdout.startswith(b"[CCM_CACHED]"), r
    entry = read(root, project, conf)["python3 make_report.py"]
    assert entry["count"] == 2 and entry["last_seen"] > time.time() - 600, entry


def _oversized(root, project, over):
    """A learned file over `over` bytes (an older version's), naming `python3 make_report.py`."""
    from engine.ccm.learned import _path

    pats = {f"python3 old_{i:05d}.py": {"first_seen": time.time(), "last_seen": time.time(), "count": 1,
                                        "max_bytes": 5000} for i in range(2000)}
    pats["python3 make_report.py"] = dict(pats["python3 old_00000.py"])
    path = _path(root, project)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump({"project": project, "patterns": pats}, fh)
    assert os.path.getsize(path) > over
    return path


def test_an_oversized_file_is_not_read_said_once_and_rebuilt(tmp_path, monkeypatch):
    from engine.ccm import learned

    conf = dict(BOUND, max_entries=500, max_bytes=4096)
    path = _oversized(str(tmp_path), "/p", conf["max_bytes"])
    read_bytes = []
    real = open

    class Spy:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def fileno(self):
            return self.fh.fileno()

        def read(self, *n):
            data = self.fh.read(*n)
            read_bytes.append(len(data))
            return data

    monkeypatch.setattr(learned, "open", lambda *a, **k: Spy(real(*a, **k)), raising=False)
    said = []
    assert learned.read_fast(str(tmp_path), "/p", conf, said.append) == {}
    assert learned.read_fast(str(tmp_path), "/p", conf, said.append) == {}
    assert learned.read(str(tmp_path), "/p", conf) == {}
    assert sum(read_bytes) == 0, "the oversized file was read"
    assert len(said) == 1 and path in said[0] and "max_bytes" in said[0], said
    learned.learn(str(tmp_path), "/p", "make check", 5000, conf)
    assert os.path.getsize(path) <= conf["max_bytes"]
    assert list(learned.read_fast(str(tmp_path), "/p", conf, said.append)) == ["make check"]
    assert not os.path.exists(path + learned._SAID)  # a later oversized file is said again


HOOK_READS = r"""
import builtins, io, json, sys
from engine.hooks import dispatch
real, reads = builtins.open, []
class Spy(io.FileIO):
    def read(self, *n):
        data = super().read(*n)
        if "/learned/" in self.name:
            reads.append(len(data))
        return data
def spy_open(file, mode="r", *a, **k):
    if isinstance(file, str) and "/learned/" in file and mode == "rb":
        return Spy(file, "rb")
    return real(file, mode, *a, **k)
builtins.open = spy_open
out = io.StringIO()
dispatch.main(None, stdin=io.StringIO(sys.stdin.read()), stdout=out)
sys.__stdout__.write(json.dumps({"out": out.getvalue(), "reads": reads}))
"""


def test_the_hook_reads_no_oversized_learned_file_and_still_answers(world, settings):
    from engine.ccm.origin import project_of

    cmd = "python3 make_report.py --all"
    e = json.dumps(payload(cmd, cwd=str(world.proj))).encode()
    engine(world, "hook", stdin=json.dumps(payload("git status", cwd=str(world.proj))).encode())  # warm the caches
    path = _oversized(config.folder(settings), project_of(str(world.proj)), 131072)  # the built-in max_bytes
    runs = [subprocess.run([sys.executable, "-c", HOOK_READS], input=e, capture_output=True, env=world.env,
                           cwd=str(world.proj), timeout=60) for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
        res = json.loads(r.stdout)
        assert res["out"] == "" and res["reads"] == [], res  # as if nothing were learned: passed through, unread
    log = (world.tmp / "state" / "hook.log").read_text()
    assert log.count("learned commands not read") == 1 and path in log, log
    assert "failed" not in log and "Traceback" not in log, log
    # and the hook still answers what it knows: a listed command is rewritten
    listed = json.loads(engine(world, "hook", stdin=json.dumps(payload("find .", cwd=str(world.proj))).encode()).stdout)
    assert "cache run" in listed["hookSpecificOutput"]["updatedInput"]["command"]
    # the next command learned rebuilds the file within its bounds, and the listing shows what is kept
    post = dict(payload("python3 gen.py", cwd=str(world.proj)), hook_event_name="PostToolUse",
                tool_response={"stdout": "row\n" * 1000, "stderr": ""})
    engine(world, "hook", stdin=json.dumps(post).encode())
    assert os.path.getsize(path) <= 131072
    shown = engine(world, "cache", "learned", "--project", str(world.proj)).stdout.decode().splitlines()
    assert [line.split("\t")[0].strip() for line in shown[1:]] == ["python3 gen.py"], shown


def test_pin_directives(world):
    prompt = {"session_id": "s1", "transcript_path": "", "cwd": str(world.proj), "hook_event_name": "UserPromptSubmit",
              "prompt": 'ccm:pin next level=hard reason="build log"'}
    r = engine(world, "hook", stdin=json.dumps(prompt).encode())
    assert "next cached output will be pinned" in json.loads(r.stdout)["systemMessage"]
    out = engine(world, "cache", "run", "--session", "s1", "--", "seq 1 3000").stdout.decode()
    assert "pinned: hard" in out
    second = engine(world, "cache", "run", "--session", "s1", "--", "seq 1 4000").stdout.decode()
    key2 = second.split("sha256:")[1].split()[0]
    assert "pinned: none" in second
    prompt["prompt"] = "please keep it\nccm:pin last level=soft reason=\"x\""
    engine(world, "hook", stdin=json.dumps(prompt).encode())
    store = Store(config.load(config.builtin_path()))
    assert store.meta(key2)["pin"] == {"level": "soft", "reason": "x"}
    listed = engine(world, "cache", "list", "--pinned").stdout.decode()
    assert listed.count("sha256:") == 2


def test_pin_next_waits_for_an_output_that_is_cached(world):
    """Old: `ccm:pin next` was consumed by an output holding a secret,
    which is never cached: nothing was pinned, and the next cached output
    was not either."""
    prompt = {"session_id": "s2", "transcript_path": "", "cwd": str(world.proj), "hook_event_name": "UserPromptSubmit",
              "prompt": 'ccm:pin next level=hard reason="build log"'}
    engine(world, "hook", stdin=json.dumps(prompt).encode())
    token = "ghp_" + "A1b2C3d4E5" * 4
    secret = engine(world, "cache", "run", "--session", "s2", "--", f"seq 1 3000; echo {token}").stdout.decode()
    assert "CCM_CACHED" not in secret and token in secret
    out = engine(world, "cache", "run", "--session", "s2", "--", "seq 1 3000").stdout.decode()
    assert "pinned: hard" in out, out[-600:]
    again = engine(world, "cache", "run", "--session", "s2", "--", "seq 1 4000").stdout.decode()
    assert "pinned: none" in again, "one output pinned, as asked"


def test_install_writes_pin_commands_and_uninstall_removes_exactly_those(world):
    cmds = world.proj / ".claude" / "commands"
    cmds.mkdir()
    (cmds / "mine.md").write_text("my own command\n")
    assert engine(world, "install", "--project").returncode == 0
    names = sorted(p.name for p in cmds.iterdir())
    assert names == ["mine.md", "pin-end.md", "pin-last.md", "pin-next.md", "pin-start.md"]
    assert "ccm:pin last" in (cmds / "pin-last.md").read_text()
    (cmds / "pin-end.md").write_text("edited by the user\n")
    assert engine(world, "install", "--project").returncode == 0
    assert (cmds / "pin-end.md").read_text() == "edited by the user\n", "install never overwrites the user's file"
    assert engine(world, "uninstall", "--project").returncode == 0
    assert sorted(p.name for p in cmds.iterdir()) == ["mine.md", "pin-end.md"]


def test_pin_last_never_pins_another_projects_output(world):
    """A session id met in two projects (a session resumed elsewhere, or a
    crafted payload): `ccm:pin last` in project B pinned the output the
    session last cached in project A, which B cannot even list."""
    other = world.tmp / "other"
    (other / ".git").mkdir(parents=True)
    out = engine(world, "cache", "run", "--session", "s9", "--", "seq 1 3000").stdout.decode()
    key = out.split("sha256:")[1].split()[0]
    prompt = {"session_id": "s9", "transcript_path": "", "cwd": str(other), "hook_event_name": "UserPromptSubmit",
              "prompt": "ccm:pin last level=hard"}
    r = engine(world, "hook", stdin=json.dumps(prompt).encode(), cwd=str(other))
    assert "no cached output to pin yet" in json.loads(r.stdout)["systemMessage"]
    store = Store(config.load(config.builtin_path()))
    assert store.meta(key)["pin"]["level"] == "none"
    prompt["cwd"] = str(world.proj)
    engine(world, "hook", stdin=json.dumps(prompt).encode())
    assert store.meta(key)["pin"]["level"] == "hard"
