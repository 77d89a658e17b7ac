"""Hostile profiles and inputs (issue 10, faults 2, 3, 8, 9): each ends in one
error line and exit 1, quickly and in bounded memory; built-in patterns run
under the profile's time budget; the compiled-profile cache is private,
bounded, and remembers a profile that failed."""

import os
import stat

import pytest

from conftest import position, problems, write


def _one_line(r, exit_code=1):
    assert r.returncode == exit_code, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r
    return lines[0]


def _file_of(line):
    return line.split(":", 1)[0]


def _alias_bomb(depth, width=9):
    lines = ["kind: profile", "name: bomb", "extends: default", "a0: &a0 [x]"]
    for i in range(1, depth + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- fault 3: YAML alias bombs


@pytest.mark.parametrize("depth", [7, 9])
def test_alias_bomb_is_refused_before_expansion(cli, depth):
    """Depth 7 took 10 s and 1.5 GB; depth 9 never ended.  The refusal names
    the aliases (counted while composing, before anything is expanded); the
    subprocess timeout catches an expansion that never ends."""
    write(cli.cwd, "bomb.yaml", _alias_bomb(depth))
    write(cli.cwd, "in.md", "Always run the tests.\n")
    r = cli("compress", "in.md", "--profile", "bomb.yaml", timeout=60)
    line = _one_line(r)
    assert _file_of(line).endswith("bomb.yaml"), line
    assert "alias" in line, line


def test_alias_count_is_bounded_before_expansion():
    from engine.base.errors import UserError
    from engine.core.settings import yaml_limits
    from engine.core.yamlload import load_text

    n = yaml_limits()["max_aliases"] + 1
    text = "a: &a x\nb: [" + ", ".join(["*a"] * n) + "]\n"
    with pytest.raises(UserError) as exc:
        load_text(text, "many.yaml")
    assert "aliases" in str(exc.value) and exc.value.line == 2


def test_alias_inside_itself_is_an_error_not_a_crash():
    from engine.base.errors import UserError
    from engine.core.yamlload import load_text

    with pytest.raises(UserError) as exc:
        load_text("a: &a [x, *a]\n", "self.yaml")
    assert "deep" in str(exc.value)


def test_a_failed_profile_is_remembered_until_its_files_change(api_env, monkeypatch):
    """A hook pays for a bad profile once: the next load returns the same
    error without reading YAML again; editing the file reads it again."""
    from engine.base.errors import UserError
    from engine.core import profile as profile_mod

    bad = write(api_env, "bomb.yaml", _alias_bomb(7))
    tally = bad.parent / "builds.txt"  # a file: the compile runs in a child process (engine/compilebox.py)
    real_build = profile_mod.build

    def counting_build(*a, **kw):
        with open(tally, "a") as fh:
            fh.write("x")
        return real_build(*a, **kw)

    def calls():
        return tally.read_text() if tally.exists() else ""

    monkeypatch.setattr(profile_mod, "build", counting_build)
    # counted: the bad profile's builds, not the warm-up build an earlier in-process
    # `engine validate` of this worker may have asked for (warm_compiles)
    monkeypatch.setitem(profile_mod._WARM, "asked", False)
    with pytest.raises(UserError) as first:
        profile_mod.load_profile(str(bad))
    with pytest.raises(UserError) as second:
        profile_mod.load_profile(str(bad))
    assert str(second.value) == str(first.value)
    assert len(calls()) == 1
    bad.write_text("kind: profile\nname: fixed\nextends: default\n", encoding="utf-8")
    assert profile_mod.load_profile(str(bad)).name == "fixed"
    assert len(calls()) == 2


def test_a_failed_profile_is_read_again_when_a_missing_file_appears(api_env):
    from engine.base.errors import UserError
    from engine.core import profile as profile_mod

    p = write(api_env, "p.yaml", "kind: profile\nname: p\nextends: ./base.yaml\n")
    with pytest.raises(UserError):
        profile_mod.load_profile(str(p))
    write(api_env, "base.yaml", "kind: profile\nname: base\nextends: default\n")
    assert profile_mod.load_profile(str(p)).name == "p"


# ---------------------------------------------------------------- fault 8: one-line errors


def test_profile_nested_100000_deep(cli):
    write(cli.cwd, "deep.yaml", "kind: profile\nname: deep\nx: " + "[" * 100_000 + "\n")
    write(cli.cwd, "in.md", "text\n")
    line = _one_line(cli("compress", "in.md", "--profile", "deep.yaml"))
    assert _file_of(line).endswith("deep.yaml") and ":3:" in line, line
    assert "deep" in line


def test_pattern_timeout_of_100000_digits(cli):
    write(cli.cwd, "digits.yaml", "kind: profile\nname: digits\nextends: default\npattern_timeout_ms: " + "9" * 100_000 + "\n")
    write(cli.cwd, "in.md", "text\n")
    line = _one_line(cli("compress", "in.md", "--profile", "digits.yaml"))
    assert _file_of(line).endswith("digits.yaml") and ":4:" in line, line
    assert "number" in line


def test_dev_zero_is_refused_with_bounded_memory(cli):
    line = _one_line(cli("compress", "/dev/zero", timeout=60))  # reading it all would never end
    assert line.startswith("/dev/zero:") and "not a regular file" in line, line


@pytest.mark.parametrize("args", [("validate", ".engine/profile.yaml"), ("compress", "CLAUDE.md"),
                                  ("stats", "CLAUDE.md"), ("compress", "--profile", ".engine/profile.yaml", "in.md")])
def test_a_fifo_is_refused_at_once_never_waited_on(cli, args):
    """Audit: `validate` and `compress` opened a FIFO and waited forever for a
    writer; `stats` said "no such file or folder".  A file that is not a
    regular one is now refused unread (opened without waiting, then fstat),
    by name; standard input is still `-`."""
    (cli.cwd / ".engine").mkdir()
    os.mkfifo(cli.cwd / ".engine" / "profile.yaml")
    os.mkfifo(cli.cwd / "CLAUDE.md")
    write(cli.cwd, "in.md", "text\n")
    line = _one_line(cli(*args, timeout=30))
    named = ".engine/profile.yaml" if "profile.yaml" in " ".join(args) else "CLAUDE.md"
    assert _file_of(line).endswith(named) and "not a regular file" in line, line
    assert cli("compress", "-", input="Always run the tests.\n").returncode == 0


def test_input_over_the_profile_cap(cli):
    write(cli.cwd, "small.yaml", "kind: profile\nname: small\nextends: default\nmax_input_bytes: 1000\n")
    write(cli.cwd, "in.md", "Always run the tests.\n" * 100)
    line = _one_line(cli("compress", "in.md", "--profile", "small.yaml"))
    assert "1,000" in line and "max_input_bytes" in line, line
    line = _one_line(cli("compress", "-", "--profile", "small.yaml", input="x" * 1001))
    assert line.startswith("<stdin>:"), line


def test_compress_api_refuses_text_over_the_cap(api_env):
    from engine.base.errors import UserError
    from engine.core.profile import load_profile
    from engine.text.pipeline import compress

    profile = load_profile(level="off")
    with pytest.raises(UserError, match="max_input_bytes"):
        compress(profile, "x" * (profile.max_input_bytes + 1))


def test_could_fit(api_env):
    from engine.core.profile import load_profile
    from engine.text.sizes import could_fit

    p = load_profile()
    assert could_fit(p, 8000, 8000)
    assert could_fit(p, int(8000 * p.fit_factor), 8000)
    assert not could_fit(p, int(8000 * p.fit_factor) + 1, 8000)
    assert not could_fit(p, p.max_input_bytes + 1, 10**12)


# ---------------------------------------------------------------- fault 9: decoding, sizes, the cache


def test_nul_byte_after_8_kb(cli):
    (cli.cwd / "nul.md").write_bytes(b"a" * 9000 + b"\x00b\n")
    line = _one_line(cli("compress", "nul.md"))
    assert line.startswith("nul.md:1:9001:") and "NUL" in line, line


@pytest.mark.parametrize("codec", ["utf-32", "utf-32-be"])
def test_utf32_is_named_utf32(cli, codec):
    data = "\ufeffhello\n".encode(codec) if codec == "utf-32-be" else "hello\n".encode(codec)
    (cli.cwd / "u32.md").write_bytes(data)
    line = _one_line(cli("compress", "u32.md"))
    assert "UTF-32" in line and "UTF-16" not in line, line


def test_huge_sparse_profile_is_not_read(cli):
    prof = cli.cwd / "sparse.yaml"
    with open(prof, "wb") as fh:
        fh.write(b"kind: profile\nname: sparse\n# ")
        fh.truncate(1 << 30)
    write(cli.cwd, "in.md", "text\n")
    line = _one_line(cli("compress", "in.md", "--profile", "sparse.yaml", timeout=60))  # 1 GB read: the timeout fails it
    assert _file_of(line).endswith("sparse.yaml") and "max_file_bytes" in line, line


def test_cache_folder_is_private_and_files_0600(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("ENGINE_PROFILE", raising=False)
    monkeypatch.chdir(tmp_path)
    from engine.core import cache
    from engine.core.profile import load_profile

    load_profile(level="off")
    for folder in (tmp_path / "c", tmp_path / "c" / "profiles"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    files = list((tmp_path / "c" / "profiles").iterdir())
    assert files
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    assert cache.folder_is_private()


def test_cache_in_a_folder_others_can_write_is_not_read(tmp_path, monkeypatch):
    """The cache is pickle: a folder others could have written to is never
    read (nor written); the profile is compiled instead."""
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.delenv("ENGINE_PROFILE", raising=False)
    monkeypatch.chdir(tmp_path)
    from engine.core import cache
    from engine.core import profile as profile_mod

    profile_mod.load_profile(level="off")  # a good entry exists
    key = profile_mod.choice().key("profile", "off")
    assert cache.load(key) is not None
    os.chmod(tmp_path / "c" / "profiles", 0o777)
    assert cache.load(key) is None
    assert profile_mod.load_profile(level="off").level == "off"  # still works, compiled
    os.chmod(tmp_path / "c" / "profiles", 0o755)  # only readable by others: ours, closed again
    assert cache.load(key) is not None
    assert stat.S_IMODE((tmp_path / "c" / "profiles").stat().st_mode) == 0o700


def test_cache_of_another_user_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.chdir(tmp_path)
    from engine.core import cache
    from engine.core import profile as profile_mod

    profile_mod.load_profile(level="off")
    key = profile_mod.choice().key("profile", "off")
    real = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real + 1)
    assert cache.load(key) is None


def test_cache_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "c"))
    from engine.core import cache, settings

    limits = dict(settings.get())
    limits["cache"] = {"max_entries": 3}
    monkeypatch.setattr(settings, "_plain", limits)
    for i in range(8):
        cache.store(("profile", f"p{i}", ""), {"n": i}, [])
    pickles = [p for p in (tmp_path / "c" / "profiles").iterdir() if p.suffix == ".pickle"]
    assert len(pickles) == 3
    assert cache.load(("profile", "p7", "")) == {"n": 7}


# ---------------------------------------------------------------- fault 2: built-in patterns have a budget


def test_builtin_patterns_run_under_the_time_budget(cli):
    """A budget too small for the input stops built-in patterns too, with a
    clear error (they used to run without any limit)."""
    write(cli.cwd, "tight.yaml", "kind: profile\nname: tight\nextends: default\npattern_timeout_ms: 1\n")
    (cli.cwd / "big.md").write_text("Use `a.b` in src/x.py, see https://x.org and README.md now. " * 40_000, encoding="utf-8")
    line = _one_line(cli("compress", "big.md", "--profile", "tight.yaml", "--level", "light"))
    assert "time budget" in line and "pattern_timeout_ms" in line, line


def test_a_runaway_word_pattern_is_said_by_validate_and_named_by_compress(cli):
    """Old: validate probed the protect, dictionary and level files but not
    the profile's own word_pattern (rc 0); compress then blamed 'the protect
    categories' and sent the user to validate, which found nothing."""
    text = 'kind: profile\nname: w\nextends: default\nword_pattern: "(a+a+)+y"\n'
    write(cli.cwd, "w.yaml", text)
    r = cli("validate", "w.yaml", timeout=60)
    assert r.returncode == 1, r
    [p] = problems(r)
    assert p.is_in(cli.cwd / "w.yaml", cli.cwd) and (p.line, p.col) == position(text, '"(a+a+)+y"'), r.err
    assert "runs away" in p.msg, p
    (cli.cwd / "a.txt").write_text("a" * 5000 + "\n", encoding="utf-8")
    line = _one_line(cli("compress", "a.txt", "--profile", "w.yaml", timeout=60))
    assert "the word_pattern of profile 'w' ran past the time budget" in line, line


def test_paths_do_not_fire_inside_code(api_env):
    """Token scanners skip opaque regions: nothing inside a code fence is
    scanned for paths, words or numbers (`a.a.a.` in code was the quadratic
    case), while the same tokens outside it are found."""
    from engine.core.profile import load_profile

    code = "src/a.py and README.md never 42"
    text = f"{code}\n\n```\n{code}\n```\n"
    found = load_profile(level="off").protector.scan(text)
    fence = text.index("```")
    inside = sorted({cat for start, _, cat in found if start >= fence})
    outside = sorted({cat for start, _, cat in found if start < fence})
    assert inside == ["fenced_code"], found
    assert {"paths", "negations", "numbers"} <= set(outside), found
