"""Issue 19, defaults a user would choose: every injection of the built-in
profile says where it comes from (the profile, and the handler as `engine
profile show` lists it), within the event's cap; the effort guidance states
the policy and names no model unless the profile asks (model_advice)."""

import re

import yaml

from conftest import REPO
from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

SOURCE = re.compile(r"^\[from rules-engine profile (?P<profile>[\w-]+), handler (?P<event>\w+)/(?P<handler>\w+): "
                    r"see `engine profile show`\]$")


def _handlers(profile="default"):
    data = yaml.safe_load((REPO / "pipelines" / f"{profile}.yaml").read_text())
    return {(event, h["name"]) for event, hs in data["hooks"]["events"].items() for h in hs}


def test_the_effort_guidance_says_where_it_comes_from_and_names_no_model(hk):
    run = hk.hook(hk.event("SessionStart", source="startup"))
    run.assert_ok()
    first, policy = run.context.split("\n", 1)
    m = SOURCE.match(first)
    assert m, run.context
    assert (m["profile"], m["event"], m["handler"]) == ("default", "session_start", "effort_guidance")
    assert (m["event"], m["handler"]) in _handlers(), "the handler named is one `engine profile show` lists"
    assert policy.startswith("[Effort policy: medium]")
    for model in ("Sonnet", "Opus", "Haiku", "sonnet", "opus"):
        assert model not in run.context, run.context


def test_a_profile_may_ask_for_model_advice(hk):
    prof = shared_profile(profile_text({"SessionStart": [{"name": "effort_guidance", "model_advice": {
        "medium": "Prefer Sonnet for implementation and Opus for planning ({{ effort }})."}}]}, name="mine"))
    run = hk.hook(hk.event("SessionStart", source="startup"), profile=prof)
    run.assert_ok()
    first, policy = run.context.split("\n", 1)
    assert SOURCE.match(first)["profile"] == "mine"
    assert policy.startswith("[Effort policy: medium]")
    assert policy.endswith("Prefer Sonnet for implementation and Opus for planning (medium).")


def test_a_rules_refresh_says_where_it_comes_from(hk):
    hk.rule("a.md", "Marker ALPHA: lint before you commit.\n")
    prof = shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 1}]}, name="every"))
    run = hk.hook(hk.prompt(1), profile=prof)
    run.assert_ok()
    first, rest = run.context.split("\n", 1)
    m = SOURCE.match(first)
    assert m and (m["profile"], m["event"], m["handler"]) == ("every", "prompt", "rules"), run.context
    assert rest.startswith("[Rules refresh, turn 1") and "ALPHA" in rest


def test_every_part_of_one_event_is_labelled_and_the_labels_count_in_the_cap():
    from engine.core.log import Log
    from engine.hooks.dispatch import merge
    from engine.hooks.handlers.part import Part
    from engine.hooks.source import labeller

    hooks = {"source_line": "[from X, handler {event}/{handler}]",
             "events": {"UserPromptSubmit": [{"name": "rules"}], "PostToolUse": [{"name": "monitor"}]}}
    label = labeller(hooks, "SessionStart")
    answer = merge([Part("rules", "R" * 50), Part("monitor", "M" * 10, user_message="hi")], 200, Log(), label)
    assert answer.texts == ["[from X, handler UserPromptSubmit/rules]\n" + "R" * 50,
                            "[from X, handler PostToolUse/monitor]\n" + "M" * 10]
    assert answer.user_messages == ["[from X, handler PostToolUse/monitor]\nhi"]
    # the second part and its label do not fit next to the first: it waits, and the total stays under the cap
    answer = merge([Part("rules", "R" * 120), Part("monitor", "M" * 10)], 200, Log(), label)
    assert len(answer.texts) == 1 and answer.marks == {"pending:monitor": 1}
    assert len("\n\n".join(answer.texts)) <= 200
    # a part alone too long is cut, label included
    answer = merge([Part("rules", "R" * 500)], 200, Log(), label)
    assert len(answer.texts[0]) == 200 and answer.texts[0].startswith("[from X, handler UserPromptSubmit/rules]\n")


def test_a_profile_may_turn_the_source_line_off(hk):
    prof = shared_profile(profile_text(name="quiet", source_line=""))
    run = hk.hook(hk.event("SessionStart", source="startup"), profile=prof)
    assert run.context.startswith("[Effort policy: medium]"), run.context
