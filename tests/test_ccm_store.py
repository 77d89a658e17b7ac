"""The content cache's store, prune, gc, secrets and concurrency (engine/ccm)."""

import json
import os
import stat
import time

import pytest

import forkrun
from engine.base.errors import UserError
from engine.ccm import config
from engine.ccm.gc import gc
from engine.ccm.keys import parse
from engine.ccm.prune import prune
from engine.ccm.store import Store
from support.ccm import forked_at_once

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "sk-ant-" + "a1B2c3D4e5" * 3


@pytest.fixture(scope="module")
def settings():
    return config.load(config.builtin_path())


@pytest.fixture
def store(settings, tmp_path):
    logs = []
    s = Store(settings, str(tmp_path / "ccm"), log=logs.append)
    s.logs = logs
    return s


@pytest.mark.parametrize("lines", [(1, None), (2, 3)])
def test_a_read_back_a_gc_deletes_midway_still_gives_every_byte(store, monkeypatch, lines):
    """`engine cache show` checks the blob against its key, then streams it.
    Before, a gc deleting the blob between the two made the second pass
    open a file that was gone: "engine: cannot write to <blob path>",
    exit 1, after the check had passed.  Both passes read the file opened
    first now, which a delete does not take away."""
    import io

    data = b"".join(b"line %d\n" % i for i in range(1, 5000))
    key = store.put(data, {"tool": "Bash", "command": "seq"})
    checked = store.verify

    def check_then_gc(key, *args, **kwargs):
        ok = checked(key, *args, **kwargs)
        os.unlink(store.blob_path(key))  # gc, between the check and the read
        return ok

    monkeypatch.setattr(store, "verify", check_then_gc)
    out = io.BytesIO()
    assert store.write_to(key, out, *lines) is True
    assert out.getvalue() == (data if lines == (1, None) else b"line 2\nline 3\n")
    assert not os.path.exists(store.blob_path(key))
    assert store.write_to(key, io.BytesIO()) is False, "once gone, it reads as absent"


def test_round_trip_exact_and_private(store):
    data = bytes(range(256)) * 1000 + b"\xff\xfe no newline"
    key = store.put(data, {"tool": "Bash", "command": "x"}, session="s1")
    assert store.get(key) == data
    meta = store.meta(key)
    assert meta["bytes"] == len(data) and meta["refs"] == 1 and meta["sessions"] == ["s1"]
    for path in (store.blob_path(key), store.meta_path(key), store.audit_path, store.last_key_path):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    for d in (store.root, store.blobs, store.metas):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
    assert store.last_key() == key


def test_torn_or_corrupt_blob_is_missing_with_a_log_line(store):
    key = store.put(b"line\n" * 5000)
    path = store.blob_path(key)
    blob = open(path, "rb").read()
    open(path, "wb").write(blob[: len(blob) // 2])
    assert store.get(key) is None
    assert len(store.logs) == 1 and key in store.logs[0]
    # a valid zstd frame holding other bytes: never returned under this key
    import zstandard

    open(path, "wb").write(zstandard.ZstdCompressor().compress(b"other bytes"))
    assert store.get(key) is None


@pytest.mark.parametrize("bad", ["../../etc/passwd", "abc", "g" * 64, "sha256:" + "0" * 63])
def test_keys_are_validated_before_touching_a_path(store, bad):
    with pytest.raises(UserError):
        parse(bad)
    with pytest.raises(ValueError):
        store.blob_path(bad)


def test_secret_output_is_never_cached_and_commands_are_redacted(store):
    assert store.put(f"export KEY={SECRET}\n".encode() * 1000) is None
    assert store.keys() == []
    key = store.put(b"x" * 5000, {"tool": "Bash", "command": f"curl -H 'x-api-key: {SECRET}' http://h"})
    raw = b"".join(open(os.path.join(d, n), "rb").read() for d in (store.metas,) for n in os.listdir(d))
    raw += open(store.audit_path, "rb").read()
    assert SECRET.encode() not in raw
    assert "[REDACTED]" in store.meta(key)["sources"][0]["command"]


def _age(store, key, days):
    def change(meta):
        meta["last_used"] = meta["created"] = time.time() - days * 86400
        return meta

    store.update_meta(key, change)


def test_prune_compares_sizes_on_disk_on_both_sides(store):
    """Seed fault: its size prune compared compressed sizes on disk with
    uncompressed sizes and deleted entries it had no need to delete."""
    keys = [store.put((b"%d repetitive log line\n" % i) * 60000) for i in range(3)]  # ~1.3 MB each, compresses to KBs
    assert sum(store.meta(k)["bytes"] for k in keys) > 3 * 1024 * 1024
    res = prune(store, max_age_days=None, max_size_mb=1)
    assert res["deleted"] == []
    assert res["bytes_after"] == store.disk_bytes() == sum(os.path.getsize(store.blob_path(k)) for k in keys)


def test_prune_order_unpinned_oldest_first_then_soft_never_hard(store):
    import random

    rnd = random.Random(1)
    keys = {}
    for name, days, level in (("old", 9, "none"), ("new", 1, "none"), ("soft", 20, "soft"), ("hard", 30, "hard")):
        k = store.put(rnd.randbytes(300_000))
        _age(store, k, days)
        if level != "none":
            from engine.ccm.pins import pin_key

            pin_key(store, k, level, "test")
        keys[name] = k
    size = os.path.getsize(store.blob_path(keys["old"]))
    res = prune(store, max_size_mb=(store.disk_bytes() - size) / 1024 / 1024)
    assert res["deleted"] == [keys["old"]]
    res = prune(store, max_size_mb=0)
    assert set(res["deleted"]) == {keys["new"], keys["soft"]}
    assert store.keys() == [keys["hard"]]
    assert res["bytes_after"] == store.disk_bytes()
    res = prune(store, max_age_days=0)
    assert res["deleted"] == []


def test_prune_by_age_and_dry_run(store):
    a, b = store.put(b"a" * 3000), store.put(b"b" * 3000)
    _age(store, a, 40)
    res = prune(store, max_age_days=30, dry_run=True)
    assert res["deleted"] == [a] and a in store.keys()
    assert prune(store, max_age_days=30)["deleted"] == [a]
    assert store.keys() == [b]


def _line(**kw):
    return json.dumps(kw) + "\n"


def test_gc_finds_every_reference(store, tmp_path):
    """Seed fault: its gc read only text blocks, and deleted blobs still
    referenced from a tool_result's string content."""
    keys = [store.put(b"%d\n" % i * 3000) for i in range(6)]
    for k in keys:
        _age(store, k, 1)
    proj = tmp_path / "projects" / "p"
    (proj / "s1" / "subagents").mkdir(parents=True)
    stub = "[CCM_CACHED]\nkey: sha256:{}\n[/CCM_CACHED]".format
    (proj / "s1.jsonl").write_text(
        _line(type="user", message={"content": [{"type": "tool_result", "tool_use_id": "t", "content": stub(keys[0])}]})
        + _line(type="user", message={"content": [{"type": "tool_result", "tool_use_id": "u",
                                                    "content": [{"type": "text", "text": stub(keys[1])}]}]})
        + _line(type="user", toolUseResult={"stdout": stub(keys[2])})
        + _line(type="progress", data={"output": stub(keys[3])}))
    (proj / "s1" / "subagents" / "agent-a1.jsonl").write_text(
        _line(type="user", message={"content": [{"type": "tool_result", "tool_use_id": "v", "content": stub(keys[4])}]}))
    res = gc(store, [str(tmp_path / "projects")], grace_seconds=3600)
    assert res["deleted"] == [keys[5]]
    assert sorted(store.keys()) == sorted(keys[:5])


def test_gc_grace_period_keeps_a_blob_written_during_the_scan(store, tmp_path):
    fresh = store.put(b"fresh\n" * 1000)
    (tmp_path / "t").mkdir()
    assert gc(store, [str(tmp_path / "t")], grace_seconds=3600)["deleted"] == []
    assert fresh in store.keys()


def _write_one(i, root):
    s = Store(config.load(config.builtin_path()), root)
    data = (b"shared output line\n" * 50000) if i % 2 == 0 else (b"own output %d\n" % i) * 50000
    s.put(data, {"tool": "Bash", "command": "cmd %d" % i}, session="s%d" % i)


def test_fifty_parallel_writers(settings, tmp_path):
    """Fifty processes write into one store at once: half the same output."""
    root = str(tmp_path / "ccm")
    assert forked_at_once(50, lambda i: _write_one(i, root)) == [0] * 50
    store = Store(settings, root)
    keys = store.keys()
    assert len(keys) == 26  # one shared + 25 own
    refs = {}
    for k in keys:
        data = store.get(k)
        assert data is not None, "torn blob"
        refs[k] = store.meta(k)["refs"]
    shared = store.get(max(refs, key=refs.get))
    assert shared == b"shared output line\n" * 50000
    assert sorted(refs.values()) == [1] * 25 + [25]
    assert len(store.meta(max(refs, key=refs.get))["sessions"]) == 25
    audit = [json.loads(x) for x in open(store.audit_path)]
    assert len(audit) == 50 and all(a["action"] == "put" for a in audit)
    assert not [n for n in os.listdir(store.blobs) if n.startswith(".tmp-")]


def test_settings_with_unknown_template_field_is_one_line_error(tmp_path):
    text = open(config.builtin_path()).read().replace("bytes: {bytes}\n    lines", "bytes: {size}\n    lines", 1)
    bad = tmp_path / "content_cache.yaml"
    bad.write_text(text)
    run = forkrun.completed(["validate", str(bad)], env=dict(os.environ, PYTHONPATH=REPO, ENGINE_CACHE_DIR=str(tmp_path / "c")))
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "unknown field(s) {size}" in run.stderr and str(bad) in run.stderr


def test_settings_whose_stub_gc_could_not_find_are_refused(tmp_path):
    text = open(config.builtin_path()).read().replace("    key: sha256:{key}\n    path:", "    key: {key}\n    path:", 1)
    bad = tmp_path / "content_cache.yaml"
    bad.write_text(text)
    run = forkrun.completed(["validate", str(bad)], env=dict(os.environ, PYTHONPATH=REPO, ENGINE_CACHE_DIR=str(tmp_path / "c")))
    assert run.returncode == 1 and "must contain sha256:{key}" in run.stderr


@pytest.mark.parametrize("given", ["$HOME/ccm", "ccm-here"])
def test_settings_with_a_relative_folder_are_refused(tmp_path, given):
    """folder: expands ~, not $VARs: '$HOME/ccm' passed validate and was taken
    from the working folder (engine cache stats named '<cwd>/$HOME/ccm'; a
    hook would keep a store in every project)."""
    text = open(config.builtin_path()).read()
    assert '\nfolder: ""\n' in text
    bad = tmp_path / "content_cache.yaml"
    bad.write_text(text.replace('\nfolder: ""\n', f'\nfolder: "{given}"\n'))
    env = dict(os.environ, PYTHONPATH=REPO, ENGINE_CACHE_DIR=str(tmp_path / "c"), ENGINE_CONTENT_CACHE=str(bad))
    line = text[:text.index('\nfolder: ""\n')].count("\n") + 2
    for args in (["validate", str(bad)], ["cache", "stats"]):
        run = forkrun.completed(args, env=env, cwd=str(tmp_path))
        assert run.returncode == 1 and run.stdout == "", run
        [said] = run.stderr.splitlines()
        assert said.endswith(f"content_cache.yaml:{line}:9: folder: {given!r} is relative ($VARs are not expanded); "
                             "start it with ~ or /, or leave it empty for the cache folder's ccm/"), run.stderr
    assert not (tmp_path / given.split("/")[0]).exists()


def test_settings_with_a_relative_gc_transcripts_folder_are_refused(tmp_path):
    """gc.transcripts: a relative folder ('$HOME/t') was searched under the
    working folder, so gc did not see the transcripts it names (and could
    delete the entries they still point to)."""
    text = open(config.builtin_path()).read()
    assert "\n  transcripts: []\n" in text
    bad = tmp_path / "content_cache.yaml"
    bad.write_text(text.replace("\n  transcripts: []\n", '\n  transcripts: [/ok, "$HOME/t"]\n'))
    run = forkrun.completed(["validate", str(bad)], env=dict(os.environ, PYTHONPATH=REPO, ENGINE_CACHE_DIR=str(tmp_path / "c")))
    assert run.returncode == 1, run
    [said] = run.stderr.splitlines()
    assert said.endswith(": gc.transcripts[1]: '$HOME/t' is relative ($VARs are not expanded); start it with ~ or /"), said


def test_a_fifo_in_place_of_the_audit_log_is_not_waited_on(store):
    """A FIFO at audit.jsonl held every put (the audit line's plain open
    waited for a reader): the hook that cached a large output ran to its
    deadline.  The line is a record, not the entry: one log line, and the
    entry is stored and reads back."""
    store.ensure()
    os.mkfifo(store.audit_path)
    data = b"line\n" * 20000
    key = store.put(data, {"tool": "Bash", "command": "x"}, session="s1")
    assert store.get(key) == data
    assert any("audit line of put" in line and "not written" in line for line in store.logs), store.logs


def test_the_audit_log_moves_aside_past_its_size_and_never_grows_for_ever(settings, tmp_path):
    """Audit: audit.jsonl (a line per entry stored, pinned or deleted) grew
    without a bound; gc and prune never trimmed it.  Past
    store.audit_max_bytes it moves to audit.jsonl.1, replacing the one
    before; every entry stays stored and reads back."""
    small = {**settings, "store": {**settings["store"], "audit_max_bytes": 4096}}
    store = Store(small, str(tmp_path / "ccm"), log=[].append)
    keys = [store.put(f"output {i}\n".encode() * 400, {"tool": "Bash", "command": f"cmd {i}"}, session="s1")
            for i in range(120)]
    assert os.path.getsize(store.audit_path) <= 4096 + 1000 and os.path.getsize(store.audit_path + ".1") > 4096
    assert stat.S_IMODE(os.stat(store.audit_path + ".1").st_mode) == 0o600
    assert all(store.get(k) == f"output {i}\n".encode() * 400 for i, k in enumerate(keys))


def test_a_large_output_is_scanned_for_secrets_a_chunk_at_a_time(store, settings):
    """A hook's tool output is scanned for secrets as `engine cache run`'s
    stream is: a chunk (with the overlap before it) at a time, holding one
    chunk's words, not the output's: 8.7 MB of a build log took 111 MB
    scanned whole (a 30 MB output, 400 MB in a hook).  A secret across a
    chunk boundary is still found."""
    import tracemalloc

    data = b"".join(b"line %06d of the build log\n" % i for i in range(300000))
    store.put(b"warm: the redactor is built once")
    tracemalloc.start()
    try:
        assert store.put(data, {"tool": "Bash", "command": "make"}) is not None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(data), f"peak {peak:,} bytes to store {len(data):,}"
    at = 2 * settings["store"]["chunk_bytes"] - len(SECRET) // 2
    assert store.put(data[:at] + b" " + SECRET.encode() + b"\n" + data[at:]) is None
