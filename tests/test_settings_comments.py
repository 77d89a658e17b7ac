"""A settings file with comments, which Gemini CLI reads (`install.comments`
of pipelines/agents/gemini.yaml, measured: 0.61.0 reads its settings.json
through strip-json-comments and writes it back keeping them).  Before,
`engine install --agent gemini` refused such a file as "not valid JSON",
and the hook read no `context.fileName` from it.  Now install and
uninstall keep every comment, editing the file only where its data
changes (engine/hooks/jsonsplice.py); Claude Code's file stays strict."""

import json
import random
import re

import pytest

from engine.base.jsonc import blank_comments, comment_spans
from engine.hooks import jsonsplice
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

COMMENTED = """{
  // General settings
  "theme": "Dracula", // dark, for the evening
  /* Which files Gemini reads:
     GEMINI.md and AGENTS.md */
  "context": {"fileName": ["AGENTS.md", "GEMINI.md"]},
  "url": "https://example.com/a//b" /* a // in a string is no comment */
}
"""
COMMENTS = ["// General settings", "// dark, for the evening",
            "/* Which files Gemini reads:\n     GEMINI.md and AGENTS.md */", "/* a // in a string is no comment */"]


def _read(path):
    return json.loads(blank_comments(path.read_text()))


def _gemini_user_settings(hk, text):
    path = hk.home / ".gemini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_blanking_keeps_strings_places_and_line_ends():
    text = '{"a": "x // y", "b": "q\\" /* z */", "c": "\\\\"} // end\n/* one\ntwo */ '
    blank = blank_comments(text)
    assert len(blank) == len(text) and blank.count("\n") == text.count("\n")
    assert json.loads(blank) == {"a": "x // y", "b": 'q" /* z */', "c": "\\"}
    assert [text[s:e] for s, e in comment_spans(text)] == ["// end", "/* one\ntwo */"]
    assert blank_comments('{"a": 1} /* never closed') == '{"a": 1} ' + " " * len("/* never closed")


def test_install_into_a_commented_gemini_file_keeps_every_comment_and_uninstall_gives_back_its_bytes(hk):
    path = _gemini_user_settings(hk, COMMENTED)
    run = hk.engine("install", "--agent", "gemini", "--user")
    assert run.returncode == 0, str(run)
    text = path.read_text()
    for comment in COMMENTS:
        assert comment in text, f"{comment!r} kept\n{text}"
    data = _read(path)
    assert data["theme"] == "Dracula" and data["context"] == {"fileName": ["AGENTS.md", "GEMINI.md"]}
    assert "engine-hook" in json.dumps(data["hooks"]["BeforeAgent"]), data["hooks"]
    assert text.startswith(COMMENTED[:COMMENTED.index('"url"')]), "the lines before the change are as they were"
    run = hk.engine("uninstall", "--agent", "gemini", "--user")
    assert run.returncode == 0, str(run)
    assert path.read_text() == COMMENTED


def test_uninstall_after_an_edit_keeps_the_edit_and_the_comments(hk):
    path = _gemini_user_settings(hk, COMMENTED)
    assert hk.engine("install", "--agent", "gemini", "--user").returncode == 0
    path.write_text(path.read_text().replace('"Dracula"', '"Light"'))
    run = hk.engine("uninstall", "--agent", "gemini", "--user")
    assert run.returncode == 0, str(run)
    assert path.read_text() == COMMENTED.replace('"Dracula"', '"Light"')


def test_a_second_install_changes_nothing(hk):
    path = _gemini_user_settings(hk, COMMENTED)
    assert hk.engine("install", "--agent", "gemini", "--user").returncode == 0
    once = path.read_bytes()
    assert hk.engine("install", "--agent", "gemini", "--user").returncode == 0
    assert path.read_bytes() == once


def test_an_error_in_a_commented_file_is_said_at_its_own_place(hk):
    path = _gemini_user_settings(hk, '{\n  /* a\n  b */ "theme": "x",\n  "n": NaN\n}\n')
    run = hk.engine("install", "--agent", "gemini", "--user")
    assert run.returncode == 1 and "Traceback" not in run.stderr, str(run)
    assert re.search(r"settings\.json:4:8: settings file is not valid JSON", run.stderr), run.stderr
    assert path.read_text().startswith('{\n  /* a')


def test_claude_codes_settings_file_stays_strict_json(hk):
    """Claude Code 2.1.332 runs no hook of a settings.json holding a
    comment (measured): install refuses it, saying so at the comment."""
    path = hk.project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text('{\n  // a comment\n  "model": "opus"\n}\n')
    run = hk.engine("install", "--project")
    assert run.returncode == 1 and "Traceback" not in run.stderr, str(run)
    assert "settings.json:2:3: settings file holds a comment, which this agent does not read" in run.stderr, str(run)
    assert path.read_text() == '{\n  // a comment\n  "model": "opus"\n}\n'


def _commented(value, rng, depth=0):
    """`value` as JSON text with comments between its tokens, and the comments."""
    notes = []

    def note():
        if rng.random() < 0.3:
            text = rng.choice(["// n{}\n", "/* n{} */", "/* n{}\n  */"]).format(len(notes))
            notes.append(text.rstrip("\n"))
            return text
        return rng.choice(["", " ", "\n  "])

    def write(v, indent):
        pad = "\n" + "  " * (indent + 1)
        if isinstance(v, dict):
            parts = [pad + note() + json.dumps(k) + note() + ":" + " " + write(x, indent + 1) + note()
                     for k, x in v.items()]
            return "{" + ",".join(parts) + note() + "\n" + "  " * indent + "}"
        if isinstance(v, list):
            parts = [pad + note() + write(x, indent + 1) + note() for x in v]
            return "[" + ",".join(parts) + note() + "]"
        return json.dumps(v)

    return note() + write(value, depth) + note() + "\n", notes


def _changed(value, rng, only_add=False):
    """`value` with keys and elements taken out, changed and added, as
    install and uninstall change a file (`only_add`: added only)."""
    if isinstance(value, dict):
        out = {k: _changed(v, rng, only_add) for k, v in value.items() if only_add or rng.random() > 0.25}
        if rng.random() < 0.4:
            out[f"new{rng.randrange(99)}"] = {"hooks": [{"type": "command", "command": "engine-hook"}]}
        return out
    if isinstance(value, list):
        out = [v for v in value if only_add or rng.random() > 0.3]
        return out + [{"k": rng.randrange(9)} for _ in range(rng.randrange(3))]
    return value if only_add or rng.random() > 0.1 else "changed"


def _sample(rng, depth=0):
    if depth > 2 or rng.random() < 0.3:
        return rng.choice([1, "s", True, None, 2.5, "a//b", 'q"/*'])
    if rng.random() < 0.5:
        return {f"k{i}": _sample(rng, depth + 1) for i in range(rng.randrange(4))}
    return [_sample(rng, depth + 1) for _ in range(rng.randrange(4))]


@pytest.mark.parametrize("only_add", [True, False], ids=["added", "changed"])
@pytest.mark.parametrize("seed", range(3))
def test_a_spliced_file_reads_as_the_new_data_and_an_addition_keeps_every_comment(seed, only_add):
    rng = random.Random(seed)
    for _ in range(150):
        old = {f"top{i}": _sample(rng) for i in range(rng.randrange(1, 4))}
        text, notes = _commented(old, rng)
        assert json.loads(blank_comments(text)) == old, text
        new = _changed(old, rng, only_add)
        for unit in (2, "\t", None):
            out = jsonsplice.splice(text, old, new, unit, "\n")
            assert json.loads(blank_comments(out)) == new, f"{text}\n->\n{out}"
            assert jsonsplice.splice(out, new, new, unit, "\n") == out, "no change, no edit"
            if only_add:
                lost = [n for n in notes if n not in out]
                assert not lost, f"{lost} lost:\n{text}\n->\n{out}"


def test_a_file_written_on_windows_keeps_its_line_ends():
    text = '{\r\n  // note\r\n  "a": 1, // x\r\n  "b": [\r\n    1\r\n  ]\r\n}\r\n'
    old = json.loads(blank_comments(text))
    for new in ({"a": 1, "b": [1, 2], "c": {"d": [1]}}, {"b": [1]}, {"a": 1}):
        out = jsonsplice.splice(text, old, new, 2, "\r\n")
        assert json.loads(blank_comments(out)) == new, out
        assert "\n" not in out.replace("\r\n", ""), repr(out)
        assert "// note" in out
