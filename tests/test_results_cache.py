"""Issue 11, speed: the results cache.  A refresh of unchanged rule files
reads compressed text and the rendered banner from the cache (no `regex`, no
Jinja2); `engine compress FILE` repeated reads its result without argparse,
`regex` or pickle; `compress --json` repeated never loads an encoding.  The
cache is invalidated by any change, bounded, and private (0600 / 0700)."""

import json
import os
import stat

from hook_fixtures import profile_text, shared_profile
from test_hooks_conftest_fixtures import hk  # noqa: F401 - fixture

PROBE = r"""
import io, json, sys
from engine.hooks import dispatch
out = io.StringIO()
rc = dispatch.main(json.loads(sys.argv[1]), stdin=io.StringIO(sys.stdin.read()), stdout=out)
mods = sorted({m.split('.')[0] for m in sys.modules} & {"regex", "jinja2", "yaml", "jsonschema", "tiktoken", "pickle"})
sys.__stdout__.write(json.dumps({"rc": rc, "out": out.getvalue(), "mods": mods}))
"""


def _probe(hk, event, profile=None):
    """The hook's run in one process: its exit code, its output (each
    delivery's own id masked: engine/hooks/delivery.py) and the heavy
    modules it imported."""
    import re

    code = "import sys; sys.argv[1:] = [%r]\n" % json.dumps(profile) + PROBE
    run = hk.python(code, stdin=json.dumps(event).encode())
    assert run.returncode == 0, str(run)
    res = json.loads(run.stdout)
    res["out"] = re.sub(r"(\[rules-engine delivery )[0-9a-f]{16}\]", r"\1ID]", res["out"])
    return res


def _rules(hk, n=13):
    for i in range(n):
        hk.rule(f"r{i:02d}.md", f"# Rule {i}\nIn order to deploy the application number {i}, check the configuration.\n")


def _compact(hk, session):
    return hk.event("SessionStart", session=session, source="compact")


def test_unchanged_refresh_imports_neither_regex_nor_jinja2(hk):
    _rules(hk)
    first = _probe(hk, _compact(hk, "s1"))
    assert first["rc"] == 0 and "Rule 12" in first["out"]
    again = _probe(hk, _compact(hk, "s2"))
    assert again["out"] == first["out"], "the cache gives the very same injection"
    assert again["mods"] == [], f"an unchanged refresh imported {again['mods']}"


def test_prompt_refresh_at_another_turn_fills_in_the_turn(hk):
    _rules(hk, 3)
    prof = str(shared_profile(profile_text({"UserPromptSubmit": [{"name": "rules", "every_turns": 2}]})))
    outs = []
    for n in range(1, 5):
        res = _probe(hk, hk.prompt(n), prof)
        outs.append(res)
    assert outs[0]["out"] == "" and outs[2]["out"] == ""
    ctx2 = json.loads(outs[1]["out"])["hookSpecificOutput"]["additionalContext"]
    ctx4 = json.loads(outs[3]["out"])["hookSpecificOutput"]["additionalContext"]
    assert "turn 2:" in ctx2 and "turn 4:" in ctx4
    assert ctx4 == ctx2.replace("turn 2:", "turn 4:")
    assert outs[3]["mods"] == [], outs[3]["mods"]


def test_a_changed_rule_file_is_compressed_again(hk):
    _rules(hk, 2)
    _probe(hk, _compact(hk, "s1"))
    hk.rule("r01.md", "# Rule 1\nMarker CHANGED: in order to test the cache.\n")
    res = _probe(hk, _compact(hk, "s2"))
    assert "Marker CHANGED: to test" in res["out"], res["out"]


def test_a_changed_profile_is_not_served_from_the_cache(hk):
    _rules(hk, 1)
    base = profile_text(name="c1")
    prof = hk.root / "p.yaml"
    prof.write_text(base)
    hk.compiled(prof)
    assert "In order to" not in _probe(hk, _compact(hk, "s1"), str(prof))["out"]
    data = json.loads(base)
    data["hooks"]["events"] = {"UserPromptSubmit": [{"name": "rules", "level": "off"}]}
    prof.write_text(json.dumps(data))
    hk.compiled(prof)
    assert "In order to deploy" in _probe(hk, _compact(hk, "s2"), str(prof))["out"]


def test_cache_files_are_private(hk):
    _rules(hk, 2)
    _probe(hk, _compact(hk, "s1"))
    root = hk.cache / "results"
    assert root.is_dir()
    for folder, dirs, files in os.walk(root):
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700, folder
        for f in files:
            assert stat.S_IMODE(os.stat(os.path.join(folder, f)).st_mode) == 0o600, f


def test_cache_is_bounded_by_the_profile(hk):
    prof = hk.root / "small.yaml"
    prof.write_text("kind: profile\nname: small\nextends: default\ncache:\n  max_bytes: 4000\n  prune_to: 0.5\n")
    for i in range(6):  # about 1,400 bytes of compressed text each
        f = hk.project / f"f{i}.md"
        f.write_text(f"In order to deploy number {i}, check the configuration. " * 40)
        assert hk.engine("compress", f.name, "--profile", str(prof)).returncode == 0
    total = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(hk.cache / "results") for n in ns)
    assert 0 < total <= 4000


COMPRESS_PROBE = r"""
import sys
from engine.cli import main
rc = main(sys.argv[1:])
sys.stdout.flush()
mods = sorted({m.split('.')[0] for m in sys.modules} & {"regex", "argparse", "pickle", "tiktoken", "yaml", "jinja2"})
sys.stderr.write("MODS " + ",".join(mods) + "\n")
sys.exit(rc)
"""


def _compress_probe(hk, *args):
    run = hk.python("import sys; sys.argv[1:] = %r\n" % (list(args),) + COMPRESS_PROBE)
    assert run.returncode == 0, str(run)
    mods = [line for line in run.stderr.splitlines() if line.startswith("MODS ")][-1][5:]
    return run.stdout, [m for m in mods.split(",") if m]


def test_repeated_compress_reads_the_cache_without_heavy_imports(hk):
    f = hk.project / "rules.md"
    f.write_text("In order to deploy the application, check the configuration.\n")
    first, _ = _compress_probe(hk, "compress", "rules.md", "--level", "standard")
    again, mods = _compress_probe(hk, "compress", "rules.md", "--level", "standard")
    assert again == first and "To deploy" in first
    assert mods == [], mods
    f.write_text("In order to test the cache, run it twice.\n")
    changed, _ = _compress_probe(hk, "compress", "rules.md", "--level", "standard")
    assert changed.startswith("To test"), changed


def test_repeated_token_count_loads_no_encoding(hk):
    (hk.project / "rules.md").write_text("In order to deploy the application, check the configuration.\n")
    first, mods1 = _compress_probe(hk, "compress", "rules.md", "--json")
    again, mods2 = _compress_probe(hk, "compress", "rules.md", "--json")
    assert "tiktoken" in mods1
    assert "tiktoken" not in mods2, mods2
    assert json.loads(again) == json.loads(first)


def test_compress_help_says_what_the_first_count_costs(hk):
    out = hk.engine("compress", "--help").stdout
    assert "first count" in out and "cache" in out
