"""Issue 11: what users of ruff, Vale, black and pre-commit take for granted,
and no traceback anywhere: a full or closed stdout, `engine hook --help`,
messages that say what to write, several inputs, --exit-code, --json,
--color and NO_COLOR, profile discovery, completion, pre-commit."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, problems, write
from engine.base.version import __version__

SAMPLE = """# Deploy guide

In order to deploy the application to production, check the configuration of the database.
This is **important**: keep the firewall on at all times.
"""
ROOMY = "".join(f"In order to deploy the application number {i}, check the configuration.\n" for i in range(4000))


def _popen(cli, args, stdout, input=b"", env=None, cwd=None):
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], input=input, stdout=stdout,
                          stderr=subprocess.PIPE, cwd=str(cwd or cli.cwd), env=cli.env(env), timeout=180)


# ---------------------------------------------------------------- stdout full or closed


@pytest.mark.parametrize("args", [
    ["compress", "-", "--level", "light"],
    ["compress", "-", "--level", "light", "--json"],
    ["diff", "-", "--level", "standard"],
])
def test_full_stdout_is_one_line_not_a_traceback(cli, args):
    with open("/dev/full", "wb") as full:
        p = _popen(cli, args, full, input=b"x\n" + SAMPLE.encode())
    err = p.stderr.decode()
    assert "Traceback" not in err, err
    assert p.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "standard output" in lines[0] and "No space left" in lines[0], err


def test_a_removed_working_folder_is_said_as_such(cli):
    """A shell left in a removed folder: the command says so in one line (not
    "cannot write to standard output"), and --version still answers."""
    rule = write(cli.cwd, "rules.md", SAMPLE)
    gone = cli.cwd / "gone"
    said = []
    for args in (["compress", str(rule)], ["--version"]):
        gone.mkdir()
        proc = subprocess.run(["sh", "-c", 'cd "$1" && rmdir "$1" && shift && exec "$@"', "sh", str(gone),
                               sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True,
                              env=cli.env(), timeout=180)
        said.append((proc.returncode, proc.stdout, proc.stderr))
    assert said == [(1, "", "engine: the working folder no longer exists (it was removed under this shell); "
                            "cd to a folder that exists and run the command again\n"),
                    (0, f"engine {__version__}\n", "")], said


@pytest.mark.parametrize("args", [["compress", "big.md", "--level", "off"], ["diff", "big.md", "--level", "standard"]])
def test_closed_stdout_ends_quietly(cli, args):
    write(cli.cwd, "big.md", ROOMY)
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=str(cli.cwd), env=cli.env())
    first = proc.stdout.readline()  # as `| head -1` does
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=180)
    assert first
    assert err == "", err
    assert proc.returncode == 0


def test_hook_help_prints_help(cli):
    r = cli("hook", "--help")
    assert r.returncode == 0, r
    assert r.out.startswith("usage: engine hook"), r
    assert "--profile" in r.out and "stdin" in r.out


def test_version(cli):
    import engine

    r = cli("--version")
    assert r.returncode == 0
    assert r.out.strip() == f"engine {engine.__version__}"


# ---------------------------------------------------------------- figures


def test_diff_never_prints_minus_zero(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    r = cli("diff", "rules.md", "--level", "off")
    assert r.returncode == 0
    assert "-0.0%" not in r.out, r.out
    assert "(0.0%)" in r.out
    r = cli("diff", "rules.md", "--level", "standard", "--color", "never")
    figures = r.out.splitlines()[-1]
    assert re.search(r"chars \d+ -> \d+ \(-\d+\.\d%\)", figures), figures


# ---------------------------------------------------------------- messages


DEDENTED = """kind: profile
name: mine
extends: default
dictionaries:
  fillers:
    remove: ["an"]
  add:
    - basically
"""


def test_dedented_add_is_reported_on_its_own_line(cli):
    write(cli.cwd, "p.yaml", DEDENTED)
    r = cli("validate", "p.yaml")
    assert r.returncode == 1
    (p,) = problems(r)
    assert (p.line, p.col) == (7, 3), r.err  # the `add:` key, not the list item below it
    assert "indent" in p.msg and "fillers" in p.msg, p.msg


def test_file_without_kind_says_what_to_write(cli):
    write(cli.cwd, "p.yaml", "name: mine\nextends: default\n")
    r = cli("validate", "p.yaml")
    (p,) = problems(r)
    assert "`kind:` is missing" in p.msg and "kind: profile" in p.msg, p.msg
    assert "None" not in p.msg


@pytest.mark.parametrize("text,wanted", [
    ("kind: profile\nname: m\nextends: default\ndescriptoin: x\n", "did you mean 'description'?"),
    ("kind: profile\nname: m\nextends: defualt\n", "did you mean 'default'?"),
    ("kind: profile\nname: m\nextends: default\nobjective: token\n", "did you mean 'tokens'?"),
    ("kind: profile\nname: m\nextends: default\nprotect:\n  remove: [negation]\n", "did you mean 'negations'?"),
    ("kind: profiel\nname: m\n", "did you mean 'profile'?"),
])
def test_unknown_names_suggest_the_closest(cli, text, wanted):
    write(cli.cwd, "p.yaml", text)
    r = cli("validate", "p.yaml")
    assert r.returncode == 1
    assert any(wanted in p.msg for p in problems(r)), r.err


def test_paths_in_messages_are_as_the_user_gave_them(cli, tmp_path):
    body = "kind: profile\nname: m\nextends: default\nprotect:\n  add: [./cats/bad.yaml]\n"
    write(cli.cwd, "sub/p.yaml", body)
    write(cli.cwd, "sub/cats/bad.yaml", "kind: protect\nname: bad\ndescriptoin: x\npatterns: ['x']\n")
    absolute = str(cli.cwd / "sub" / "p.yaml")
    for given in ("sub/p.yaml", absolute):
        r = cli("validate", given)
        files = {p.file for p in problems(r)}
        # the file named inside the profile: relative to the working folder, as it is inside it
        assert files == {"sub/cats/bad.yaml"}, r.err
    write(cli.cwd, "sub/p.yaml", body + "level: nosuchlevel\n")
    for given in ("sub/p.yaml", absolute):
        r = cli("validate", given)
        assert given in {p.file for p in problems(r)}, r.err  # the file the user named: as typed
        r = cli("compress", "-", input="x\n", env={"ENGINE_PROFILE": given})
        assert given in {p.file for p in problems(r)}, r.err  # named in $ENGINE_PROFILE: as written


def test_a_problem_without_a_place_is_the_engines_and_one_with_a_place_starts_with_it(cli):
    """Audit: a line was taken for FILE:LINE:COL when its first word held a
    colon, so "'sha256:x' is not a cache key" lost its "engine:" prefix, and
    a profile in a folder whose name holds a space got one before its place."""
    r = cli("cache", "show", "sha256:abc")
    assert r.returncode == 1 and r.err.startswith("engine: 'sha256:abc' is not a cache key"), r.err
    write(cli.cwd, "my profiles/p.yaml", "kind: profile\nname: m\nextends: default\nlevle: light\n")
    r = cli("validate", "my profiles/p.yaml")
    assert r.returncode == 1 and r.err.startswith("my profiles/p.yaml:4:1: unknown key 'levle'"), r.err


# ---------------------------------------------------------------- several inputs


def _one(cli, name, level="standard"):
    return cli("compress", name, *(["--level", level] if level else [])).out


def test_compress_several_files_in_place_with_a_glob(cli):
    texts = {f"r/{n}.md": SAMPLE.replace("Deploy", n) for n in ("a", "b", "c")}
    for name, text in texts.items():
        write(cli.cwd, name, text)
        write(cli.cwd, "ref/" + name, text)
    want = {name: _one(cli, "ref/" + name) for name in texts}
    r = cli("compress", "r/*.md", "--level", "standard", "--in-place")
    assert r.returncode == 0, r
    assert r.out == ""
    for name in texts:
        assert (cli.cwd / name).read_text() == want[name]


def test_compress_several_files_into_a_folder(cli):
    write(cli.cwd, "a.md", SAMPLE)
    write(cli.cwd, "b.md", SAMPLE + "More text in order to test.\n")
    r = cli("compress", "a.md", "b.md", "--level", "standard", "-o", "out")
    assert r.returncode == 0, r
    assert sorted(os.listdir(cli.cwd / "out")) == ["a.md", "b.md"]
    assert (cli.cwd / "out" / "a.md").read_text() == _one(cli, "a.md")
    assert (cli.cwd / "a.md").read_text() == SAMPLE


def test_compress_several_files_names_the_ones_that_failed(cli):
    write(cli.cwd, "a.md", SAMPLE)
    (cli.cwd / "bad.md").write_bytes(b"caf\xe9\n")
    r = cli("compress", "a.md", "missing.md", "bad.md", "nothing*.md", "-o", "out")
    assert r.returncode == 1
    assert (cli.cwd / "out" / "a.md").read_text() == _one(cli, "a.md", None)
    last = r.err.strip().splitlines()[-1]
    assert "3 of 4" in last, r.err
    for name in ("missing.md", "bad.md", "nothing*.md"):
        assert name in last


def test_compress_several_files_needs_a_destination(cli):
    write(cli.cwd, "a.md", SAMPLE)
    write(cli.cwd, "b.md", SAMPLE)
    r = cli("compress", "a.md", "b.md")
    assert r.returncode == 1 and r.out == ""
    assert "--in-place" in r.err and "-o DIR" in r.err


def test_compress_json_of_several_files_is_a_list(cli):
    write(cli.cwd, "a.md", SAMPLE)
    write(cli.cwd, "b.md", SAMPLE)
    r = cli("compress", "a.md", "b.md", "--json", "-o", "out")
    data = json.loads(r.out)
    assert [d["file"] for d in data] == ["a.md", "b.md"]
    assert all(d["output"] == os.path.join("out", d["file"]) and d["text"] is None for d in data)


def test_in_place_refuses_stdin(cli):
    r = cli("compress", "-", "--in-place", input=SAMPLE)
    assert r.returncode == 1 and "--in-place" in r.err


# ---------------------------------------------------------------- diff --exit-code, --json


def test_diff_exit_code(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    assert cli("diff", "rules.md", "--exit-code", "--level", "standard").returncode == 1
    assert cli("diff", "rules.md", "--exit-code", "--level", "off").returncode == 0
    assert cli("diff", "rules.md", "--level", "standard").returncode == 0, "without the flag: 0"


def test_json_shapes(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    d = json.loads(cli("diff", "rules.md", "--json", "--level", "standard").out)
    assert set(d) == {"file", "profile", "level", "changed", "diff", "tokenizer", "chars_before", "chars_after",
                      "tokens_before", "tokens_after", "protected_spans"}
    assert d["changed"] is True and d["diff"].startswith("--- rules.md")
    e = json.loads(cli("explain", "rules.md", "--json", "--level", "standard").out)
    assert set(e) == {"file", "profile", "level", "objective", "protected", "changes", "replaced_by_design", "not_used"}
    assert e["changes"] and set(e["changes"][0]) == {"line", "transform", "before", "after"}
    assert e["protected"] and set(e["protected"][0]) == {"line", "col", "category", "text"}
    write(cli.cwd, "p.yaml", "kind: profile\nname: m\nextends: default\nlevle: off\n")
    r = cli("validate", "p.yaml", "--json")
    v = json.loads(r.out)
    assert r.returncode == 1 and v["ok"] is False
    assert v["problems"] == [{"file": "p.yaml", "line": 4, "col": 1, "message": "unknown key 'levle'; did you mean 'level'?"}]
    write(cli.cwd, "good.yaml", "kind: profile\nname: m\nextends: default\n")
    assert json.loads(cli("validate", "good.yaml", "--json").out) == {"ok": True, "problems": []}


# ---------------------------------------------------------------- colour


def _on_a_terminal(cli, args, env):
    import pty

    master, slave = pty.openpty()
    try:
        p = subprocess.run([sys.executable, "-m", "engine.cli", *args], stdout=slave, stderr=subprocess.PIPE,
                           cwd=str(cli.cwd), env=cli.env(env), timeout=180)
        os.close(slave)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    assert p.returncode == 0, p.stderr
    return b"".join(chunks).decode()


def test_color_on_a_terminal_unless_no_color(cli):
    write(cli.cwd, "rules.md", SAMPLE)
    args = ["diff", "rules.md", "--level", "standard"]
    assert "\x1b[" in _on_a_terminal(cli, args, {"NO_COLOR": None, "TERM": "xterm"})
    assert "\x1b[" not in _on_a_terminal(cli, args, {"NO_COLOR": "1", "TERM": "xterm"})
    assert "\x1b[" in _on_a_terminal(cli, args + ["--color", "always"], {"NO_COLOR": "1", "TERM": "xterm"})
    assert "\x1b[" not in _on_a_terminal(cli, args + ["--color", "never"], {"NO_COLOR": None, "TERM": "xterm"})
    assert "\x1b[" not in cli(*args).out  # a pipe


# ---------------------------------------------------------------- profile discovery


OFF_PROFILE = "kind: profile\nname: {name}\nextends: default\nlevel: off\n"


def test_profile_is_found_walking_up_to_the_repository_root(cli, tmp_path):
    outer = tmp_path / "outer"
    repo = outer / "repo"
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": home}
    write(outer, ".engine/profile.yaml", OFF_PROFILE.format(name="outer"))
    shown = cli("profile", "show", cwd=deep, env=env).out
    assert yaml.safe_load(shown)["name"] == "default", "a profile above the repository root is not used"
    assert "repository root" in shown.splitlines()[1]
    write(home, ".engine/profile.yaml", OFF_PROFILE.format(name="home"))
    shown = cli("profile", "show", cwd=deep, env=env).out
    assert yaml.safe_load(shown)["name"] == "home"
    assert "home folder" in shown.splitlines()[1]
    write(repo, ".engine/profile.yaml", OFF_PROFILE.format(name="repo"))
    assert cli("trust", cwd=deep, env=env).returncode == 0  # a project profile is used once approved
    shown = cli("profile", "show", cwd=deep, env=env).out
    assert yaml.safe_load(shown)["name"] == "repo"
    head = shown.splitlines()[:2]
    assert head[0] == f"# profile: {repo / '.engine' / 'profile.yaml'}", head
    assert "walking up" in head[1], head
    write(deep, "rules.md", SAMPLE)
    assert cli("compress", "rules.md", cwd=deep, env=env).out == SAMPLE, "the repo's profile (level off) applies"
    shown = cli("profile", "show", cwd=deep, env={**env, "ENGINE_PROFILE": "default"}).out
    assert "ENGINE_PROFILE" in shown.splitlines()[1]


# ---------------------------------------------------------------- completion, pre-commit


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_completion_scripts(cli, shell):
    r = cli("completion", shell)
    assert r.returncode == 0
    for word in ("compress", "validate", "diff", "explain", "install", "--in-place", "--exit-code"):
        assert word in r.out, word
    exe = shutil.which(shell)
    assert exe, f"no {shell} on the PATH: .ci/run installs Debian's {shell}"
    check = subprocess.run([exe, "-n"], input=r.out.encode(), capture_output=True)  # the script parses in its shell
    assert check.returncode == 0, check.stderr
    if shell == "bash":
        script = r.out + '\nCOMP_WORDS=(engine comp); COMP_CWORD=1; _engine_complete; echo "${COMPREPLY[@]}"\n'
        out = subprocess.run([exe, "-c", script], capture_output=True, text=True).stdout
        assert sorted(out.split()) == ["completion", "compress"]


def test_pre_commit_hooks_run_the_engine(cli):
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"engine-validate", "engine-golden"}
    for h in hooks:
        assert {"id", "name", "entry", "language"} <= set(h)
    assert by_id["engine-validate"]["entry"] == "engine validate"
    assert by_id["engine-golden"]["entry"] == "engine golden"
    assert by_id["engine-golden"]["pass_filenames"] is False
    assert re.search(by_id["engine-validate"]["files"], ".engine/profile.yaml")
    # pre-commit appends the changed files to the entry
    write(cli.cwd, ".engine/profile.yaml", "kind: profile\nname: m\nextends: default\n")
    assert cli(*by_id["engine-validate"]["entry"].split()[1:], ".engine/profile.yaml").returncode == 0


def test_readme_test_command_is_what_ci_runs():
    readme = (REPO / "README.md").read_text()
    block = re.search(r"## Run the tests.*?```sh\n(.*?)\n```", readme, re.S).group(1).strip()
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert block in ci, (block, ci)
