"""Issue 23, item 6: nothing lost.  The size bound, prune and gc never
remove an entry a transcript names (one reference scan, shared), the grace
period runs from the last store or read, a deletion is decided again under
the key's lock (real processes), and a blob whose writer was killed before
its sidecar (kill -9) is collected once past the grace period.  Each
bug-class test fails on b085972."""

import copy
import json
import os
import signal
import time

import pytest

from engine.ccm import config
from engine.ccm import store as store_module
from engine.ccm.gc import gc
from engine.ccm.prune import prune
from engine.ccm.store import Store

HOUR = 3600


@pytest.fixture(scope="module")
def builtin():
    return config.load(config.builtin_path())


@pytest.fixture
def settings(builtin, tmp_path, monkeypatch):
    """The built-in settings, the agent's folder in the test's own tree."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return copy.deepcopy(builtin)


def _store(settings, tmp_path):
    return Store(settings, str(tmp_path / "ccm"), log=lambda m: None)


def _transcript(tmp_path, name, keys):
    """A session transcript (in the agent's own folder) whose tool results are stubs of `keys`."""
    folder = tmp_path / "claude" / "projects" / "-work-ledger"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    with open(path, "a") as fh:
        for i, key in enumerate(keys):
            block = {"type": "tool_result", "tool_use_id": f"t{i}", "content": f"[CCM_CACHED]\nkey: sha256:{key}\n"}
            fh.write(json.dumps({"type": "user", "message": {"content": [block]}}) + "\n")
    return path


def _age(store, key, seconds):
    def change(meta):
        meta["created"] = meta["last_used"] = time.time() - seconds
        return meta

    store.update_meta(key, change)


def _blob(i, size=6000):
    return os.urandom(size // 2).hex().encode()[:size - 8] + b"-%06d\n" % i


def test_the_size_bound_never_evicts_what_a_live_sessions_transcript_names(settings, tmp_path):
    """b085972: the bound evicted a blob whose stub the live session still
    held (1 stub of 4 no longer read back)."""
    settings["store"]["max_size_mb"] = 10_000 / (1024 * 1024)  # room for about three of these (3 KB on disk each)
    settings["gc"]["grace_seconds"] = 0  # the transcript alone keeps them here
    store = _store(settings, tmp_path)
    held = {}
    for i in range(5):
        data = _blob(i)
        key = store.put(data, {"tool": "Bash", "command": f"step {i}"}, session="live")
        held[key] = data
        _transcript(tmp_path, "live-session", [key])  # the agent writes the stub right after
    for i in range(5, 9):
        store.put(_blob(i), {"tool": "Bash"}, session="other")  # writes that push it over the bound
    assert all(store.get(k) == v for k, v in held.items())
    assert store.disk_bytes() > 10_000  # over the bound rather than a stub that no longer reads back
    assert len(store.keys()) == 6  # what nothing names went, but the last one written


def test_prune_keeps_named_and_recent_entries(settings, tmp_path):
    """b085972: prune --max-size-mb 0 deleted every unpinned entry, named
    by a transcript or just stored."""
    store = _store(settings, tmp_path)
    named, recent, old = (store.put(_blob(i), {"tool": "Read"}) for i in (21, 22, 23))
    _age(store, named, 5 * HOUR)
    _age(store, old, 5 * HOUR)
    _transcript(tmp_path, "s-prune", [named])
    dry = prune(store, max_size_mb=0, dry_run=True)
    assert dry["deleted"] == [old]
    assert prune(store, max_size_mb=0)["deleted"] == [old]
    assert store.get(named) is not None and store.get(recent) is not None and store.get(old) is None


def test_grace_runs_from_the_last_store_or_read(settings, tmp_path, cli):
    """b085972: gc counted the grace period from `created`: an entry made
    long ago and stored again (or read) a moment ago was deleted."""
    store = _store(settings, tmp_path)
    data = b"\n".join(b"audit row %d" % i for i in range(700))
    again, read, idle = store.put(data), store.put(data + b"!"), store.put(data + b"?")
    for key in (again, read, idle):
        _age(store, key, 3 * HOUR)
    assert store.put(data) == again  # a hook stores the same output again
    store.touch(read)  # `engine cache show` read it
    res = gc(store, [str(tmp_path / "no-transcripts")], grace_seconds=HOUR)
    assert res["deleted"] == [idle]
    assert store.get(again) == data and store.get(read) == data + b"!"


def test_a_store_during_gcs_scan_keeps_the_entry(settings, tmp_path):
    """b085972: gc decided from what it read before searching the
    transcripts (which takes long), then deleted an entry a hook had stored
    again meanwhile.  Here gc is a real process held at the start of its
    search (its folder walk waits for this process) while this process
    stores the entry again."""
    store = _store(settings, tmp_path)
    data = b"".join(b"nightly export chunk %04d\n" % i for i in range(400))
    key = store.put(data, {"tool": "Bash", "command": "export --all"})
    _age(store, key, 2 * HOUR)
    (tmp_path / "transcripts").mkdir()
    in_scan_r, in_scan_w = os.pipe()
    go_r, go_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the gc process
        code = 1
        try:
            real_walk = os.walk

            def held_walk(*args, **kw):
                os.write(in_scan_w, b"s")
                os.read(go_r, 1)
                return real_walk(*args, **kw)

            os.walk = held_walk
            res = gc(Store(settings, store.root, log=lambda m: None), [str(tmp_path / "transcripts")],
                     grace_seconds=HOUR)
            os.write(done_w, json.dumps(res["deleted"]).encode())
            code = 0
        finally:
            os._exit(code)
    for fd in (in_scan_w, go_r, done_w):
        os.close(fd)
    try:
        assert os.read(in_scan_r, 1) == b"s"  # gc has listed the entries and is searching
        assert store.put(data, {"tool": "Bash", "command": "export --all"}) == key  # stored again
    finally:
        os.write(go_w, b"g")
        deleted = json.loads(os.read(done_r, 1 << 16) or b"null")
        for fd in (in_scan_r, go_w, done_r):
            os.close(fd)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert deleted == [] and store.get(key) == data


def test_a_fifo_among_the_transcripts_does_not_hold_gc(settings, tmp_path, cli):
    """b085972: gc opened a FIFO named like a transcript and waited forever."""
    folder = tmp_path / "transcripts"
    folder.mkdir()
    os.mkfifo(folder / "stuck.jsonl")
    ran = cli("cache", "gc", "--transcripts", folder, env={"ENGINE_CACHE_DIR": tmp_path / "c"}, timeout=30)
    assert ran.returncode == 0 and "deleted 0 unreferenced" in ran.out, ran


def test_kill_9_between_a_blob_and_its_sidecar_leaves_an_orphan_that_is_collected(settings, tmp_path):
    """b085972: a writer killed after its blob was renamed into place and
    before its sidecar was written left a blob gc and prune never saw."""
    store = _store(settings, tmp_path)
    data = os.urandom(300_000)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the writer: killed as it is about to write the sidecar
        real = store_module._atomic_write

        def stalled(path, payload, sync=True):
            if path.endswith(".json") and os.sep + "meta" + os.sep in path:
                os.write(ready_w, b"x")
                time.sleep(60)
            real(path, payload, sync)

        store_module._atomic_write = stalled
        try:
            Store(settings, store.root, log=lambda m: None).put(data, {"tool": "Bash"})
        finally:
            os._exit(1)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"x"
    os.kill(pid, signal.SIGKILL)  # the writer this test started
    os.waitpid(pid, 0)
    os.close(ready_r)
    blobs = [n for n in os.listdir(store.blobs) if n.endswith(".zst")]
    assert len(blobs) == 1 and store.keys() == []  # an orphan: a blob, no sidecar
    orphan = os.path.join(store.blobs, blobs[0])
    empty = str(tmp_path / "none")
    assert gc(store, [empty], grace_seconds=HOUR)["freed_bytes"] == 0 and os.path.exists(orphan)  # young: kept
    past = time.time() - 2 * HOUR
    os.utime(orphan, (past, past))
    named = blobs[0][:-4]
    _transcript(tmp_path, "names-the-orphan", [named])
    assert prune(store, max_size_mb=0)["bytes_after"] > 0 and os.path.exists(orphan)  # named: kept
    os.unlink(tmp_path / "claude" / "projects" / "-work-ledger" / "names-the-orphan.jsonl")
    dry = gc(store, [empty], grace_seconds=HOUR, dry_run=True)
    assert dry["freed_bytes"] == os.path.getsize(orphan) and os.path.exists(orphan)
    assert gc(store, [empty], grace_seconds=HOUR)["freed_bytes"] == dry["freed_bytes"]
    assert os.listdir(store.blobs) == []


# -- the one reference scan ------------------------------------------------------

def test_the_reference_scan_reads_only_what_was_appended_and_rereads_a_changed_file(settings, tmp_path, monkeypatch):
    from engine.ccm import refs

    monkeypatch.setattr(refs, "CHUNK", 4096)
    store = _store(settings, tmp_path)
    folder = tmp_path / "t"
    folder.mkdir()
    first, second, third, fourth = ("a1" * 32), ("b2" * 32), ("c3" * 32), ("d4" * 32)
    path = folder / "s.jsonl"
    path.write_bytes(b"x" * (4096 - 30) + f'"sha256:{first}"\n'.encode())  # across the first chunk's end
    assert refs.referenced(store, [str(folder)], incremental=True) == {first}
    starts = []
    with open(path, "ab") as fh:
        fh.write(b"y" * 10_000 + f"sha256:{second}\n".encode())
    monkeypatch.setattr(refs, "_probe", _spy(refs._probe, starts))
    assert refs.referenced(store, [str(folder)], incremental=True) == {first, second}
    assert min(s for s in starts if s > 0) >= 4096 - 30 - refs.PROBE  # the first part was not read again
    index = json.loads(open(os.path.join(store.root, "refs.json")).read())["files"][str(path)]
    assert index["read"] == os.path.getsize(path)
    # changed in place at its start: the same file no more, read whole again
    with open(path, "r+b") as fh:
        fh.write(f"sha256:{third}".encode())
    assert refs.referenced(store, [str(folder)], incremental=True) == {first, second, third}
    # changed in place in its middle: gc and prune read every file whole
    body = path.read_bytes().replace(first.encode(), fourth.encode())
    with open(path, "r+b") as fh:
        fh.write(body)
    assert refs.referenced(store, [str(folder)]) == {second, third, fourth}
    os.unlink(path)
    assert refs.referenced(store, [str(folder)], incremental=True) == set()


def _spy(function, calls):
    def spied(fh, start, end):
        calls.append(start)
        return function(fh, start, end)

    return spied


def test_a_bound_whose_scan_cannot_end_in_time_deletes_nothing(settings, tmp_path):
    settings["store"]["max_size_mb"] = 1_000 / (1024 * 1024)
    settings["gc"]["grace_seconds"] = 0
    logs = []
    store = Store(settings, str(tmp_path / "ccm"), log=logs.append)
    keys = [store.put(_blob(i), sync=False) for i in range(3)]
    _transcript(tmp_path, "some-session", ["e5" * 32])
    assert store.bound(deadline_seconds=-1) == [] and sorted(store.keys()) == sorted(keys)
    assert "size bound deferred" in logs[-1]
    assert len(store.bound(keep={keys[0]})) == 2  # a scan with time: the bound applies
