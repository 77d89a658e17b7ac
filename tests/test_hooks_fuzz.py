"""Random events fed to the hook in process (engine.hooks.dispatch.main with
an in-memory stdin): whatever the JSON shape and field types, the hook
returns 0 within a time limit per case and prints nothing or one JSON object
whose injection stays under the cap."""

import io
import json
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def test_random_events_never_break_the_hook(hk, monkeypatch):
    from engine.hooks import dispatch
    from engine.hooks.deadline import Expired

    for k, v in hk.env().items():
        if k in ("HOME", "ENGINE_STATE_DIR", "ENGINE_CACHE_DIR"):
            monkeypatch.setenv(k, v)
    monkeypatch.delenv("ENGINE_PROFILE", raising=False)
    monkeypatch.delenv("ENGINE_REDIS_URL", raising=False)
    monkeypatch.chdir(hk.project)
    hk.rule("a.md", "# A\nMarker ALPHA: run the tests in order to be safe.\n")
    hk.claude_md("Marker CLAUDEMD.\n")

    def expired():
        raise Expired()

    @settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(ev=events(str(hk.project)),
           raw=st.one_of(st.none(), st.none(), st.text(max_size=40), st.sampled_from(["[" * 5000, "{}", "null"])))
    def run(ev, raw):
        out = io.StringIO()
        start = time.monotonic()
        rc = dispatch.main(None, stdin=io.StringIO(_stdin(ev, raw)), stdout=out, exit=expired)
        took = time.monotonic() - start
        assert rc == 0
        assert took < PER_CASE_SECONDS, f"{took:.1f} s for {ev!r}"
        text = out.getvalue()
        if text:
            obj = json.loads(text)
            assert isinstance(obj, dict) and text.endswith("\n") and text.count("\n") == 1
            assert len(obj["hookSpecificOutput"]["additionalContext"]) <= 9500

    run()
    for line in hk.log_lines():
        assert "internal error" not in line, line
