"""How the dispatcher merges handler parts into the one answer the agent
reads: context under the cap, a message for the user, one tool decision,
plain stdout for PreCompact."""

from engine.hooks.dispatch import merge
from engine.hooks.handlers import Part


def _merge(parts, cap=100):
    lines = []
    return merge(parts, cap, lines.append), lines


def test_context_and_user_message_go_to_their_own_fields():
    answer, _ = _merge([Part("a", "rule text", {"x": 1}, user_message="70% full")])
    out = answer.output("Stop")
    assert out == {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "rule text"},
                   "systemMessage": "70% full"}
    assert answer.marks == {"x": 1}


def test_a_part_that_does_not_fit_waits_and_the_user_message_still_goes():
    answer, log = _merge([Part("a", "x" * 80), Part("b", "y" * 30, user_message="hello")])
    out = answer.output("UserPromptSubmit")
    assert out["hookSpecificOutput"]["additionalContext"] == "x" * 80
    assert out["systemMessage"] == "hello"
    assert answer.marks == {"pending:b": 1} and "deferred" in log[0]


def test_first_tool_decision_wins_and_only_on_pre_tool_use():
    deny = {"decision": "deny", "reason": "cached"}
    answer, log = _merge([Part("a", tool_decision=deny), Part("b", tool_decision={"decision": "allow"})])
    assert answer.output("PreToolUse") == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "cached"}}
    assert "already made" in log[0]
    assert answer.output("PostToolUse") is None


def test_pre_compact_prints_plain_text():
    answer, _ = _merge([Part("a", stdout="Keep the decisions."), Part("b", stdout="Keep the errors.")])
    assert answer.output("PreCompact") == "Keep the decisions.\n\nKeep the errors."
    assert answer.output("Stop") is None


def test_nothing_to_say_prints_nothing():
    answer, _ = _merge([Part("a", None, {"turn_at:a": 3})])
    assert answer.output("UserPromptSubmit") is None
