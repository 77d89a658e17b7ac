"""Hostile and pathological inputs to `engine hook` (issue 10): no input keeps
a hook past its deadline, breaks its log, or pushes an event past the
injection cap; the state folder is private."""

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest
import yaml

from conftest import REPO
from hook_fixtures import free_port, profile_text, shared_profile, transcript_records
from test_hooks_conftest_fixtures import hk, redis_server  # noqa: F401 - fixtures

CAP = 9500


def _timed(hk, event, profile=None, env=None, timeout=60):
    start = time.monotonic()
    run = hk.hook(event, profile=profile, env=env, timeout=timeout)
    return run, time.monotonic() - start


# -- fault 4: one deadline, nothing blocks ---------------------------------

def test_a_fifo_transcript_does_not_block_the_hook(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    fifo = hk.root / "transcript.fifo"
    os.mkfifo(fifo)
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 0, "every_tokens": 1000}]}))
    run, took = _timed(hk, hk.prompt(1, transcript_path=str(fifo)), profile=prof, timeout=30)
    run.assert_silent()
    # a hook blocked on the FIFO would end at its deadline (8 s), as silent: the log tells them apart
    assert not [l for l in hk.log_lines() if "deadline" in l or "internal error" in l], hk.log_lines()
    assert took < 6, f"the hook took {took:.1f} s on a FIFO transcript"
    assert hk.file_turn() == 1, hk.log_lines()


def _template_profile(template, **top):
    return shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1, "template": template}]},
                                       **top))


def test_nested_range_loops_in_a_template_are_refused_fast(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = _template_profile("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}x")
    run, took = _timed(hk, hk.prompt(1), profile=prof, timeout=40)
    run.assert_silent()
    assert took < 10, f"{took:.1f} s"
    assert any("range" in line for line in hk.log_lines()), hk.log_lines()


def test_a_long_template_loop_ends_at_the_deadline_with_nothing_printed(hk):
    """Within every limit of hooks.templates, but 10^10 steps: the deadline ends it."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    prof = _template_profile("{% for i in range(100000) %}{% for c in 'y' * 100000 %}{% endfor %}{% endfor %}x",
                             deadline_ms=1500, kill_after_ms=3000)
    run, took = _timed(hk, hk.prompt(1), profile=prof, timeout=40)
    run.assert_silent()
    assert took < 15, f"{took:.1f} s with a deadline of 1.5 s (10^10 steps would take hours)"
    lines = hk.log_lines()
    assert len(lines) == 1 and "deadline of 1500 ms reached" in lines[0], lines


def test_the_deadline_must_be_below_the_install_timeout(hk):
    prof = hk.project / "p.yaml"
    prof.write_text(profile_text(name="p", deadline_ms=12000, kill_after_ms=13000))
    run = hk.engine("validate", str(prof))
    assert run.returncode == 1 and "Traceback" not in run.stderr, str(run)
    assert "deadline_ms (12000)" in run.stderr and "install_timeout_seconds" in run.stderr, run.stderr
    # said at the deadline the profile sets
    line = next(i for i, text in enumerate(prof.read_text().splitlines(), 1) if "deadline_ms" in text)
    assert any(l.startswith(f"{prof}:{line}:") and "deadline_ms (12000)" in l for l in run.stderr.splitlines()), run.stderr


class _Trickle:
    """A 'Redis' that answers every command with a long bulk string, one
    byte every 50 ms."""

    def __init__(self):
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(16)
        self.port = self.srv.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        self.srv.settimeout(0.2)
        while not self.stop.is_set():
            try:
                conn, _ = self.srv.accept()
            except OSError:
                continue
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn):
        try:
            conn.recv(65536)
            conn.sendall(b"$100000\r\n")
            while not self.stop.is_set():
                conn.sendall(b"x")
                time.sleep(0.05)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.srv.close()


def test_a_redis_that_trickles_its_answer_is_treated_as_down(hk):
    server = _Trickle()
    try:
        hk.extra_env["ENGINE_REDIS_URL"] = f"redis://127.0.0.1:{server.port}/0"
        run, took = _timed(hk, hk.prompt(1), timeout=30)
    finally:
        server.close()
    run.assert_silent()
    # Without the call timeout the answer trickles for 5,000 s: the deadline
    # would end the hook before any state is written.
    assert hk.file_turn() == 1, f"the turn went to file state instead ({took:.1f} s)"


# -- fault 6: the password never reaches the log; private state -------------

def test_a_redis_password_holding_a_slash_is_not_logged(hk):
    hk.extra_env["ENGINE_REDIS_URL"] = f"redis://:pa/ss-SECRET1@127.0.0.1:{free_port()}/0"
    hk.hook(hk.prompt(1)).assert_silent()
    log = hk.log_path.read_text()
    assert log.strip(), "the unreachable Redis is logged"
    assert "SECRET1" not in log and "pa/ss" not in log, log


def test_the_state_folder_is_private(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    old = os.umask(0o022)
    try:
        hk.hook(hk.prompt(1)).assert_ok()
        hk.hook(b"not json").assert_silent()
    finally:
        os.umask(old)
    assert stat.S_IMODE(hk.state.stat().st_mode) == 0o700
    assert stat.S_IMODE((hk.state / "sessions").stat().st_mode) == 0o700
    files = [hk.log_path, *(hk.state / "sessions").iterdir()]
    assert len(files) >= 3, files  # the log, the session's state and its lock
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f"{f} is {oct(f.stat().st_mode)}"


def test_a_world_readable_log_from_an_older_version_is_tightened(hk):
    hk.state.mkdir(parents=True)
    hk.log_path.write_text("old line\n")
    hk.log_path.chmod(0o644)
    hk.hook(b"not json").assert_silent()
    assert stat.S_IMODE(hk.log_path.stat().st_mode) == 0o600


# -- fault 7: the cap holds at the merge point ---------------------------------

def _big(marker, lines):
    return f"# {marker}\n" + "".join(f"- {marker} item {i:04d}: keep every release note short and clear\n" for i in range(lines))


def test_a_reinject_of_two_refreshes_stays_under_the_cap(hk):
    """The composition of the issue with token budgets (which validate cannot
    check in characters): rules and CLAUDE.md together would be ~12,600."""
    for i in range(3):
        hk.rule(f"r{i}.md", _big(f"RULE{i}X", 40))
    hk.claude_md(_big("CLAUDEMDX", 90))
    prof = shared_profile(profile_text({
        "UserPromptSubmit": [{"name": "rules", "budget": {"tokens": 2500}},
                             {"name": "instructions", "budget": {"tokens": 2500}}],
        "SessionStart": [{"name": "after_compaction", "handlers": ["rules", "instructions"]}]}))
    run = hk.hook(hk.event("SessionStart", source="compact"), profile=prof)
    ctx = run.assert_ok().context or ""
    assert "RULE0X" in ctx
    assert len(ctx) <= CAP, f"one event carried {len(ctx)} characters"
    if "CLAUDEMDX" not in ctx:  # deferred: the next prompt brings it
        nxt = hk.hook(hk.prompt(1), profile=prof).assert_ok().context or ""
        assert "CLAUDEMDX" in nxt and len(nxt) <= CAP


def test_validate_refuses_a_reinject_that_cannot_fit_in_one_event(hk):
    prof = hk.project / "p.yaml"
    # a second target that names what waits in a digest, not in parts: it would wait with no round
    prof.write_text(profile_text({"SessionStart": [{"name": "after_compaction", "handlers": ["rules", "instructions"]}],
                                  "UserPromptSubmit": [{"name": "instructions", "overflow": "digest"}]}, name="p"))
    run = hk.engine("validate", str(prof))
    assert run.returncode == 1, str(run)
    assert "max_injection_chars" in run.stderr and "after_compaction" in run.stderr or "reinject" in run.stderr, str(run)


# -- fault 9: the log, many rule files, odd transcripts, monotonic state -------

def _unknown_event(hk, **fields):
    return hk.event("NoSuchEvent", **fields)


def test_a_lone_surrogate_in_the_session_id_keeps_the_log_line(hk):
    raw = json.dumps(_unknown_event(hk)).replace(hk.session, "ab\\ud800cd")
    hk.hook(raw.encode()).assert_silent()
    lines = hk.log_lines()
    assert len(lines) == 1 and "NoSuchEvent" in lines[0] and "\\ud800" in lines[0], lines


def test_a_lone_surrogate_session_still_counts_and_injects(hk):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    raw = json.dumps(hk.event("SessionStart", source="compact")).replace(hk.session, "s\\udc80")
    run = hk.hook(raw.encode())
    assert "ALPHA" in (run.assert_ok().context or "")


def test_an_event_name_with_a_newline_cannot_forge_log_lines(hk):
    forged = "X\n2026-01-01T00:00:00 UserPromptSubmit session=admin all good"
    hk.hook(hk.event(forged)).assert_silent()
    lines = hk.log_lines()
    assert len(lines) == 1, lines
    assert not any(line.startswith("2026-01-01") for line in lines)


def test_ten_thousand_rule_files_still_inject_rules(hk):
    hk.project_rules.mkdir(parents=True)
    for i in range(10000):
        (hk.project_rules / f"r{i:05d}.md").write_text(f"# R{i}\nMarker RULE{i:05d}X: run the tests.\n")
    run, took = _timed(hk, hk.event("SessionStart", source="compact"), timeout=120)
    ctx = run.assert_ok().context or ""
    assert "RULE00000X" in ctx, f"no rule injected ({took:.1f} s)\n{ctx[:500]}"
    assert len(ctx) <= CAP
    lines = ctx.split("\n")
    assert lines[-1].startswith("[rules-engine delivery "), lines[-1]  # the delivery's id, last
    tail = lines[-2]
    assert ("omitted" in tail or "follow at the next event" in tail) and "more" in tail, tail
    assert len(tail) < 1000, "the omitted line names a few files, then counts the rest"


@pytest.mark.parametrize("record", [
    {"type": "assistant", "message": "str", "usage": {"input_tokens": 1}},
    {"type": "assistant", "message": {"usage": "lots"}},
    {"type": "assistant", "message": {"usage": {"input_tokens": 1e300}}},
    "deep",
], ids=["message-string", "usage-string", "huge-number", "deep-array"])
def test_an_odd_transcript_record_does_not_abort_the_event(hk, record):
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    hk.write_transcript(transcript_records(5000))
    with open(hk.transcript, "a") as fh:
        if record == "deep":
            fh.write('{"type": "assistant", "usage": ' + "[" * 100000 + "]" * 100000 + "}\n")
        else:
            fh.write(json.dumps(record) + "\n")
    prof = shared_profile(profile_text({"UserPromptSubmit": [
        {"name": "rules", "every_turns": 1},
        {"name": "instructions", "every_turns": 0, "every_tokens": 1000}]}))
    run = hk.hook(hk.prompt(1), profile=prof)
    assert "ALPHA" in (run.assert_ok().context or ""), f"{run}\n{hk.log_lines()}"


def test_turn_at_never_goes_backwards(hk):
    from engine.hooks.state import FileState

    st = FileState("s-mono", 3600, root=str(hk.state))
    st.update({"turn_at:rules": 41, "pending:rules": 0})
    st.update({"turn_at:rules": 40, "pending:rules": 1})  # a slower parallel hook that saw turn 40
    got = st.get()
    assert got["turn_at:rules"] == 41 and got["pending:rules"] == 1, got


def test_turn_at_never_goes_backwards_in_redis(redis_server):
    from engine.hooks.resp import Redis
    from engine.hooks.state import RedisState

    st = RedisState(Redis(redis_server.url, 2.0), "s-mono", 3600)
    st.update({"turn_at:rules": 41, "tokens_at:rules": 9000})
    st.update({"turn_at:rules": 40, "tokens_at:rules": 100})  # tokens_at may fall (a compaction)
    got = st.get()
    assert got["turn_at:rules"] == 41 and got["tokens_at:rules"] == 100, got
    assert 0 < redis_server.client().ttl("rules-engine:session:s-mono") <= 3600


def test_hook_log_rotates_past_its_size(hk):
    prof = shared_profile(profile_text(name="small-log", log={"max_bytes": 2048}))
    for _ in range(40):
        hk.hook(b"not json", profile=prof).assert_silent()
    assert hk.log_path.stat().st_size <= 2048 + 200
    rotated = hk.state / "hook.log.1"
    assert rotated.exists() and rotated.stat().st_size <= 2048 + 200
    assert stat.S_IMODE(rotated.stat().st_mode) == 0o600


@pytest.mark.parametrize("template,words", [
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", ("template", "range")),
    ("{{ 'x' * 1000000000 }}", ("template", "repeats")),
], ids=["nested-range", "huge-repeat"])
def test_validate_refuses_a_template_the_hook_could_not_render(hk, template, words):
    prof = hk.project / "p.yaml"
    prof.write_text(profile_text({"UserPromptSubmit": [{"name": "rules", "template": template}]}, name="p"))
    run = hk.engine("validate", str(prof), timeout=60)  # rendering it would never end
    assert run.returncode == 1 and "Traceback" not in run.stderr, str(run)
    assert all(w in run.stderr for w in words), run.stderr


def test_the_huge_template_of_the_issue_is_refused_in_process():
    from engine.hooks.banner import TemplateLimit, render

    limits = {"max_output_chars": 200000, "max_range_items": 200000}
    for template in ("{{ 'x'*1000000000 }}", "{{ 'x'|center(1000000000) }}", "{{ 10 ** 1000000000 }}",
                     "{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"):
        with pytest.raises(TemplateLimit):
            render(template, limits)
    assert render("[{{ omitted|join(', ') }}]", limits, omitted=["a.md", "b.md"]) == "[a.md, b.md]"


def test_a_large_number_is_a_value_not_a_size():
    """An int is a size where a call builds by it (`'x'.ljust(n)`, a
    format's width), not where it is only written or filtered: a context of
    a million tokens formats with `{:,}` (before: "asks for a value too
    large" past about 160,000)."""
    from engine.hooks.banner import TemplateLimit, render

    limits = {"max_output_chars": 200000, "max_range_items": 200000}
    n = 1_000_000_000
    assert render('{{ "{:,}".format(n) }} {{ n|abs }} {{ n|int }} {{ n|string }}', limits, n=n) == \
        "1,000,000,000 1000000000 1000000000 1000000000"
    for template in ('{{ "x".ljust(n) }}', '{{ "{:>300000}".format(1) }}', '{{ "{0:{1}}".format(1, n) }}',
                     '{{ "ab"|center(n) }}', '{{ "{}{}".format(s, s) }}'):
        with pytest.raises(TemplateLimit):
            render(template, limits, n=n, s="z" * 150000)



# A child renders one template under an address-space limit a little above its
# start; what it allocates while rendering is measured (tracemalloc) and must
# stay within a few times max_output_chars: the value is refused before it is built.
_BOUNDED_RENDER = """
import json, resource, sys, tracemalloc
from engine.hooks.banner import TemplateLimit, _compiled, render
template, limits = sys.argv[1], json.loads(sys.argv[2])
_compiled(template, (limits["max_output_chars"], limits["max_range_items"]))
with open("/proc/self/statm") as f:
    vm = int(f.read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (vm + 64 * 2 ** 20, resource.getrlimit(resource.RLIMIT_AS)[1]))
tracemalloc.start()
try:
    render(template, limits)
    print(json.dumps(["rendered", tracemalloc.get_traced_memory()[1]]))
except TemplateLimit as e:
    print(json.dumps([str(e), tracemalloc.get_traced_memory()[1]]))
except MemoryError:
    print(json.dumps(["MemoryError", None]))
"""

_BIG = "{% set s = 'x' * 199999 %}"  # one value just under max_output_chars


@pytest.mark.parametrize("template", [
    '{{ "{:>2000000000}".format(1) }}',  # the red-team's: 2 GB before the refusal
    '{{ "{:{}}".format(1, "1000000000") }}',  # a width from a nested field
    '{{ "{0:>{1}}".format(1, "1000000000") }}',
    '{{ "{a:>1000000000}".format_map({"a": 1}) }}',
    '{{ "{:,.1000000000f}".format(1.0) }}',  # a precision
    '{{ "{:>\u0663000000000}".format(1) }}',  # str.format reads any decimal digit
    '{{ ("{:>100000}" * 1000).format(*range(1000)) }}',  # many fields, each within the limit
    _BIG + '{{ ("{0}" * 1000).format(s) }}',
    '{{ "%0300000000d" % 1 }}',
    '{{ "%.999999999f" % 1.0 }}',
    '{{ "%(a(b))0300000000d" % {"a(b)": 1} }}',  # a key holding parentheses
    "{% set s = 'x' * 100000 %}" + '{{ ("%(a)s" * 1000) % {"a": s} }}',  # one value written many times
    '{{ "%0300000000d"|format(1) }}',  # Jinja2's format filter runs `%`
    '{{ "%.299999999f"|format(1.0) }}',
    _BIG + "{{ [" + ",".join(["s"] * 40) + "]|join }}",  # a literal list holding it many times
    _BIG + "{% set a = [s,s,s,s] %}{% set b = [a,a,a,a] %}{% set c = [b,b,b,b] %}{{ c }}",
    _BIG + "{% set a = [s,s,s,s] %}{% set b = [a,a,a,a] %}{% set c = [b,b,b,b] %}{{ c ~ '' }}",
    "{% set a = 2 ** 399999 %}" + "".join("{% set a = a * a %}" for _ in range(9)) + "{{ a > 1 }}",
    "{{ lipsum(5000)|length }}",
], ids=["format-width", "format-nested-width", "format-indexed-width", "format-map", "format-precision",
        "format-unicode-width", "format-many-fields", "format-repeated-field", "percent-width", "percent-precision",
        "percent-parenthesised-key", "percent-repeated-key", "format-filter-width", "format-filter-precision",
        "join-literal-list", "print-nested-lists", "concat-nested-lists", "int-products", "lipsum"])
def test_a_template_is_refused_before_it_builds_a_value_too_large(template):
    limits = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text())["hooks"]["templates"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    run = subprocess.run([sys.executable, "-c", _BOUNDED_RENDER, template, json.dumps(limits)],
                         capture_output=True, text=True, env=env, timeout=60)
    assert run.returncode == 0, run.stderr
    error, peak = json.loads(run.stdout)
    assert error.startswith("template ") and "hooks.templates limits it" in error, error
    assert peak < 8 * limits["max_output_chars"], f"{peak} bytes allocated before the refusal"


def test_formats_within_the_limits_render_as_before():
    from engine.hooks.banner import render

    limits = {"max_output_chars": 200000, "max_range_items": 200000}
    template = ('{{ "%(a)s-%(b)05d %%" % {"a": "x", "b": 3} }}|{{ "%*d|%.3s" % (4, 7, "abcdef") }}|'
                '{{ "{:>5}|{:.2f}|{a}|{:{}}".format(1, 2.0, 9, 3, a=[1, 2]) }}|{{ "{x}{x}".format_map({"x": 1}) }}|'
                '{{ "%s %d"|format("a", 3) }}|{{ {"a": 1} }}|{{ (1, 2) }}|{% for a, b in [(1, 2)] %}{{ a ~ b }}{% endfor %}|'
                '{{ range(3)|map("string")|join }}|{{ 3 * 4 }}|{{ [1] * 3 }}|{{ lipsum(1, False, 2, 3)|length > 0 }}')
    assert render(template, limits) == ("x-00003 %|   7|abc|    1|2.00|[1, 2]|  9|11|a 3|{'a': 1}|(1, 2)|12|012|12|"
                                        "[1, 1, 1]|True")

def test_a_c_call_past_the_deadline_is_ended_by_the_watchdog(hk):
    """sum() over a huge range runs in C: the SIGALRM handler cannot run, so
    kill_after_ms ends the process (status 1, nothing printed)."""
    code = ("from engine.hooks.deadline import Deadline\n"
            "Deadline(lambda m: None).arm(300, 1200)\n"
            "sum(range(10 ** 12))\nprint('not reached')\n")
    run = hk.python(code, timeout=60)  # the sum alone would take hours
    assert run.returncode == 1 and run.stdout == "", str(run)


@pytest.mark.parametrize("agent,event,deadline_ms", [("codex", "SessionEnd", 2000), ("copilot", "sessionEnd", 500)])
def test_an_event_the_agent_gives_less_time_ends_before_the_agents_own_timeout(hk, agent, event, deadline_ms):
    """Codex gives its SessionEnd hook 3 s, whatever hooks.json says, and
    Copilot its sessionEnd hooks 1.5 s together at an interactive
    session's end (measured; timeout_caps of codex.yaml and copilot.yaml):
    a hook that would run long ends at the engine's margin before that
    (agent_cap_margin_ms: 1 s), not at the profile's deadline, which the
    agent would cut first."""
    hk.rule("a.md", "# A\nMarker ALPHA.\n")
    # slow only at the event (source ""), not with the compile check's sample values (source "startup"),
    # which would otherwise take the compile box deadline_ms per template
    slow = ("{% if source != 'startup' %}{% for i in range(100000) %}{% for c in 'y' * 100000 %}{% endfor %}"
            "{% endfor %}{% endif %}x")
    prof = shared_profile(profile_text({"session_end": [{"name": "slow_end", "kind": "effort_guidance",
                                                         "templates": {"low": slow, "medium": slow, "high": ""}}]}))
    payload = {"hook_event_name": "SessionEnd", "session_id": hk.session, "cwd": str(hk.project),
               "transcript_path": str(hk.transcript), "reason": "other"} if agent == "codex" else \
        {"sessionId": hk.session, "timestamp": 1764272000000, "cwd": str(hk.project), "reason": "user_exit"}
    start = time.monotonic()
    run = hk.engine("hook", "--agent", agent, "--event", event, "--profile", prof, stdin=json.dumps(payload).encode(),
                    timeout=60)
    took = time.monotonic() - start
    assert run.returncode == 0 and run.stdout == "", str(run)
    assert [l for l in hk.log_lines() if f"deadline of {deadline_ms} ms reached" in l], (hk.log_lines(), took)
    # the deadline is counted from the process start (the log line); the wall time, which a loaded
    # machine stretches, only has to tell it from the profile's 8 s
    assert took < 6, f"{took:.1f} s: the profile's deadline, not the agent's"
