"""Random events fed to the hook in process (engine.hooks.dispatch.main with
an in-memory stdin): whatever the JSON shape and field types, the hook
returns 0 within a time limit per case and prints nothing or one JSON object
whose injection stays under the cap."""

import io
import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

EVENTS = ["UserPromptSubmit", "SessionStart", "SessionEnd", "PreToolUse", "PostToolUse", "Stop", "PreCompact",
          "Notification", "NoSuch\nEvent", ""]
FIELDS = ["session_id", "transcript_path", "cwd", "hook_event_name", "prompt", "source", "tool_name", "tool_input",
          "tool_response", "trigger", "stop_hook_active"]
PER_CASE_SECONDS = 5

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.text(max_size=30), st.sampled_from(["compact", "startup", "/dev/zero", "/", ".", "\ud800"]))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                      max_leaves=12)


@st.composite
def events(draw, project):
    ev = draw(st.dictionaries(st.sampled_from(FIELDS), values, max_size=8))
    if draw(st.booleans()):
        ev["hook_event_name"] = draw(st.sampled_from(EVENTS))
    if draw(st.booleans()):
        ev["cwd"] = project
    if draw(st.booleans()):
        ev["session_id"] = draw(st.sampled_from(["s1", "s2", "x\ud800"]))
    return ev


def _stdin(draw_json, raw):
    return raw if raw is not None else json.dumps(draw_json)


@pytest.fixture
def world(hk, monkeypatch):
    """The hook run in this process, in hk's isolated world, with rule files
    of each kind an agent reads."""
    for k, v in hk.env().items():
        if k in ("HOME", "ENGINE_STATE_DIR", "ENGINE_CACHE_DIR"):
            monkeypatch.setenv(k, v)
    monkeypatch.delenv("ENGINE_PROFILE", raising=False)
    monkeypatch.delenv("ENGINE_REDIS_URL", raising=False)
    monkeypatch.chdir(hk.project)
    hk.rule("a.md", "# A\nMarker ALPHA: run the tests in order to be safe.\n")
    hk.claude_md("Marker CLAUDEMD.\n")
    (hk.project / "AGENTS.md").write_text("Marker AGENTSMD.\n", encoding="utf-8")
    return hk


def _feed(monkeypatch, stdin, agent="claude-code", **kw):
    """One event of `agent` through the hook in process, its deadline counted
    from now (a hook process's starts with the process: in a worker started
    long ago every event would end at its deadline, handled by nothing):
    the answer it printed, checked to be nothing, one JSON object on one
    line, or the plain text of compaction instructions where the agent
    takes them so; the object, or None."""
    from engine.agents import table
    from engine.hooks import deadline, dispatch

    def expired():
        raise deadline.Expired()

    monkeypatch.setattr(deadline, "STARTED", time.monotonic())
    out = io.StringIO()
    rc = dispatch.main(None, stdin=io.StringIO(stdin), stdout=out, exit=expired, agent=agent, **kw)
    took = time.monotonic() - deadline.STARTED
    assert rc == 0
    assert took < PER_CASE_SECONDS, f"{took:.1f} s for {stdin[:2000]!r}"
    text = out.getvalue()
    if not text or (not text.startswith("{") and (table.get(agent).answer("compaction_instructions") or {}).get("plain")):
        return None
    answer = json.loads(text)
    assert isinstance(answer, dict) and text.endswith("\n") and text.count("\n") == 1, text
    return answer


def _log_is_clean(hk):
    """No case crashed the hook or one of its handlers, or ran out its deadline."""
    for line in hk.log_lines():
        assert "internal error" not in line and "deadline of" not in line and " failed: " not in line, line


def test_random_events_never_break_the_hook(world, monkeypatch):
    hk = world

    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(ev=events(str(hk.project)),
           raw=st.one_of(st.none(), st.none(), st.text(max_size=40), st.sampled_from(["[" * 5000, "{}", "null"])))
    def run(ev, raw):
        answer = _feed(monkeypatch, _stdin(ev, raw))
        if answer:
            assert len(answer.get("hookSpecificOutput", {}).get("additionalContext", "")) <= 9500

    run()
    _log_is_clean(hk)


@st.composite
def agent_events(draw, agent, project):
    """A random payload in `agent`'s own vocabulary (its YAML's event names,
    payload fields and tool names), as (payload, event name for --event)."""
    data = agent.data
    fields = sorted({v if isinstance(v, str) else v["path"] for v in data["payload"].values()})
    ev = draw(st.dictionaries(st.sampled_from(fields), values, max_size=8))
    name = draw(st.sampled_from([*data["events"], "NoSuch\nEvent", ""]))
    key = data.get("event_key")
    if key and draw(st.booleans()):
        ev[key] = name
    cwd, tool = data["payload"]["cwd"], data["payload"]["tool"]
    if draw(st.booleans()):
        ev[cwd] = project
    if draw(st.integers(0, 3)):
        ev[tool] = draw(st.sampled_from(agent.tool_names("shell", "read", "write", "search") or ["x"]))
    for spec in data["payload"].values():  # a field the agent sends as JSON text: JSON, other text, or no text
        if isinstance(spec, dict) and spec.get("json"):
            ev[spec["path"]] = draw(st.one_of(values.map(json.dumps), st.text(max_size=20), values))
    return ev, (None if key else name)


@pytest.mark.parametrize("agent_name", sorted(p.stem for p in (REPO / "pipelines" / "agents").glob("*.yaml")))
def test_random_events_of_every_agent_never_break_the_hook(world, monkeypatch, agent_name):
    """The same for each agent's own payloads: its event names (or the
    hook command's --event, for an agent whose payload names none), its
    field names, its tools, its JSON-in-a-string fields."""
    from engine.agents import table

    hk = world
    agent = table.get(agent_name)

    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(case=agent_events(agent, str(hk.project)))
    def run(case):
        ev, name = case
        _feed(monkeypatch, json.dumps(ev), agent=agent_name, event_name=name)

    run()
    _log_is_clean(hk)


class _Reads(io.StringIO):
    """An in-memory stdin that notes how much each read asks for."""

    def __init__(self, text):
        super().__init__(text)
        self.asked = []

    def read(self, n=-1):
        self.asked.append(n)
        return super().read(n)


def test_an_event_over_max_event_bytes_is_read_past_never_held_and_goes_unanswered(world, monkeypatch):
    """A tool output of hundreds of MB in the payload: the hook read stdin
    whole, then held 15-20 copies of it (2.9 GB for 200 MB, Codex CLI's
    PostToolUse) until its watchdog killed it.  Now at most
    hooks.max_event_bytes is held; the rest is read and dropped in blocks
    (the agent's write completes), and the event is logged, unanswered."""
    from engine.core import settings as engine_settings
    from engine.hooks import dispatch

    hk = world
    cap = 65536
    bounds = dict(engine_settings.hook_bounds(), max_event_bytes=cap)
    monkeypatch.setattr(engine_settings, "hook_bounds", lambda: bounds)
    event = {"hook_event_name": "PostToolUse", "session_id": "big", "transcript_path": str(hk.transcript),
             "cwd": str(hk.project), "tool_name": "Bash", "tool_input": {"command": "make"}, "tool_use_id": "c1",
             "tool_response": "".join(f"line {i:06d} of the build log\n" for i in range(20000))}
    stdin = _Reads(json.dumps(event))
    answer = _feed_stdin(monkeypatch, stdin, agent="codex")
    assert answer == ""
    assert all(0 <= n <= max(cap + 1, dispatch.DRAIN_BLOCK) for n in stdin.asked), stdin.asked
    assert stdin.read() == ""  # read to its end
    assert any(f"stdin holds more than {cap} bytes (hooks.max_event_bytes)" in line for line in hk.log_lines())
    small = dict(event, tool_response=event["tool_response"][:20000])
    assert _feed_stdin(monkeypatch, _Reads(json.dumps(small)), agent="codex")  # under the cap: answered


def _feed_stdin(monkeypatch, stdin, agent):
    """What the hook printed for `stdin` (a file object), run in process."""
    from engine.hooks import deadline, dispatch

    def expired():
        raise deadline.Expired()

    monkeypatch.setattr(deadline, "STARTED", time.monotonic())
    out = io.StringIO()
    assert dispatch.main(None, stdin=stdin, stdout=out, exit=expired, agent=agent) == 0
    return out.getvalue()


class _Trickle:
    """A stdin of `total` bytes that takes 2 ms for each 64 KB it gives."""

    def __init__(self, total):
        self.total, self.served = total, 0

    def read(self, n=-1):
        n = self.total - self.served if n < 0 else min(n, self.total - self.served)
        time.sleep(0.002 * (n // 65536 + 1))
        self.served += n
        return "x" * n


def test_an_event_over_max_event_bytes_stops_being_read_at_the_deadline(world, monkeypatch):
    """Past hooks.max_event_bytes the rest of stdin is read and dropped;
    when the deadline passes meanwhile the hook leaves.  Before, the
    deadline's count of the prompt read stdin again from where it was,
    to its end: an endless stdin (/dev/zero) held the hook until its
    watchdog killed it (exit 1, nothing logged)."""
    from engine.core import settings as engine_settings

    hk = world
    bounds = dict(engine_settings.hook_bounds(), max_event_bytes=65536, deadline_ms=150)
    monkeypatch.setattr(engine_settings, "hook_bounds", lambda: bounds)
    stdin = _Trickle(20 << 20)  # 640 ms of reading at the least
    assert _feed_stdin(monkeypatch, stdin, agent="codex") == ""
    assert stdin.served < stdin.total, "stdin was read to its end after the deadline"
    assert any("deadline of 150 ms reached" in line for line in hk.log_lines()), hk.log_lines()
