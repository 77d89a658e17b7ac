"""Nothing the engine writes holds a secret (issue 23, finding 4): the nine
shapes the issue found in the tool memory and the cache, as tool failures,
Bash error streams and commands, never reach the memory store, a later
session's banner, the content cache (blobs, sidecars, learned commands),
the hook log or the session state.  The tool memory keeps the error's
signature and a bounded, redacted excerpt."""

import json
from pathlib import Path

import yaml

from engine.core.log import Log
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

REPO = Path(__file__).resolve().parent.parent
TABLE = yaml.safe_load((REPO / "tests" / "secrets" / "shapes.yaml").read_text(encoding="utf-8"))
ISSUE = ["azure storage connection string", "azure sas token", "docker config auth", "authorization basic header",
         "npm legacy authtoken", "kubeconfig client-key-data", "hugging face token", "mysql -p password",
         "aws secret after a line continuation"]
SHAPES = [s for s in TABLE["shapes"] if s["name"] in ISSUE]
SECRETS = [x for s in SHAPES for x in s["secrets"]]


def _written(hk):
    return {p: p.read_bytes() for p in hk.engine_files()}


def _assert_nowhere(hk, *texts):
    for path, data in _written(hk).items():
        for s in SECRETS:
            assert s.encode() not in data, f"{s[:24]} written to {path}"
    for text in texts:
        for s in SECRETS:
            assert s not in text, s[:24]


def test_the_issues_shapes_never_reach_the_memory_nor_a_later_banner(hk):
    assert len(SHAPES) == 9
    for i, shape in enumerate(SHAPES):
        command = shape["text"].splitlines()[0].lstrip("$ ")
        ev = hk.event("PostToolUseFailure", tool_name="Bash", tool_use_id=f"toolu_f{i}",
                      tool_input={"command": command, "description": "x"}, error=shape["text"])
        hk.hook(ev).assert_silent()
    # the same shapes on a Bash error stream (exit code 0, an error pattern)
    stderr = "fatal: " + " ".join(s["text"].replace("\n", " ") for s in SHAPES)
    hk.hook(hk.event("PostToolUse", tool_use_id="toolu_p", tool_input={"command": "git fetch"},
                     tool_response={"stdout": "", "stderr": stderr})).assert_ok()
    lines = [json.loads(l) for l in (hk.state / "tool-memory.ndjson").read_text().splitlines()]
    assert len(lines) == 10
    cap = yaml.safe_load((REPO / "pipelines" / "default.yaml").read_text())["hooks"]["memory"]["max_field_chars"]
    for line in lines:
        assert line["sig"] and len(line["error"]) <= cap + 40 and len(line["input"]) <= cap
    later = hk.hook(hk.event("PreToolUse", session="a-later-session", tool_name="Bash",
                             tool_input={"command": "ls"}))
    assert "TOOL MEMORY" in later.context, str(later)
    listed = hk.engine("memory", "list")
    assert listed.returncode == 0
    _assert_nowhere(hk, later.context, listed.stdout)


def test_the_content_cache_keeps_none_of_the_issues_shapes(hk):
    from engine.ccm import config
    from engine.ccm.store import Store

    store = Store(config.load(config.builtin_path()), str(hk.cache / "ccm-direct"), log=lambda m: None)
    for shape in SHAPES:
        assert store.put(("build log line\n" * 3000 + shape["text"] + "\n").encode()) is None, shape["name"]
    assert store.keys() == []
    for i, shape in enumerate(SHAPES):
        key = store.put(f"clean output {i}\n".encode() * 400, {"tool": "Bash", "command": shape["text"]})
        assert "[REDACTED]" in store.meta(key)["sources"][0]["command"], shape["name"]
    _assert_nowhere(hk)


def test_a_learned_command_keeps_no_password(hk):
    """A command whose output was large is learned by its first words:
    `mysql -pPASSWORD` is not learned at all (its pattern would hold it)."""
    big = "".join(f"| {i} | row |\n" for i in range(600))
    mysql = next(s for s in SHAPES if s["name"] == "mysql -p password")
    password = mysql["secrets"][0]
    for command in (f"mysql -p{password} -h db.prod.internal reporting_db", "python3 report.py --all"):
        ev = hk.event("PostToolUse", tool_name="Bash", tool_input={"command": command, "description": "d"},
                      tool_response={"stdout": big, "stderr": "", "interrupted": False, "isImage": False})
        hk.hook(ev, env={"CLAUDE_PROJECT_DIR": hk.project}).assert_ok()
    learned = [p for p in hk.engine_files() if p.parent.name == "learned" and p.suffix == ".json"]
    assert learned, "the clean command was learned"
    patterns = [pat for p in learned for pat in json.loads(p.read_text())["patterns"]]
    assert patterns == ["python3 report.py"], patterns
    _assert_nowhere(hk)


def test_the_hook_log_quotes_no_shape(hk):

    import os

    os.environ["ENGINE_STATE_DIR"], old = str(hk.state), os.environ.get("ENGINE_STATE_DIR")
    try:
        for shape in SHAPES:
            _log("PostToolUse", "s")(f"cannot record: {shape['text']}")
    finally:
        if old is None:
            os.environ.pop("ENGINE_STATE_DIR")
        else:
            os.environ["ENGINE_STATE_DIR"] = old
    text = (hk.state / "hook.log").read_text()
    assert text.count("[REDACTED]") >= 9
    _assert_nowhere(hk, text)


def _log(event_name, session):
    log = Log()
    log.about(event_name, session)
    return log
