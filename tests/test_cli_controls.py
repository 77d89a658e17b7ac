"""Issue 23, item 8: nothing the `engine` command prints puts a raw control
character on the user's terminal.  Every command that prints data taken from
tool output, transcripts, the tool memory, the content cache or a project's
files runs on data full of terminal escapes (OSC 52 clipboard writes,
clear-screen, a C1 CSI, DEL, a bidi override, a lone surrogate); its stdout
and stderr hold none of them raw (engine/base/controls.py escapes them, as
`\\uXXXX`, in the one writer every command uses), and a JSON output is still
JSON with the same values.  A product (the text `compress` prints, the bytes
`cache show` prints) stays exact for a pipe and is escaped on a terminal."""

import json
import os
import pty
import re
import subprocess
import sys

import pytest

from conftest import Engine

# Written by tool output, never by the engine: a clipboard write, a title, a
# screen clear, a terminal reset, a C1 CSI, DEL, a bidi override, backspaces.
ESCAPES = "\x1b]52;c;ZXZpbA==\x07\x1b]0;pwned\x1b\\\x1b[2J\x1bc\x9b6n\x7f\u202egnp.exe\b\b\r"
HOSTILE = "boom " + ESCAPES
# Raw in what is printed: C0 but tab and newline, DEL, C1, bidi controls.
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SESSION = "c0ffee00-0000-4000-8000-000000000001"


def _record(**kw):
    return json.dumps({"sessionId": SESSION, "cwd": "/w", "version": "2.1.200", "timestamp": "2026-01-01T00:00:00Z",
                       **kw}) + "\n"


def _transcript(folder):
    lines = [
        _record(type="user", uuid="u1", message={"role": "user", "content": "run it " + HOSTILE}),
        _record(type="assistant", uuid="a1", message={
            "id": "m1", "model": "claude-\x1b[2Jtest", "role": "assistant", "usage": {"input_tokens": 1000},
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash\x9b", "input": {"command": "make " + ESCAPES}},
                        {"type": "tool_use", "id": "t2", "name": "Write",
                         "input": {"file_path": "src/\x1b]52;c;eA==\x07.py", "content": "x"}}]}),
        _record(type="user", uuid="u2", toolUseResult={"stdout": HOSTILE * 200, "stderr": ""}, message={
            "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True,
                                         "content": "<tool_use_error>" + HOSTILE + "\udc80</tool_use_error>"}]}),
        _record(type="attachment", uuid="h1", attachment={"type": "hook_additional_context", "content": [HOSTILE]}),
        _record(type="system", subtype="compact_boundary", uuid="c1",
                compactMetadata={"trigger": "auto\x1b[2J", "preTokens": 5000}),
        _record(type="assistant", uuid="a2", message={"id": "m2", "model": "claude-test", "role": "assistant",
                                                     "usage": {"input_tokens": 900}, "content": []}),
    ]
    folder.mkdir(parents=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_text("".join(lines), encoding="utf-8")  # json.dumps writes the lone surrogate as \udc80
    os.utime(path, (1, 1))
    return path


def _content_cache(root, monkeypatch):
    """A content cache of this test's own (a copy of the built-in settings
    naming its folder), holding one output full of escapes, keyed with the
    per-user secret of the state folder the commands use."""
    from engine.ccm import config
    from engine.ccm.store import Store

    monkeypatch.setenv("ENGINE_STATE_DIR", str(root / "state"))

    text = open(config.builtin_path(), encoding="utf-8").read()
    settings_file = root / "content_cache.yaml"
    settings_file.write_text(text.replace('folder: ""', f'folder: "{root / "ccm"}"', 1), encoding="utf-8")
    store = Store(config.load(str(settings_file)), log=lambda _m: None)
    key = store.put(("output " + HOSTILE + "\n").encode() * 300,
                    {"tool": "Bash", "command": "cat " + ESCAPES, "cwd": str(root / "proj\x1b[2J")})
    assert key
    return settings_file, key


def _tool_memory(state, project):
    from engine.memory.store import append

    state.mkdir(parents=True, exist_ok=True)
    append(str(state / "tool-memory.ndjson"), [
        {"k": "k1", "t": 1767225600, "tool": "Bash", "error": "exit 1: " + HOSTILE, "input": "make " + ESCAPES,
         "project": str(project), "session": SESSION},
        {"k": "k2", "t": 10 ** 30, "tool": "Read\x1b[2J", "error": HOSTILE, "input": "\u202e", "project": "/w",
         "session": SESSION}], 100, 65536)


@pytest.fixture(scope="module")
def world(tmp_path_factory, cache_dir):
    root = tmp_path_factory.mktemp("controls")
    patch = pytest.MonkeyPatch()
    home = root / "home"
    proj = root / "proj"
    (proj / ".claude" / "rules").mkdir(parents=True)
    (proj / "rules.md").write_text("# Rules\n\nAlways " + HOSTILE + " in order to deploy the application.\n",
                                   encoding="utf-8")
    (proj / "messages.json").write_text(json.dumps([{"role": "user", "content": "please " + HOSTILE * 40},
                                                    {"role": "assistant", "content": "ok " + ESCAPES}]))
    transcript = _transcript(home / ".claude" / "projects" / "-w-\x1b]2;title\x07")
    settings_file, key = _content_cache(root, patch)
    patch.undo()
    _tool_memory(root / "state", proj)
    engine = Engine(cache_dir, proj)
    env = {"HOME": home, "CLAUDE_CONFIG_DIR": home / ".claude", "XDG_CONFIG_HOME": home / ".config",
           "ENGINE_STATE_DIR": root / "state", "ENGINE_CONTENT_CACHE": settings_file, "NO_COLOR": None}
    return {"engine": engine, "env": env, "t": str(transcript), "key": key, "proj": proj}


def _commands(w):
    t = w["t"]
    return {
        "session report": (["session", "report", t], 0),
        "session report --json": (["session", "report", t, "--json"], 0),
        "session report --since": (["session", "report", "--since", "30000d"], 0),
        "replay": (["replay", t, "--profile", "default"], 0),
        "purge --dry-run": (["purge", t, "--dry-run"], 0),
        "purge --json": (["purge", t, "--analyze", "--json"], 0),
        "memory list": (["memory", "list"], 0),
        "memory list --json": (["memory", "list", "--json"], 0),
        "memory preview": (["memory", "preview", "PreToolUse", "--input", json.dumps({"command": "make x"})], 0),
        "cache list": (["cache", "list"], 0),
        "cache list --json": (["cache", "list", "--json"], 0),
        "cache stats": (["cache", "stats"], 0),
        "refresh preview --transcript": (["refresh", "preview", "--transcript", t, "--text"], 0),
        "messages compress": (["messages", "compress", "messages.json", "--json"], 0),
        "diff": (["diff", "rules.md", "--color", "always"], 0),
        "explain": (["explain", "rules.md"], 0),
        "compress --json": (["compress", "rules.md", "--json"], 0),
        "a pattern that matches nothing": (["replay", "none-\x1b]52;c;eA==\x07*.jsonl"], 1),
        "a session that is not there": (["session", "report", "gone-\x1b[2J\u202e"], 1),
        "a key that is no key": (["cache", "show", "\x1b]52;c;eA==\x07"], 1),
        "an event the agent does not send": (["memory", "preview", "Nope\x1b[2J"], 1),
        "an argument argparse refuses": (["memory", "list", "--limit", "Nope\x1b[2J"], 1),
    }


COMMANDS = list(_commands({"t": "", "key": ""}))


@pytest.mark.parametrize("name", COMMANDS)
def test_no_raw_control_character_reaches_the_terminal(world, name):
    args, status = _commands(world)[name]
    run = world["engine"](*args, env=world["env"])
    assert run.returncode == status, str(run)
    out = run.out_bytes.decode("utf-8")  # strict: what is printed is UTF-8 (a lone surrogate is escaped)
    own = re.sub(r"\x1b\[[0-9;]*m", "", out) if "--color" in args else out  # diff's own colours, asked for
    for stream, text in (("stdout", own), ("stderr", run.err)):
        found = RAW.search(text)
        assert found is None, f"{name}: raw {found.group()!r} on {stream}: {text[max(0, found.start() - 60):][:160]!r}"
    if "--json" in args:
        json.loads(out)  # still JSON


def test_json_keeps_the_values_and_only_escapes_them(world):
    run = world["engine"]("memory", "list", "--json", env=world["env"])
    raw = run.out
    assert "\\u009b6n" in raw and "\\u202e" in raw and "\\u001b]52" in raw
    errors = {e["k"]: e["error"] for e in json.loads(raw)}
    assert errors["k1"] == "exit 1: " + HOSTILE and errors["k2"] == HOSTILE


def test_a_product_is_exact_to_a_pipe_and_escaped_on_a_terminal(world):
    engine, env = world["engine"], world["env"]
    show = engine("cache", "show", world["key"], "--all", env=env)  # stored from outside the project: --all
    assert show.returncode == 0 and show.out_bytes == ("output " + HOSTILE + "\n").encode() * 300
    text = engine("compress", "rules.md", "--level", "off", env=env)
    assert text.out_bytes == (world["proj"] / "rules.md").read_bytes()
    on_tty = _on_a_terminal(engine, ["cache", "show", world["key"], "--all"], env)  # compress goes through the same binary side (output.product)
    assert RAW.search(on_tty.replace("\r\n", "\n")) is None and "\\u001b]52;c;ZXZpbA==\\u0007" in on_tty


def _on_a_terminal(engine, args, env):
    """What the command writes to a terminal, read while it runs (a pty holds
    a few KB: a reader that waits for the end would wait forever)."""
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-m", "engine.cli", *args], stdout=slave, stderr=subprocess.DEVNULL,
                             cwd=str(engine.cwd), env=engine.env(env))
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the command ended and closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        assert p.wait(timeout=180) == 0
    finally:
        os.close(master)
    return b"".join(chunks).decode("utf-8")


def test_a_file_name_holding_a_newline_prints_on_one_line(cli):
    """The writer lets newlines through, the engine's own lines need them: a
    project's rule file named "a<newline>   SKIPPED fake.md: left out.md"
    printed a SKIPPED line of its own making in `engine refresh preview`,
    and a file name in an error an error line of its own.  A name taken
    from data is one line, its newline escaped (engine/base/controls.py
    one_line), in a preview, an error's FILE:LINE:COL and `engine trust`."""
    rules = cli.cwd / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "a\n   SKIPPED fake.md: left out.md").write_text("Always run the tests.\n", encoding="utf-8")
    preview = cli("refresh", "preview")
    assert preview.returncode == 0, str(preview)
    assert not any(line.startswith("   SKIPPED fake.md") for line in preview.out.splitlines()), preview.out
    assert "a\\n   SKIPPED fake.md: left out.md" in preview.out
    (cli.cwd / "bad\n1:1: fine.yaml").write_text("kind: protect\nname: x\ndescription: y\nbogus: 1\n", encoding="utf-8")
    checked = cli("validate", "bad\n1:1: fine.yaml")
    assert checked.returncode == 1
    assert checked.err.splitlines() and all(line.startswith("bad\\n1:1: fine.yaml:") for line in checked.err.splitlines()), checked.err
    project = cli.cwd / "p\n    fake.yaml"
    (project / ".engine").mkdir(parents=True)
    (project / ".engine" / "profile.yaml").write_text('{"kind": "profile", "name": "repo", "extends": "default"}\n')
    approved = cli("trust", cwd=project)
    assert approved.returncode == 0, str(approved)
    assert "p\\n    fake.yaml" in approved.out and "\n    fake.yaml" not in approved.out, approved.out


def test_a_cached_command_of_several_lines_is_one_row_of_the_listing(cli, tmp_path, monkeypatch):
    """`engine cache list` prints one row an entry, ending with the command
    that made it.  A command of several lines (a heredoc, which agents
    write often) printed its lines as rows of their own: here one that
    forges an entry, a key with its size, which no store holds."""
    from engine.ccm import config
    from engine.ccm.store import Store

    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "state"))
    text = open(config.builtin_path(), encoding="utf-8").read()
    settings_file = tmp_path / "content_cache.yaml"
    settings_file.write_text(text.replace('folder: ""', f'folder: "{tmp_path / "ccm"}"', 1), encoding="utf-8")
    forged = "sha256:" + "f" * 64 + "        12  1 lines  hard  rm -rf ~"
    command = "python3 - <<'EOF'\nprint('x' * 5000)\n" + forged + "\nEOF"
    assert Store(config.load(str(settings_file)), log=lambda _m: None).put(
        b"x" * 5000, {"tool": "Bash", "command": command, "cwd": str(cli.cwd)})
    listed = cli("cache", "list", "--all", env={"ENGINE_STATE_DIR": tmp_path / "state",
                                                "ENGINE_CONTENT_CACHE": settings_file})
    assert listed.returncode == 0, str(listed)
    [row] = listed.out.splitlines()
    assert row.startswith("sha256:") and "<<'EOF'\\nprint(" in row and not row.startswith(forged), row


def test_a_path_quoted_in_an_error_message_prints_on_one_line(cli):
    """A message quotes names from data too: a profile's `extends:` holding
    a newline printed `no profile file at ./x` and then a line of its own
    making, here a forged FILE:LINE:COL line saying all is good.  An
    error's message is one line, as its place is (UserError.__str__)."""
    text = 'kind: profile\nname: p\nextends: "./x\\nother.yaml:1:1: all good.yaml"\n'
    (cli.cwd / "p.yaml").write_text(text, encoding="utf-8")
    for args in (("validate", "p.yaml"), ("compress", "-", "--profile", "p.yaml")):
        r = cli(*args, input="x\n")
        assert r.returncode == 1, str(r)
        [line] = r.err.splitlines()
        assert line.startswith("p.yaml:3:10: no profile file at ") and line.endswith("x\\nother.yaml:1:1: all good.yaml; check the path"), r.err
