"""Per-session state under concurrency: 50 `engine hook` processes at once on
one session, with file state and with a real redis-server; Redis going away
mid-session; expiry; SessionEnd; one session never touching another."""

import json
import re

import pytest

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk, redis_server  # noqa: F401 - fixtures

N = 50


def _world(hk):
    hk.rule("a.md", "# A\nMarker RULEMARK: keep it.\n")
    hk.claude_md("Marker CLAUDEMARK: notes.\n")
    # Fifty processes on a shared 2-core machine can take longer than the
    # hook deadline (8 s) in wall time; these tests are about counting, so
    # they give the hooks a deadline that load cannot reach.
    hk.extra_env["ENGINE_PROFILE"] = shared_profile(profile_text(
        name="slow-machine", install_timeout_seconds=300, deadline_ms=240000, kill_after_ms=270000))


def _check_fifty(runs):
    """All exit 0; with the built-in cadence exactly the turns 20 and 40 carry
    the rules, and exactly turn 40 carries CLAUDE.md: each turn number was
    handed out once."""
    for r in runs:
        r.assert_ok()
    rules = [r for r in runs if "RULEMARK" in (r.context or "")]
    claude = [r for r in runs if "CLAUDEMARK" in (r.context or "")]
    silent = [r for r in runs if r.stdout == ""]
    assert len(rules) == 2, f"{len(rules)} rule injections among {N} prompts (expected turns 20 and 40)"
    assert len(claude) == 1, f"{len(claude)} CLAUDE.md injections among {N} prompts (expected turn 40)"
    assert len(silent) == N - 2
    turns = sorted(int(t) for r in rules for t in re.findall(r"turn (\d+)", r.context)[:1])
    assert turns == [20, 40], turns


@pytest.mark.slow
def test_fifty_concurrent_prompts_with_file_state(hk):
    _world(hk)
    hk.hook(hk.event("SessionStart", source="startup")).assert_ok()  # warm, and a realistic start
    runs = hk.hooks_parallel([hk.prompt(i) for i in range(N)])
    _check_fifty(runs)
    assert hk.file_turn() == N
    leftovers = [p.name for p in (hk.state / "sessions").iterdir() if p.name.endswith(".tmp")]
    assert leftovers == [], f"temporary state files left behind: {leftovers}"
    assert hk.log_lines() == []


@pytest.mark.slow
def test_two_sessions_in_parallel_count_apart(hk):
    a, b = "session-aaaa", "session-bbbb"
    events = [hk.prompt(i, session=a if i % 2 else b) for i in range(30)]
    for r in hk.hooks_parallel(events):
        r.assert_ok()
    assert hk.file_turn(a) == 15 and hk.file_turn(b) == 15


@pytest.mark.slow
def test_fifty_concurrent_prompts_with_redis(hk, redis_server):
    _world(hk)
    hk.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    runs = hk.hooks_parallel([hk.prompt(i) for i in range(N)])
    _check_fifty(runs)
    r = redis_server.client()
    key = f"rules-engine:session:{hk.session}"
    assert r.hget(key, "turn") == str(N).encode(), r.hgetall(key)
    ttl = r.ttl(key)
    assert 24 * 3600 - 120 <= ttl <= 24 * 3600, f"TTL {ttl} s, expected about 24 h"
    # Redis is configured and up: it holds the count (the file keeps only Redis's last count, see leave_redis)
    assert hk.file_turn() in (None, 0), "Redis is configured and up: no turn counted in files expected"
    assert hk.log_lines() == []


def test_redis_state_ttl_follows_the_profile(hk, redis_server):
    prof = shared_profile(profile_text(state={"ttl_hours": 2}))
    hk.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    hk.hook(hk.prompt(1), profile=prof).assert_silent()
    ttl = redis_server.client().ttl(f"rules-engine:session:{hk.session}")
    assert 2 * 3600 - 120 <= ttl <= 2 * 3600, ttl


def test_redis_url_from_the_profile(hk, redis_server):
    prof = shared_profile(profile_text(state={"redis_url": redis_server.url}))
    for i in range(3):
        hk.hook(hk.prompt(i), profile=prof).assert_silent()
    assert redis_server.client().hget(f"rules-engine:session:{hk.session}", "turn") == b"3"
    assert hk.file_turn() in (None, 0)  # Redis counts; the file keeps only Redis's last count


def test_session_end_removes_redis_state(hk, redis_server):
    hk.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    r = redis_server.client()
    key = f"rules-engine:session:{hk.session}"
    other = "rules-engine:session:someone-else"
    r.hset(other, "turn", 7)
    hk.hook(hk.prompt(1)).assert_silent()
    hk.hook(hk.prompt(2)).assert_silent()
    assert r.hget(key, "turn") == b"2"
    hk.hook(hk.event("SessionEnd", reason="logout")).assert_silent()
    assert r.exists(key) == 0
    assert r.hget(other, "turn") == b"7"
    hk.hook(hk.prompt(1)).assert_silent()
    assert r.hget(key, "turn") == b"1"


def test_redis_stopped_mid_session_falls_back_to_files(hk, redis_server):
    hk.rule("a.md", "# A\nMarker RULEMARK.\n")
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 2}]}))
    hk.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    got = []
    for i in range(3):
        run = hk.hook(hk.prompt(i), profile=prof)
        run.assert_ok()
        got.append("RULEMARK" in (run.context or ""))
    assert redis_server.client().hget(f"rules-engine:session:{hk.session}", "turn") == b"3"
    assert hk.file_turn() in (None, 0)  # Redis counts; the file keeps only Redis's last count
    assert hk.log_lines() == []

    redis_server.stop()
    for i in range(3):
        run = hk.hook(hk.prompt(i), profile=prof)
        run.assert_ok()
        assert run.stderr == "", str(run)
        got.append("RULEMARK" in (run.context or ""))
    # Redis turns 1..3, then files count on 4..6 (one counter for the session): the cadence keeps working.
    assert got == [False, True, False, True, False, True]
    assert hk.file_turn() == 6
    lines = hk.log_lines()
    assert len(lines) == 1, "the hook log says once that Redis is down:\n" + "\n".join(lines)
    assert "redis" in lines[0].lower()
    # SessionEnd with Redis gone still exits 0 and removes the file state, all
    # but the records of what the engine delivered (handlers/clear_state.py).
    hk.hook(hk.event("SessionEnd"), profile=prof).assert_silent()
    left = [json.loads(p.read_text()) for p in hk.session_files()]
    assert all(k.startswith(("ivd:", "_")) for d in left for k in d), left  # "_touched": the file's own


def test_a_lone_surrogate_in_a_state_key_keeps_the_session_in_redis(hk, redis_server):
    """A call id or tool name with a lone surrogate (valid in the event's
    JSON) becomes a state key (`mem:<call id>`); the client wrote it with
    surrogatepass and read it back strictly, so every later read of the
    session was "a malformed reply" and the session left Redis, its marks
    with it."""
    hk.extra_env["ENGINE_REDIS_URL"] = redis_server.url
    failed = hk.event("PostToolUseFailure", tool_name="Bash", tool_input={"command": "make"},
                      tool_use_id="toolu_\ud800x", error="make: *** [all] Error 2")
    hk.hook(failed).assert_silent()
    hk.hook(hk.prompt(1)).assert_ok()
    assert hk.log_lines() == []
    held = redis_server.client().hgetall(f"rules-engine:session:{hk.session}")
    assert held[b"turn"] == b"1" and b"mem:toolu_\xed\xa0\x80x" in held, held


def test_redis_unreachable_from_the_start(hk):
    from hook_fixtures import free_port

    hk.extra_env["ENGINE_REDIS_URL"] = f"redis://127.0.0.1:{free_port()}/0"
    for i in range(4):
        run = hk.hook(hk.prompt(i))
        run.assert_silent()
    assert hk.file_turn() == 4
    lines = hk.log_lines()
    assert len(lines) == 1 and "redis" in lines[0].lower(), lines


def test_state_file_is_json_with_the_turn(hk):
    for i in range(3):
        hk.hook(hk.prompt(i)).assert_silent()
    files = hk.session_files()
    assert len(files) == 1
    data = json.loads(files[0].read_text())
    assert data["turn"] == 3


def test_hostile_session_id_stays_inside_the_state_folder(hk):
    evil = "../../../escape/..\\x"
    run = hk.hook(hk.prompt(1, session=evil))
    run.assert_silent()
    assert not (hk.root / "escape").exists() and not (hk.state.parent / "escape").exists()
    files = list((hk.state / "sessions").glob("*.json"))
    assert len(files) == 1 and files[0].parent == hk.state / "sessions"
    assert json.loads(files[0].read_text())["turn"] == 1


def test_redis_database_number_from_the_url(hk, redis_server):
    hk.extra_env["ENGINE_REDIS_URL"] = f"redis://127.0.0.1:{redis_server.port}/3"
    for i in range(2):
        hk.hook(hk.prompt(i)).assert_silent()
    import redis

    key = f"rules-engine:session:{hk.session}"
    assert redis.Redis(port=redis_server.port, db=3).hget(key, "turn") == b"2"
    assert redis_server.client().exists(key) == 0, "db 0 untouched"


def test_malformed_redis_url_falls_back_to_files(hk):
    """A typo in the Redis URL is like an unreachable Redis: file state, one log line."""
    hk.extra_env["ENGINE_REDIS_URL"] = "redis://127.0.0.1:63xx/0"
    for i in range(3):
        hk.hook(hk.prompt(i)).assert_silent()
    assert hk.file_turn() == 3
    lines = hk.log_lines()
    assert len(lines) == 1 and "redis" in lines[0].lower(), lines


def test_redis_password_is_not_written_to_the_log(hk):
    from hook_fixtures import free_port

    hk.extra_env["ENGINE_REDIS_URL"] = f"redis://:SeCrEtPaSs@127.0.0.1:{free_port()}/0"
    hk.hook(hk.prompt(1)).assert_silent()
    lines = hk.log_lines()
    assert len(lines) == 1, lines
    assert "SeCrEtPaSs" not in lines[0], f"the Redis password leaked into the hook log: {lines[0]}"


def test_redis_that_never_answers_does_not_hang_the_hook(hk):
    """A port that accepts connections but never replies (a hung server):
    the short timeout sends the hook to files instead of blocking the agent."""
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)  # never accept()ed: connects succeed, nothing answers
    try:
        hk.extra_env["ENGINE_REDIS_URL"] = f"redis://127.0.0.1:{srv.getsockname()[1]}/0"
        for i in range(3):
            hk.hook(hk.prompt(i), timeout=30).assert_silent()
    finally:
        srv.close()
    # A hook that waited on the silent server would meet its deadline before
    # writing any state: three counted turns mean each fell back in time.
    assert hk.file_turn() == 3
    lines = hk.log_lines()
    assert len(lines) == 1 and "redis" in lines[0].lower(), "say once that Redis is down:\n" + "\n".join(lines)


def test_parallel_prompts_wait_on_a_hung_redis_once_not_each_in_turn(hk):
    """Prompts arriving together while Redis hangs: each counted through
    Redis under the session file's lock, so each waited call_timeout_ms in
    turn (24 x 1 s); past their deadline they answered nothing and their
    turns were lost (9 to 16 of 30 counted), and the failure was logged
    again and again.  The first that fails leaves Redis in that same
    transaction: the others count in files at once."""
    import socket

    prof = shared_profile(profile_text(state={"call_timeout_ms": 1000}))
    hk.compiled(prof)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)  # never accept()ed: connects succeed, nothing answers
    hk.extra_env["ENGINE_REDIS_URL"] = f"redis://127.0.0.1:{srv.getsockname()[1]}/0"
    try:
        runs = hk.hooks_parallel([hk.prompt(i) for i in range(24)], profile=prof, timeout=120)
    finally:
        srv.close()
    for r in runs:
        r.assert_ok()
    assert hk.file_turn() == 24
    lines = hk.log_lines()
    said = [line for line in lines if "redis" in line.lower()]
    assert len(said) == 1 and not any("deadline" in line for line in lines), "\n".join(lines)


def test_file_state_expires_after_the_profile_ttl(hk):
    """ttl_hours (24 by default) applies to file state too: a session idle
    longer than that counts from 1 again."""
    import time

    prof = shared_profile(profile_text(state={"ttl_hours": 0.001}))  # 3.6 s
    hk.hook(hk.prompt(1), profile=prof).assert_silent()
    hk.hook(hk.prompt(2), profile=prof).assert_silent()
    assert hk.file_turn() == 2
    # idle for 10 s: the state says when it was last touched (no sleep in a test)
    path = hk.session_files()[0]
    data = json.loads(path.read_text())
    data["_touched"] = time.time() - 10
    path.write_text(json.dumps(data))
    hk.hook(hk.prompt(3), profile=prof).assert_silent()
    assert hk.file_turn() == 1


# ---------------------------------------------------------------- one answer at a time per session

OWN_RULES = {"UserPromptSubmit": [{"name": "rules", "every_turns": 1, "sources": [
    {"agent": "rules"}, {"dir": "{project}/myrules", "glob": "*.md"}]}]}


def _own_rule(hk):
    (hk.project / "myrules").mkdir()
    (hk.project / "myrules" / "a.md").write_text("# A\nMarker OWNRULE_1: run the tests in order.\n")


def test_a_start_and_a_prompt_at_once_deliver_a_rule_once(hk):
    """Copilot CLI 1.0.102 starts userPromptSubmitted while sessionStart still
    runs (tests/support/AGENTS-MEASURED.md).  One after the other, the
    prompt sees that the start delivered the rule; at once, both delivered
    it (old code, every trial).  The session's events answer one at a time."""
    _own_rule(hk)
    prof = str(shared_profile(profile_text(OWN_RULES)))
    for trial in range(3):
        sid = f"at-once-{trial}"
        runs = hk.hooks_parallel([hk.event("SessionStart", source="startup", session_id=sid),
                                  dict(hk.prompt(1), session_id=sid)], profile=prof)
        assert all(r.returncode == 0 for r in runs), runs
        assert sum(r.stdout.count("OWNRULE_1") for r in runs) == 1, [str(r) for r in runs]


def test_a_hook_waiting_for_its_sessions_answer_still_answers_before_its_deadline(hk):
    from engine.hooks.state import OneAnswer

    _own_rule(hk)
    prof = str(shared_profile(profile_text(OWN_RULES, deadline_ms=2500, kill_after_ms=4000)))
    hk.hook(dict(hk.prompt(1), session_id="warm"), profile=prof).assert_ok()  # compiled: the wait is all that is left
    with OneAnswer("held", None, 0.01, print, root=str(hk.state)):
        run = hk.hook(dict(hk.prompt(1), session_id="held"), profile=prof)
    assert run.returncode == 0 and "OWNRULE_1" in run.stdout, str(run)
    assert any("still answering" in line for line in hk.log_lines()), hk.log_lines()


def test_session_end_leaves_no_file_of_the_session(hk):
    """Its state, the state's lock and its answer lock (file state)."""
    hk.hook(hk.prompt(1)).assert_silent()
    assert any(p.name.endswith(".answer.lock") for p in (hk.state / "sessions").iterdir())
    hk.hook(hk.event("SessionEnd", reason="logout")).assert_silent()
    assert list((hk.state / "sessions").iterdir()) == []


def test_the_answer_lock_is_touched_by_every_event_so_the_expiry_spares_a_live_session(hk):
    import os

    hk.hook(hk.prompt(1)).assert_silent()
    (lock,) = (hk.state / "sessions").glob("*.answer.lock")
    os.utime(lock, (1, 1))  # as old as a session idle since 1970
    hk.hook(hk.prompt(2)).assert_silent()
    assert lock.stat().st_mtime > 1e9


def test_the_state_lock_is_touched_by_every_change_so_the_expiry_spares_a_live_session(tmp_path):
    """A session running longer than the state lives (ttl_hours) keeps the
    lock file it made at its start: removed by another session's prune while
    a transaction held it, the next transaction locked a new file beside it
    and both changed the state at once (a turn lost)."""
    import os

    from engine.hooks.state import FileState

    live = FileState("live", 3600, root=str(tmp_path))
    live.bump_turn()
    lock = live.path + ".lock"
    os.utime(lock, (1, 1))  # made at the session's start, more than ttl_hours ago
    live.bump_turn()
    FileState("other", 3600, root=str(tmp_path)).prune()
    assert os.path.exists(lock), "the lock of a live session was removed by the expiry"
    assert live.current_turn() == 2


def test_a_fifo_in_place_of_the_state_file_is_not_waited_on(hk):
    """Reading the session's state opened whatever was at its path: a FIFO
    there held every event of the session until its deadline, which then
    answered nothing.  It is no state: the count starts again, and the
    first write replaces it with a regular file."""
    import os

    from engine.base.digest import safe_key

    hk.hook(hk.prompt(1)).assert_silent()  # warm: the session's folder is there
    (state,) = hk.session_files()
    state.unlink()
    os.mkfifo(state)
    assert safe_key(hk.session) in state.name
    hk.hook(hk.prompt(2), timeout=60).assert_silent()
    assert hk.log_lines() == [], "the event reached its deadline"
    assert state.is_file() and hk.file_turn() == 1


@pytest.mark.parametrize("suffix", [".json", ".json.lock", ".answer.lock"])
def test_a_folder_in_place_of_a_state_file_is_logged_once_a_session(hk, suffix):
    """A folder where the session's state file (or its lock, or its answer
    lock) goes was one hook.log line at every event of the session: the
    state never came back while it stood there.  It is said once per
    session; the answers are as before (a prompt counts no turn, a
    compaction still brings the rules back), and no hook crashes."""
    from engine.base.digest import safe_key

    hk.rule("a.md", "# A\nMarker RULEMARK.\n")
    folder = hk.state / "sessions" / f"{safe_key(hk.session)}{suffix}"
    folder.mkdir(parents=True)
    (folder / "inside").write_text("x")  # not empty: a rename cannot replace it
    for i in range(4):
        hk.hook(hk.prompt(i)).assert_silent()
    hk.hook(hk.event("PostToolUse")).assert_ok()
    back = hk.hook(hk.event("SessionStart", source="compact")).assert_ok()
    assert "RULEMARK" in (back.context or ""), str(back)
    lines = hk.log_lines()
    assert len(lines) == 1 and f"a folder stands at {folder}" in lines[0], "\n".join(lines)
    assert (folder / "inside").read_text() == "x"  # the folder is the user's to remove
    hk.hook(hk.prompt(1, session="another-session")).assert_silent()
    assert len(hk.log_lines()) == 1, "another session's state is not blocked"


def test_fifos_in_place_of_the_log_the_records_and_the_prune_mark_are_not_waited_on(hk):
    """The hook log, a session's records and the expiry's mark were opened
    for appending with a plain open: a FIFO at one of them held every hook
    that logged, answered or started a session until its deadline."""
    import os
    import time

    from engine.base.digest import safe_key

    (hk.state / "records").mkdir(parents=True)
    for fifo in (hk.state / "hook.log", hk.state / "sessions.pruned",
                 hk.state / "records" / f"{safe_key(hk.session)}.ndjson"):
        os.mkfifo(fifo)
    started = time.monotonic()
    start = hk.hook(hk.event("SessionStart", source="startup"), timeout=60).assert_ok()
    assert "Effort policy" in (start.context or ""), str(start)
    hk.hook(b"", timeout=60).assert_silent()  # logs "empty stdin"
    assert time.monotonic() - started < 8, "a hook waited for its deadline"


def _idle_session(hk, name):
    """The files an agent killed long ago left: its state, idle since 1970."""
    import os

    path = hk.state / "sessions" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    os.utime(path, (1, 1))
    return path


def test_a_sessions_start_removes_idle_sessions_and_lists_the_folder_at_most_hourly(hk):
    import os

    first = _idle_session(hk, "killed-1")
    hk.hook(hk.event("SessionStart", source="startup", session_id="s1")).assert_ok()
    assert not first.exists(), "an idle session's file goes at a start"
    second = _idle_session(hk, "killed-2")
    hk.hook(hk.event("SessionStart", source="compact", session_id="s1")).assert_ok()
    assert second.exists(), "pruned less than prune_every_minutes (60) ago: the folder is not listed again"
    marker = hk.state / "sessions.pruned"
    assert marker.is_file() and not (hk.state / "sessions" / "sessions.pruned").exists()
    os.utime(marker, (1, 1))  # the last prune an hour and more ago
    hk.hook(hk.event("SessionStart", source="startup", session_id="s2")).assert_ok()
    assert not second.exists()


def test_a_profile_may_prune_at_every_start(hk):
    prof = shared_profile(profile_text(state={"prune_every_minutes": 0}))
    hk.hook(hk.event("SessionStart", source="startup", session_id="s1"), profile=prof).assert_ok()
    idle = _idle_session(hk, "killed")
    hk.hook(hk.event("SessionStart", source="startup", session_id="s2"), profile=prof).assert_ok()
    assert not idle.exists()
