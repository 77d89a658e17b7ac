"""Issue 23, item 5: the content cache's scope.  A project lists and reads
only its own cached outputs (`--all` is the user's opt-in), keys are keyed
hashes under a per-user secret (a guessed content says nothing), a stub
names only its own key, and entries stored under the old plain-sha256 keys
still read back.  Each bug-class test fails on b085972."""

import hashlib
import json
import os
import stat

import pytest
import zstandard

from engine.ccm import config
from engine.ccm.store import Store
from engine.ccm.stub import render
from support.ccm import forked_at_once


@pytest.fixture(scope="module")
def settings():
    return config.load(config.builtin_path())


@pytest.fixture
def world(tmp_path):
    """Two repositories side by side, a subfolder in the first, one cache."""
    alpha, beta = tmp_path / "alpha-repo", tmp_path / "beta-repo"
    for repo in (alpha, beta):
        (repo / ".git").mkdir(parents=True)
    (alpha / "src" / "deep").mkdir(parents=True)
    env = {"ENGINE_CACHE_DIR": tmp_path / "cache", "ENGINE_STATE_DIR": tmp_path / "state",
           "CLAUDE_CONFIG_DIR": tmp_path / "claude", "HOME": tmp_path / "home"}
    return type("W", (), {"alpha": alpha, "beta": beta, "env": env, "tmp": tmp_path})


def _stored_key(stub_text):
    return stub_text.split("key: sha256:", 1)[1].split()[0]


def test_another_projects_outputs_are_neither_listed_nor_shown(cli, world):
    """b085972: from project B, `cache list` named project A's command and
    `cache show` printed A's output."""
    command = "seq 7 3507 | sed 's/^/alpha-ledger-row /'"
    ran = cli("cache", "run", "--cwd", world.alpha, "--", command, cwd=world.alpha, env=world.env)
    assert ran.returncode == 0 and ran.out.startswith("[CCM_CACHED]"), ran
    key = _stored_key(ran.out)
    expected = "".join(f"alpha-ledger-row {i}\n" for i in range(7, 3508)).encode()

    listed = cli("cache", "list", cwd=world.beta, env=world.env)
    assert listed.returncode == 0 and key not in listed.out and "alpha-ledger" not in listed.out, listed
    as_json = cli("cache", "list", "--json", cwd=world.beta, env=world.env)
    assert json.loads(as_json.out) == []
    shown = cli("cache", "show", key, cwd=world.beta, env=world.env)
    assert shown.returncode == 1 and shown.out_bytes == b"" and "--all" in shown.err, shown
    assert cli("cache", "pin", key, "--level", "hard", cwd=world.beta, env=world.env).returncode == 1

    # its own project reads it back, from any folder inside it
    assert cli("cache", "show", key, cwd=world.alpha / "src" / "deep", env=world.env).out_bytes == expected
    assert key in cli("cache", "list", cwd=world.alpha / "src", env=world.env).out
    # every project's, when the user asks
    everything = cli("cache", "list", "--all", cwd=world.beta, env=world.env)
    assert key in everything.out and str(world.alpha) in everything.out
    assert cli("cache", "show", "--all", key, cwd=world.beta, env=world.env).out_bytes == expected


def test_keys_are_keyed_by_a_per_user_secret_and_the_project(settings, tmp_path, monkeypatch):
    """b085972: a key was the plain sha256 of the content, so anyone who
    guessed a content could compute its key and confirm it was cached."""
    data = b"".join(b"build step %05d ok\n" % i for i in range(900))
    alpha, beta = {"tool": "Bash", "cwd": str(tmp_path / "alpha")}, {"tool": "Bash", "cwd": str(tmp_path / "beta")}
    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "user-one"))
    one = Store(settings, str(tmp_path / "c1"), log=lambda m: None)
    in_alpha = one.put(data, alpha)
    assert in_alpha != hashlib.sha256(data).hexdigest()
    assert one.put(data, beta) not in (in_alpha, None)  # two projects: two entries
    monkeypatch.setenv("ENGINE_STATE_DIR", str(tmp_path / "user-two"))
    assert Store(settings, str(tmp_path / "c2"), log=lambda m: None).put(data, alpha) != in_alpha  # another user
    assert one.get(in_alpha) == data
    meta = one.meta(in_alpha)
    assert meta["origin"] == {"project": str(tmp_path / "alpha")} and meta["key_scheme"] != "sha256"


def test_the_secret_is_made_once_private_and_shared_by_processes(settings, tmp_path, monkeypatch):
    """Twelve processes making the secret at once end with one, 0600 in a
    0700 folder of the state folder, and agree on every key."""
    state = tmp_path / "fresh" / "state"
    monkeypatch.setenv("ENGINE_STATE_DIR", str(state))
    out = tmp_path / "keys"
    out.mkdir()

    def work(i):
        s = Store(settings, str(tmp_path / "cache"), log=lambda m: None)
        (out / str(i)).write_text(s.put(b"same twelve-way output\n" * 200, project=str(tmp_path)))

    assert forked_at_once(12, work) == [0] * 12
    assert len({(out / str(i)).read_text() for i in range(12)}) == 1
    secret = state / "content-cache.key"
    assert stat.S_IMODE(os.stat(secret).st_mode) == 0o600 and os.path.getsize(secret) == 32
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o700
    assert sorted(os.listdir(state)) == ["content-cache.key"]  # no temporary left


def test_a_secret_that_is_a_link_is_refused_in_one_line(cli, world):
    world.env["ENGINE_STATE_DIR"].mkdir(parents=True)
    (world.tmp / "elsewhere").write_bytes(b"k" * 32)
    os.symlink(world.tmp / "elsewhere", world.env["ENGINE_STATE_DIR"] / "content-cache.key")
    ran = cli("cache", "run", "--cwd", world.alpha, "--", "seq 1 3000", cwd=world.alpha, env=world.env)
    # the output is never lost: shown as it is, with one line saying why it was not cached
    assert ran.returncode == 0 and ran.out_bytes == "".join(f"{i}\n" for i in range(1, 3001)).encode()
    assert "content-cache.key" in ran.err and len(ran.err.strip().splitlines()) == 1, ran


def test_a_stub_names_only_its_own_key(settings, tmp_path):
    """b085972: a key inside the command was copied into the stub, which
    then named (and kept alive, for gc) an entry that is not its own."""
    from engine.ccm.stub import keys_in

    store = Store(settings, str(tmp_path / "c"), log=lambda m: None)
    other = "9f" * 32
    key = store.put(b"z" * 4000, {"tool": "Bash", "cwd": str(tmp_path)})
    stub = render(settings, "template", key, store, store.meta(key), "0",
                  f"diff <(engine cache show sha256:{other}) out.txt")
    assert keys_in(stub.encode()) == {key}
    assert "sha256:9f9f9f9f9f9f..." in stub


def _legacy_entry(store, data, cwd):
    """An entry as b085972 wrote it: named by the plain sha256, no origin."""
    key = hashlib.sha256(data).hexdigest()
    store.ensure()
    with open(store.blob_path(key), "wb") as fh:
        fh.write(zstandard.ZstdCompressor().compress(data))
    meta = {"key": key, "bytes": len(data), "lines": data.count(b"\n"), "created": 1.0, "last_used": 1.0,
            "pin": {"level": "none", "reason": ""}, "refs": 1, "sessions": ["s-old"], "names": [],
            "sources": [{"tool": "Bash", "command": "make report", "cwd": str(cwd), "at": 1.0}]}
    with open(store.meta_path(key), "w") as fh:
        json.dump(meta, fh)
    return key


def test_an_entry_under_an_old_key_still_reads_back_from_its_project(settings, cli, world):
    """Backward compatibility: a stub in an old transcript names a plain
    sha256; its entry reads back from the project it was made in (its
    recorded cwd), and from elsewhere only with --all."""
    store = Store(settings, str(world.tmp / "cache" / "ccm"), log=lambda m: None)
    data = b"".join(b"legacy line %d\n" % i for i in range(3100))
    key = _legacy_entry(store, data, world.alpha / "src")
    assert store.get(key) == data
    assert cli("cache", "show", key, cwd=world.alpha, env=world.env).out_bytes == data
    assert key in cli("cache", "list", cwd=world.alpha, env=world.env).out
    assert cli("cache", "show", key, cwd=world.beta, env=world.env).returncode == 1
    assert cli("cache", "show", "--all", key, cwd=world.beta, env=world.env).out_bytes == data


def test_folders_under_a_home_kept_in_git_are_not_one_project(cli, world):
    """With ~/.git (dotfiles), every folder below the home without a .git of
    its own had the home as its project: from ~/notes-b, `cache list` named
    ~/notes-a's command and `cache show` printed its output."""
    home = world.tmp / "home"
    (home / ".git").mkdir(parents=True)
    a, b = home / "notes-a", home / "notes-b"
    a.mkdir(), b.mkdir()
    ran = cli("cache", "run", "--cwd", a, "--", "seq 1 3000 | sed 's/^/notes-a-row /'", cwd=a, env=world.env)
    assert ran.returncode == 0 and ran.out.startswith("[CCM_CACHED]"), ran
    key = _stored_key(ran.out)
    assert key not in cli("cache", "list", cwd=b, env=world.env).out
    assert cli("cache", "show", key, cwd=b, env=world.env).out_bytes == b""
    assert cli("cache", "show", key, cwd=home, env=world.env).out_bytes == b""
    assert b"notes-a-row 3000" in cli("cache", "show", key, cwd=a, env=world.env).out_bytes


def test_show_of_an_output_gc_removed_says_what_removes_outputs_and_what_to_do(cli, world):
    """`engine cache show KEY` said "absent" alike for an output gc had
    removed and one never stored, with nothing on what removes outputs,
    what keeps them longer or what to do.  It names gc, prune and the size
    bound with the settings in force, the file to raise them in, and that
    running the command again gets the output; the message is the same for
    a key never stored and for another project's output (no project learns
    whether another's existed), and the exit status stays 1."""
    import time

    ran = cli("cache", "run", "--cwd", world.alpha, "--", "seq 1 3000 | sed 's/^/gone-row /'", cwd=world.alpha,
              env=world.env)
    key = _stored_key(ran.out)
    meta = world.tmp / "cache" / "ccm" / "meta" / f"{key}.json"
    aged = json.loads(meta.read_text())
    aged["created"] = aged["last_used"] = time.time() - 7200  # past gc.grace_seconds, named by no transcript
    meta.write_text(json.dumps(aged))
    gc = cli("cache", "gc", cwd=world.alpha, env=world.env)
    assert gc.returncode == 0 and "deleted 1 " in gc.out, gc

    def told(shown, k):
        assert shown.returncode == 1 and shown.out_bytes == b"", shown
        return shown.err.replace(k, "KEY")

    gone = told(cli("cache", "show", key, cwd=world.alpha, env=world.env), key)
    for words in ("engine cache gc", "gc.grace_seconds (3600 s)", "engine cache prune", "prune.max_age_days: 30",
                  "size bound (store.max_size_mb: 2048)", "run its command again",
                  "rules-engine/content_cache.yaml, or pin", "engine cache pin KEY --level hard"):
        assert words in gone, gone
    never = "ab" * 32
    assert told(cli("cache", "show", never, cwd=world.alpha, env=world.env), never) == gone
    other = cli("cache", "run", "--cwd", world.beta, "--", "seq 1 3000 | sed 's/^/beta-row /'", cwd=world.beta,
                env=world.env)
    theirs = _stored_key(other.out)
    assert told(cli("cache", "show", theirs, cwd=world.alpha, env=world.env), theirs) == gone
    # `engine cache stub KEY` (what Gemini CLI's tail call runs) says the same, in its one scope
    stub = told(cli("cache", "stub", key, cwd=world.alpha, env=world.env), key)
    assert stub == gone.replace(" (--all: every project's)", ""), stub
    assert told(cli("cache", "stub", theirs, cwd=world.alpha, env=world.env), theirs) == stub
