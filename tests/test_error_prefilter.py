"""The error patterns' prefilter (engine/base/regexlit.py): the literal
kept for a pattern is in every line it matches, so ruling a text out by
its literals never changes whether a call failed; and the built-in
profile's patterns all have one, so a successful call of an agent that
gives one output text costs its hook no `import re`."""

import json
import re

import pytest

from engine.base.regexlit import may_match, required_literals
from engine.memory.record import _matches_a_line
from testdata import transcripts

# Lines an error pattern is written for, and lines that only come close.
LINES = [
    "bash: kubectl: command not found", "zsh: command not found: helm", "command not foun",
    "cat: /etc/shadow: Permission denied", "permission denied", "ls: x: No such file or directory",
    "fatal: not a git repository (or any of the parent directories): .git", "  fatal: indented", "xfatal: ",
    "Traceback (most recent call last):", "Traceback (most recent call last): trailing",
    "npm ERR! code E404", "pnpm ERR! missing", "yarn ERR!", "bun ERR! no", "npm ERR!x",
    "curl: (7) Failed to connect: Connection refused", "error[E0308]: mismatched types", "error: linker failed",
    "error[E]: not a code", "errors: 3", "Error: capital", "", "ok",
]


def _builtin_patterns():
    from engine.core.profile import choice, hooks_of

    return hooks_of(choice()).get("memory")


def _tool_outputs(limit=400):
    """Texts of real tool results (the shared transcripts), a bounded sample."""
    out = []
    for path in transcripts():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if '"tool_result"' not in line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            content = rec.get("message", {}).get("content")
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    body = block.get("content")
                    text = body if isinstance(body, str) else "\n".join(
                        b.get("text", "") for b in body or [] if isinstance(b, dict))
                    if text:
                        out.append(text)
            if len(out) >= limit:
                return out
    return out


def test_the_built_in_patterns_each_have_a_literal_in_the_compiled_settings():
    memory = _builtin_patterns()
    literals = memory["error_literals"]
    assert literals is not None and len(literals) == len(memory["error_patterns"])
    assert all(literals), literals
    assert dict(zip(memory["error_patterns"], literals))["^(npm|yarn|pnpm) ERR!"] == " ERR!"


def test_every_line_a_pattern_matches_holds_its_literal():
    memory = _builtin_patterns()
    patterns, literals = memory["error_patterns"], memory["error_literals"]
    texts = _tool_outputs()
    assert len(texts) > 100
    lines = LINES + [line for text in texts for line in text.splitlines()]
    matched = 0
    for pattern, literal in zip(patterns, literals):
        for line in lines:
            if re.search(pattern, line):
                matched += 1
                assert literal in line, (pattern, literal, line)
    assert matched >= 12, "the sample matched too few lines to show anything"
    for text in LINES + texts:  # whether a call failed: the same with the prefilter as without
        assert _matches_a_line(text, patterns, literals) == _matches_a_line(text, patterns), text[:200]


@pytest.mark.parametrize("pattern,literal", [
    ("command not found", "command not found"),
    (r"\(most recent call last\):$", "(most recent call last):"),
    (r"^error(\[E\d+\])?: ", "error"),
    (r"x(?i:abc)yz", "yz"),       # a flag inside a group: the group is no literal
    (r"[a]bc", "abc"),             # a one-character class is that character
    ("foo\\nbarx", "barx"),        # no line holds a line break
    (r"a+bc", "bc"),               # a repeated character may be any number of them
])
def test_the_literal_of_a_pattern(pattern, literal):
    assert required_literals([pattern]) == [literal]


@pytest.mark.parametrize("pattern", ["timeout|refused", "(?i)error", r"\d+", "^$", "(unclosed", r"a?", r"(ab)*"])
def test_a_pattern_without_a_literal_leaves_every_line_searched(pattern):
    assert required_literals(["command not found", pattern]) is None
    assert may_match("anything", None)


def test_a_text_without_any_literal_is_ruled_out_before_re():
    literals = required_literals(["command not found", "^fatal: "])
    assert not may_match("all fine\nbuilt 3 targets", literals)
    assert may_match("git: fatal: nope", literals)  # the literal is there; re decides (no match: not at ^)
    assert not _matches_a_line("git: fatal: nope", ["command not found", "^fatal: "], literals)


def test_an_agents_exit_status_pattern_has_its_literal_and_reads_the_same_without_re():
    """Gemini's "\\nExit Code: (\\d+)\\n" holds "\\nExit Code: ": an output
    without it reports no status and is not searched; with it, the status
    is read as before (the agent table's failure.exit_literal)."""
    from engine.agents.event import make
    from engine.agents.table import get

    gemini = get("gemini")
    assert gemini.data["failure"]["exit_literal"] == "\nExit Code: "
    assert get("copilot").data["failure"]["exit_literal"] == "completed with exit code "
    assert "exit_literal" not in get("claude-code").data["failure"]  # no pattern, no literal

    def code(text):
        return make(gemini, "post_tool", session="s", cwd="/p", tool="run_shell_command",
                    tool_input={"command": "x"}, tool_output={"llmContent": text, "returnDisplay": text}).exit_code()

    assert code("Output: a\nb\n") is None
    assert code("Output: boom\nExit Code: 3\nProcess Group PGID: 9\n") == 3
    assert code("Output: Exit Code: 3 inline\n") is None  # the pattern needs its line break


EXIT_PIECES = ["completed with exit code ", "\nExit Code: ", "<shellId: 0 ", "0", "7", "12", "\u0663", "\u00b2", ">",
               "\n", " ", "\t", "x", "Exit Code: ", "Output: "]


@pytest.mark.parametrize("agent", ["copilot", "gemini"])
def test_an_exit_pattern_taken_apart_reads_every_text_as_re_does(agent):
    """failure.exit_digits (engine/base/regexlit.py digits_between) and
    last_digits give group 1 of the pattern's last re.finditer match, on
    texts made of the pieces the patterns are about: digits of other
    scripts (\\d is any decimal digit, not a superscript), trailing blanks,
    a literal repeated, matches side by side."""
    import random

    from engine.agents.table import get
    from engine.base.regexlit import last_digits

    failure = get(agent).data["failure"]
    pattern, taken_apart = failure["exit_pattern"], failure["exit_digits"]
    assert taken_apart, pattern
    rng = random.Random(agent)
    for _ in range(4000):
        text = "".join(rng.choice(EXIT_PIECES) for _ in range(rng.randrange(12)))
        found = None
        for found in re.finditer(pattern, text):
            pass
        assert last_digits(text, *taken_apart) == (found.group(1) if found else None), (pattern, text)


@pytest.mark.parametrize("pattern", ["a(\\d+)1", "(?m)a(\\d+)$", "(?a)a(\\d+)b", "(\\d+)x", "a(?:\\d+)b", "a(\\d*)b",
                                     "a(\\d+)b\\s+$", "a(\\d+)(b)", "a|b(\\d+)"])
def test_a_pattern_of_another_form_is_not_taken_apart(pattern):
    from engine.base.regexlit import digits_between

    assert digits_between(pattern) is None
