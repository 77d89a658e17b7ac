"""A hook that always ends (issue 14, findings 8, 9, 10, 13): its deadline is
armed before anything is loaded, a cold cache is compiled once under a
memory cap while a turn is always counted, file reads are capped before
reading, `paths:` globs are matched in linear time, and a Redis reply is
bounded while a session that loses Redis keeps one counter.

Real hook processes (`python -m engine.cli hook`), started with an address
space limit of their own (ulimit -v) so that the old, unbounded behaviour
fails the test instead of exhausting the machine."""

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import HOSTILE
from hook_fixtures import HookEnv
from test_hooks_conftest_fixtures import hk, hk_cold, redis_server  # noqa: F401 - fixtures

# What any one test process may map: far above a hook's needs (~150 MB),
# far below what the old code reached (1.76 GB for a 1 GB rule file, 23 GB
# for a hostile pattern).
AS_LIMIT = 1536 << 20


def _engine_settings():
    import yaml

    from hook_fixtures import REPO

    return yaml.safe_load((REPO / "pipelines" / "settings" / "engine.yaml").read_text(encoding="utf-8"))


def _cap():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def start(h, event, args=("hook",), env=None):
    data = event if isinstance(event, bytes) else json.dumps(event).encode()
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(h.project),
                            env=h.env(env), preexec_fn=_cap)
    return proc, data


def finish(proc, data, timeout):
    """(returncode, stdout, stderr); a process still running at `timeout`
    fails the test (a hook must end)."""
    try:
        out, err = proc.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"the process was still running after {timeout} s")
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def run(h, event, args=("hook",), env=None, timeout=60):
    return finish(*start(h, event, args, env), timeout)


def context(out):
    if not out.strip():
        return ""
    return json.loads(out).get("hookSpecificOutput", {}).get("additionalContext", "")


# -- finding 8: no deadline while loading --------------------------------------

def hostile_profile(h):
    folder = h.root / "mine"
    folder.mkdir()
    (folder / "evil.yaml").write_text(
        "kind: protect\nname: evil\ndescription: hostile\npatterns:\n"
        f"  - '{HOSTILE}'\nexamples:\n  match: [qqq]\n  no_match: [abc]\n", encoding="utf-8")
    prof = folder / "profile.yaml"
    prof.write_text("kind: profile\nname: evil\nextends: default\nprotect:\n  add: [./evil.yaml]\n", encoding="utf-8")
    return prof


def test_hostile_pattern_fails_to_compile_under_the_memory_cap_and_the_turn_counts(hk_cold):
    h = hk_cold
    prof = hostile_profile(h)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    rc, out, err = run(h, h.prompt(1), args=("hook", "--profile", str(prof)))
    assert rc == 0 and out == "" and "Traceback" not in err, err
    peak_mb = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) >> 10
    lines = h.log_lines()
    assert any("needs more than" in l and "MB" in l for l in lines), lines
    assert not any("MemoryError" in l or "internal error" in l for l in lines), lines
    # the hook, plus the compile child's cap over the hook's own size
    assert peak_mb < _engine_settings()["compile"]["memory_mb"] + 300, f"peak RSS {peak_mb} MB"
    assert h.file_turn() == 1  # counted before the profile was loaded
    # The failure is remembered: the next event does not compile again, and still counts.
    rc, out, err = run(h, h.prompt(2), args=("hook", "--profile", str(prof)))
    assert rc == 0 and h.file_turn() == 2


@pytest.mark.slow
def test_forty_parallel_prompts_on_a_cold_cache_all_end_and_all_count(hk_cold):
    h = hk_cold
    h.rule("a.md", "# A\nAlways run the tests.\n")
    n = 40
    procs = [start(h, h.prompt(i)) for i in range(n)]
    # every hook ends by its watchdog at the latest; the slack is for 40
    # interpreters starting at once on a loaded 2-core machine
    limit = _engine_settings().get("hooks", {}).get("kill_after_ms", 9000) / 1000.0 + 30
    t0 = time.monotonic()
    results = [finish(p, d, max(1.0, limit - (time.monotonic() - t0))) for p, d in procs]
    for rc, out, err in results:
        assert rc == 0 and "Traceback" not in err, err
    assert h.file_turn() == n, h.log_lines()


# -- finding 9: unbounded reads ----------------------------------------------------

def test_a_1gb_sparse_rule_file_is_skipped_and_the_other_rules_still_come(hk):
    h = hk
    h.rule("mine.md", "# Mine\nMarker USERRULE: keep commits small.\n", where="global")
    big = h.project_rules / "huge.md"
    h.project_rules.mkdir(parents=True, exist_ok=True)
    with open(big, "wb") as fh:
        fh.truncate(1 << 30)  # sparse: no gigabyte is written or allocated
    rc, out, err = run(h, h.event("SessionStart", source="compact"))
    assert rc == 0 and "Traceback" not in err, err
    assert "USERRULE" in context(out), (out, h.log_lines())
    assert any("huge.md" in l and "larger than" in l for l in h.log_lines()), h.log_lines()


def test_a_project_with_thousands_of_rule_files_still_gets_the_users_rules_first(hk):
    """A cloned repository with more rule files than a refresh lists: the
    first hooks.max_rule_files_per_folder are read, the cut is logged once,
    and the user's own rule still comes (it was never delivered: every
    refresh read 160,000 files and hit its deadline)."""
    h = hk
    h.rule("mine.md", "# Mine\nMarker USERRULE: keep commits small.\n", where="global")
    most = _engine_settings()["hooks"]["max_rule_files_per_folder"]
    h.project_rules.mkdir(parents=True, exist_ok=True)
    for i in range(most + 50):
        (h.project_rules / f"r{i:05d}.md").write_text(f"project rule {i}\n", encoding="utf-8")
    rc, out, err = run(h, h.event("SessionStart", source="compact"))
    assert rc == 0 and "Traceback" not in err, err
    assert "USERRULE" in context(out), (out, h.log_lines())
    cut = [line for line in h.log_lines() if "max_rule_files_per_folder" in line]
    assert len(cut) == 1 and f"the first {most:,} are read" in cut[0], h.log_lines()


def test_the_refresh_reads_the_users_rules_before_a_projects_bytes_use_up_its_reads(hk):
    """Project rule files that together pass hooks.max_rule_bytes_read: the
    user's own rule is read first, whatever the names, and the project's
    file past the bound is left out unread, logged."""
    h = hk
    h.rule("zz-mine.md", "# Mine\nMarker USERRULE: keep commits small.\n", where="global")
    bounds = _engine_settings()["hooks"]
    size = bounds["max_rule_file_bytes"] - 1
    h.project_rules.mkdir(parents=True, exist_ok=True)
    count = bounds["max_rule_bytes_read"] // size + 1
    for i in range(count):
        (h.project_rules / f"a{i}.md").write_bytes(b"x" * (size - 1) + b"\n")
    rc, out, err = run(h, h.event("SessionStart", source="compact"))
    assert rc == 0 and "Traceback" not in err, err
    assert "USERRULE" in context(out), (out[:2000], h.log_lines())
    over = [line for line in h.log_lines() if "max_rule_bytes_read" in line]
    assert any(f"/a{count - 1}.md " in line for line in over), h.log_lines()
    assert not any("/a0.md " in line for line in over), h.log_lines()  # read while there was room


def test_a_refresh_logs_a_bounded_number_of_its_problems(hk):
    """A repository of links the trust model refuses: each was one hook.log
    line at every refresh, enough to rotate the user's earlier lines out of
    the log.  The first hooks.max_log_lines_per_refresh are logged, then one
    line with the count of the rest; the user's rule still comes."""
    h = hk
    h.rule("mine.md", "# Mine\nMarker USERRULE: keep commits small.\n", where="global")
    most = _engine_settings()["hooks"]["max_log_lines_per_refresh"]
    outside = h.root / "elsewhere.md"
    outside.write_text("not the project's\n", encoding="utf-8")
    h.project_rules.mkdir(parents=True, exist_ok=True)
    for i in range(most + 30):
        (h.project_rules / f"link{i:03d}.md").symlink_to(outside)
    rc, out, err = run(h, h.event("SessionStart", source="compact"))
    assert rc == 0 and "USERRULE" in context(out), (out, err)
    lines = h.log_lines()
    left_out = [line for line in lines if "link" in line and "left out" in line]
    assert len(left_out) == most, lines
    assert sum("30 more problems of this refresh not logged" in line for line in lines) == 1, lines


# -- finding 10: glob backtracking ----------------------------------------------

def test_a_backtracking_glob_is_matched_in_linear_time(hk):
    h = hk
    h.rule("mine.md", "# Mine\nMarker USERRULE: keep commits small.\n", where="global")
    h.rule("scoped.md", '---\npaths: "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"\n---\n# Scoped\nMarker SCOPED.\n')
    name = "a" * 60
    h.write_transcript([{"type": "assistant", "isSidechain": False, "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(h.project / name)}}]}}])
    rc, out, err = run(h, h.event("SessionStart", source="compact"), timeout=60)
    assert rc == 0 and "Traceback" not in err, err
    ctx = context(out)
    assert "USERRULE" in ctx and "SCOPED" not in ctx, (out, h.log_lines())
    rc, out, err = run(h, b"", args=("refresh", "preview", "--cwd", str(h.project), "--touched", "a" * 60), timeout=60)
    assert rc == 0, err
    assert "scoped.md" in out, out


def test_linear_matcher_on_the_pathological_glob(tmp_path):
    # In a child process: a backtracking matcher would never return.
    code = (
        "from engine.hooks.pathscope import compile_globs\n"
        "m = compile_globs(['*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'], 1024)\n"
        "assert not m.match('a' * 60)\n"
        "assert m.match('a' * 60 + 'b')\n"
        "try:\n"
        "    compile_globs(['*a' * 40 + 'b'], 1024)\n"
        "except ValueError as exc:\n"
        "    print('refused:', exc)\n"
    )
    h = HookEnv(tmp_path / "w", warm=False)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=h.env(), preexec_fn=_cap)
    rc, out, err = finish(proc, b"", 30)
    assert rc == 0, err
    assert "refused:" in out and "max_stars" in out, out


# -- finding 13: Redis replies ---------------------------------------------------

class NestingServer:
    """Answers every command with 5,000 nested arrays."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.stop = False
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(5)
                    while conn.recv(65536):
                        conn.sendall(b"*1\r\n" * 5000 + b":1\r\n")
                except OSError:
                    pass

    def close(self):
        self.stop = True
        self.sock.close()


def test_a_deeply_nested_redis_reply_is_refused_and_the_event_still_answers(hk):
    h = hk
    h.rule("a.md", "# A\nMarker PROJECTRULE.\n")
    server = NestingServer()
    try:
        rc, out, err = run(h, h.event("SessionStart", source="compact"),
                           env={"ENGINE_REDIS_URL": f"redis://127.0.0.1:{server.port}/0"})
    finally:
        server.close()
    assert rc == 0 and "Traceback" not in err, err
    assert "PROJECTRULE" in context(out), (out, h.log_lines())
    lines = h.log_lines()
    assert not any("RecursionError" in l for l in lines), lines
    assert any("nested deeper" in l for l in lines), lines


def test_redis_paused_during_two_of_six_prompts_leaves_one_count_of_six(hk, redis_server):
    h = hk
    h.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    key = f"rules-engine:session:{h.session}"
    for i in (1, 2):
        assert run(h, h.prompt(i))[0] == 0
    assert redis_server.client().hget(key, "turn") == b"2"
    os.kill(redis_server.proc.pid, signal.SIGSTOP)  # stopped: commands time out (and may run later)
    try:
        for i in (3, 4):
            assert run(h, h.prompt(i))[0] == 0
    finally:
        os.kill(redis_server.proc.pid, signal.SIGCONT)
    for i in (5, 6):
        assert run(h, h.prompt(i))[0] == 0
    # One counter for the session: files took over from Redis's last count and kept it.
    assert h.file_turn() == 6, h.log_lines()
    assert sum("redis" in l.lower() for l in h.log_lines()) == 1, h.log_lines()


def test_what_runs_at_the_deadline_is_bounded_by_the_watchdog(tmp_path):
    """At its deadline a prompt not yet counted is counted on the way out
    (Deadline.on_expire).  The watchdog (kill_after_ms) was cancelled before
    that ran, so a count that blocked (a FIFO where the event's files are
    read) kept the hook for good: it must still end at kill_after_ms."""
    code = (
        "import time\n"
        "from engine.hooks.deadline import Deadline\n"
        "d = Deadline(lambda line: None)\n"
        "d.on_expire = lambda: time.sleep(120)\n"
        "d.arm(300, 1500)\n"
        "time.sleep(120)\n"
    )
    h = HookEnv(tmp_path / "w", warm=False)
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=h.env(), preexec_fn=_cap)
    rc, _out, err = finish(proc, b"", 60)
    assert time.monotonic() - started < 30, "the hook outlived its watchdog"
    assert rc == 1, err  # the watchdog's exit (docs: status 1, a non-blocking error for the agent)
