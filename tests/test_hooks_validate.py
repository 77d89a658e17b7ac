"""`engine validate` on the hooks part of a profile: template syntax errors,
unknown template variables, a reinject naming a missing handler, a new
handler missing fields.  Each is `FILE:LINE:COL: message` and exit 1."""

import os
import time

import pytest

from hook_fixtures import parse_problems
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

HEAD = "kind: profile\nname: t\nextends: default\nhooks:\n  events:\n"


def _validate(hk, text, name="prof.yaml"):
    path = hk.root / name
    path.write_text(text)
    run = hk.engine("validate", path, cwd=hk.root)
    assert "Traceback" not in run.stderr, str(run)
    return path, run


def _problem_at(hk, run, path, needle_line, *words):
    assert run.returncode == 1, str(run)
    problems = parse_problems(run.stderr)
    assert problems, f"no FILE:LINE:COL: message line\n{run}"
    mine = [p for p in problems if os.path.exists(p[0]) and os.path.samefile(p[0], path)]
    assert mine, f"no problem reported in {path}\n{run}"
    hits = [p for p in mine if p[1] == needle_line and all(w.lower() in p[3].lower() for w in words)]
    assert hits, f"expected a problem at line {needle_line} mentioning {words}, got {mine}"
    assert hits[0][2] >= 1
    return hits[0]


def _line_of(text, needle):
    return text[: text.index(needle)].count("\n") + 1


def test_valid_hooks_profile_passes(hk):
    text = HEAD + "    UserPromptSubmit:\n      - name: rules\n        every_turns: 2\n"
    _, run = _validate(hk, text)
    assert run.returncode == 0, str(run)
    assert run.stderr.strip() == ""


def test_template_syntax_error_block_scalar(hk):
    text = (HEAD + "    UserPromptSubmit:\n      - name: rules\n        template: |-\n"
            "          [Rules, turn {{ turn }}]\n"
            "          {% for r in items %}{{ r.text }}{% endfor %}\n"
            "          broken {{ level }\n")
    path, run = _validate(hk, text)
    _problem_at(hk, run, path, _line_of(text, "broken {{"), "template", "syntax")


def test_template_syntax_error_inline(hk):
    text = HEAD + "    UserPromptSubmit:\n      - name: rules\n        template: \"[Rules {% for r in items %}\"\n"
    path, run = _validate(hk, text)
    _problem_at(hk, run, path, _line_of(text, "template:"), "template")


@pytest.mark.parametrize("use", ["{{ turn | nosuchfilter }}", "{% if turn is nosuchtest %}x{% endif %}"])
def test_template_unknown_filter_or_test(hk, use):
    """Old: the parse resolves no filter or test, so validate passed it and
    the compile then failed with a RuntimeError traceback."""
    text = HEAD + "    UserPromptSubmit:\n      - name: rules\n        template: |-\n          [Rules]\n          " + use + "\n"
    path, run = _validate(hk, text)
    _problem_at(hk, run, path, _line_of(text, use), "template", "nosuch")


def test_template_unknown_variable(hk):
    text = (HEAD + "    UserPromptSubmit:\n      - name: rules\n        template: |-\n"
            "          [Rules, turn {{ turn }}]\n"
            "          {{ bogus_var }}\n")
    path, run = _validate(hk, text)
    _, _, _, msg = _problem_at(hk, run, path, _line_of(text, "bogus_var"), "bogus_var")
    assert "turn" in msg, "the message lists the variables a template may use"


def test_omitted_template_unknown_variable(hk):
    text = HEAD + "    UserPromptSubmit:\n      - name: rules\n        omitted_template: \"[{{ items|length }} omitted]\"\n"
    path, run = _validate(hk, text)
    _problem_at(hk, run, path, _line_of(text, "omitted_template"), "items")


def test_reinject_names_a_missing_handler(hk):
    text = HEAD + "    SessionStart:\n      - name: after_compaction\n        handlers: [rules, no_such_handler]\n"
    path, run = _validate(hk, text)
    _problem_at(hk, run, path, _line_of(text, "no_such_handler"), "no_such_handler")


def test_reinject_names_a_handler_that_is_not_a_refresh(hk):
    text = HEAD + "    SessionStart:\n      - name: after_compaction\n        handlers: [forget_session]\n"
    path, run = _validate(hk, text)
    _problem_at(hk, run, path, _line_of(text, "forget_session"), "forget_session")


def test_incomplete_new_handler(hk):
    text = (HEAD + "    UserPromptSubmit:\n      - name: extra_rules\n        kind: rule_refresh\n"
            "        every_turns: 3\n        level: light\n        budget: {chars: 1000}\n")
    path, run = _validate(hk, text)
    line = _line_of(text, "- name: extra_rules")
    assert run.returncode == 1, str(run)
    problems = [p for p in parse_problems(run.stderr) if "extra_rules" in p[3]]
    assert problems, str(run)
    file, pline, col, msg = problems[0]
    assert os.path.samefile(file, path)
    assert line <= pline <= line + 1, problems[0]
    assert "sources" in msg


@pytest.mark.parametrize("source, word", [
    ("{{ items | nosuchfilter }}", "unknown filter 'nosuchfilter'"),
    ("{{ items is nosuchtest }}", "unknown test 'nosuchtest'"),
    ("{% if items is nosuchtest %}x{% endif %}", "unknown test 'nosuchtest'"),
], ids=["filter", "test", "test-under-if"])
@pytest.mark.parametrize("handler", [
    "    UserPromptSubmit:\n      - name: rules\n        template: \"{T}\"\n",
    "    SessionStart:\n      - name: slow_effort\n        kind: effort_guidance\n"
    "        templates: {low: \"{T}\", medium: \"\", high: \"\"}\n",
], ids=["refresh", "effort_guidance"])
def test_an_unknown_filter_or_test_is_said_at_the_template(hk, handler, source, word):
    """Old: the check only parsed a template, which resolves no filter and
    no test; the compile in the box then met 'No filter named ...' and
    validate, compress --profile and refresh preview --profile ended in a
    RuntimeError traceback."""
    text = HEAD + handler.replace("{T}", source)
    path, run = _validate(hk, text)
    _problem_at(hk, run, path, _line_of(text, source), word)
    run = hk.engine("compress", "-", "--profile", path, cwd=hk.root, stdin=b"Run the tests.\n")
    assert "Traceback" not in run.stderr, str(run)
    _problem_at(hk, run, path, _line_of(text, source), word)


@pytest.mark.parametrize("flag", [False, True], ids=["file-arg", "profile-flag"])
def test_validate_with_profile_flag_reports_the_same(hk, flag):
    text = HEAD + "    UserPromptSubmit:\n      - name: rules\n        template: \"{{ nope }}\"\n"
    path = hk.root / "p.yaml"
    path.write_text(text)
    args = ("validate", "--profile", path) if flag else ("validate", path)
    run = hk.engine(*args, cwd=hk.root)
    _problem_at(hk, run, path, _line_of(text, "template:"), "nope")


@pytest.mark.parametrize("handler", [
    # a refresh handler's template (the trial render of hooks/check.py)
    "    UserPromptSubmit:\n      - name: rules\n        every_turns: 1\n        template: \"{LOOP}\"\n",
    # a kind's declared template (check_declared of hooks/handlers/base.py)
    "    SessionStart:\n      - name: slow_effort\n        kind: effort_guidance\n"
    "        templates: {low: \"{LOOP}\", medium: \"\", high: \"\"}\n",
], ids=["refresh", "effort_guidance"])
def test_a_template_that_never_ends_fails_within_deadline_ms(hk, handler):
    """Within every limit of hooks.templates but 10^10 steps: the check that
    renders it with sample values says so after deadline_ms, inside the
    compile box too, whose own limit (a minute) must not stand in for it."""
    loop = "{% for i in range(100000) %}{% for c in 'y' * 100000 %}{% endfor %}{% endfor %}x"
    text = HEAD.replace("hooks:\n", "hooks:\n  deadline_ms: 400\n  kill_after_ms: 800\n") + handler.replace("{LOOP}", loop)
    start = time.monotonic()
    path, run = _validate(hk, text)
    took = time.monotonic() - start
    _problem_at(hk, run, path, _line_of(text, loop), "does not finish within deadline_ms (400 ms)")
    assert took < 30, f"{took:.1f} s: the compile box's minute, not the profile's 400 ms"


@pytest.mark.parametrize("path", ["$HOME/mem.ndjson", "state/mem.ndjson"])
def test_a_relative_tool_memory_path_is_refused(hk, path):
    """hooks.memory.path expands ~ and {state}, not $VARs: '$HOME/mem.ndjson'
    passed validate and was taken from the working folder (engine memory
    clear made a folder named '$HOME' there; each hook, one in every project)."""
    text = f"kind: profile\nname: t\nextends: default\nhooks:\n  memory:\n    path: {path}\n"
    prof, run = _validate(hk, text)
    _problem_at(hk, run, prof, 6, "hooks.memory.path", "is relative", "start it with ~, {state}")
    cleared = hk.engine("memory", "clear", "--profile", prof, cwd=hk.root)
    assert cleared.returncode == 1, str(cleared)
    assert not (hk.root / path.split("/")[0]).exists()


@pytest.mark.parametrize("body, words", [
    ("        templates_of: rules\n", ["templates_of names 'rules'", "no effort_guidance handler"]),
    ("        templates_of: nobody\n", ["templates_of names 'nobody'"]),
    ("", ["missing templates or templates_of"]),
], ids=["not-effort", "no-such-handler", "neither"])
def test_an_effort_handler_gives_templates_of_its_own_or_of_another_effort_handler(hk, body, words):
    """`templates_of` names an effort_guidance handler with templates of its
    own; a handler without either is incomplete: said where, exit 1."""
    text = HEAD + "    PostToolUse:\n      - name: effort_again\n        kind: effort_guidance\n" + body
    path, run = _validate(hk, text)
    _problem_at(hk, run, path, _line_of(text, "templates_of" if body else "- name: effort_again"), *words)
