"""The content cache's bounds (issue 15, findings 4 and 5): output stored in
bounded memory (chunks), temporary files a killed writer leaves counted and
cleaned, a size bound after each write with pins respected, and stubs whose
read-back command names the engine by absolute path."""

import copy
import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from engine.ccm import config, runner
from engine.ccm.gc import gc
from engine.ccm.prune import prune
from engine.ccm.selfcmd import engine_shell
from engine.ccm.store import Store

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "sk-ant-" + "a1B2c3D4e5" * 3
CHUNK = 4096


@pytest.fixture(scope="module")
def builtin():
    return config.load(config.builtin_path())


@pytest.fixture
def settings(builtin):
    s = copy.deepcopy(builtin)
    s["store"]["chunk_bytes"] = CHUNK
    s["store"]["secret_overlap_bytes"] = 256
    return s


@pytest.fixture
def store(settings, tmp_path):
    return Store(settings, str(tmp_path / "ccm"), log=lambda m: None)


class Chunked(io.RawIOBase):
    """A stream that fails when asked for more than one chunk at a time (a
    whole read, read(-1) or read(None), included)."""

    def __init__(self, data, limit):
        self.data, self.pos, self.limit, self.reads = data, 0, limit, 0

    def readable(self):
        return True

    def read(self, n=-1):
        assert n is not None and 0 < n <= self.limit, f"read({n}) of a stream: memory would not stay bounded"
        self.reads += 1
        out = self.data[self.pos:self.pos + n]
        self.pos += len(out)
        return out


def _data(nbytes):
    lines, i, size = [], 0, 0
    while size < nbytes:
        lines.append(f"line {i} of a long build log {'x' * (i % 97)}\n".encode())
        size += len(lines[-1])
        i += 1
    return b"".join(lines) + b"last line without newline"


# -- streaming ---------------------------------------------------------------

def test_put_stream_reads_in_chunks_and_round_trips(store):
    """Old code had no stream API: a Store put needed the whole output in memory."""
    # 1 MB: 256 chunks of CHUNK, each read checked by Chunked (the store has
    # no bound of its own on the size, only the chunk; more chunks would be
    # more of the same read)
    data = _data(1024 * 1024)
    stream = Chunked(data, CHUNK)
    key = store.put_stream(stream, {"tool": "Bash", "command": "make"})
    assert stream.reads > 100
    assert store.get(key) == data
    meta = store.meta(key)
    assert meta["bytes"] == len(data) and meta["lines"] == data.count(b"\n") + 1
    assert not [n for n in os.listdir(store.blobs) if n.startswith(".tmp-")]
    # the same bytes again: one blob, two references
    assert store.put_stream(Chunked(data, CHUNK)) == key and store.meta(key)["refs"] == 2


def test_put_stream_sees_a_secret_across_a_chunk_boundary(store):
    data = b"a" * (CHUNK - 10) + f" {SECRET} ".encode() + b"b" * 10000
    assert store.put_stream(Chunked(data, CHUNK)) is None
    assert store.keys() == [] and os.listdir(store.blobs) == []


def test_put_stream_lists_keys_a_blob_names_across_chunks(store):
    named = "ab" * 32
    data = b"c" * (CHUNK - 20) + f"key: sha256:{named}\n".encode() + b"d" * 5000
    key = store.put_stream(Chunked(data, CHUNK))
    assert store.meta(key)["names"] == [named]


def test_write_to_streams_line_ranges_and_refuses_a_damaged_blob(store):
    """cache show --lines over a blob of many chunks, lines crossing chunk ends."""
    data = _data(200_000)
    key = store.put(data)
    lines = data.splitlines(keepends=True)
    for first, last in ((1, None), (1, 1), (3, 7), (1000, 1400), (len(lines), None), (len(lines) + 5, None)):
        out = io.BytesIO()
        assert store.write_to(key, out, first, last)
        assert out.getvalue() == b"".join(lines[first - 1:last]), (first, last)
    blob = open(store.blob_path(key), "rb").read()
    open(store.blob_path(key), "wb").write(blob[: len(blob) // 2])
    out = io.BytesIO()
    assert not store.write_to(key, out) and out.getvalue() == b""


def test_cache_run_never_reads_an_output_whole(settings, tmp_path, monkeypatch):
    """Old code read each output file whole (1 MB reads joined) before
    deciding: every read of the output files must be at most one chunk."""
    settings["folder"] = str(tmp_path / "ccm")
    real = runner.tempfile.TemporaryFile
    files = []

    class Guarded:
        def __init__(self, fh):
            self.fh = fh

        def read(self, n=-1):
            assert n is not None and 0 < n <= CHUNK, f"read({n}) of the output file"
            return self.fh.read(n)

        def __getattr__(self, name):
            return getattr(self.fh, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    def guarded(*a, **kw):
        files.append(Guarded(real(*a, **kw)))
        return files[-1]

    monkeypatch.setattr(runner.tempfile, "TemporaryFile", guarded)
    out, err = io.BytesIO(), io.BytesIO()
    # 100,000 lines (589 KB): 144 chunks of CHUNK, far over the Bash
    # threshold; every read is checked by Guarded, whatever the size
    rc = runner.run("seq 1 100000; echo small >&2", cwd=str(tmp_path), settings=settings, out=out, err=err)
    assert rc == 0 and files
    assert out.getvalue().startswith(b"[CCM_CACHED]") and err.getvalue() == b"small\n"
    key = out.getvalue().decode().split("key: sha256:")[1].split()[0]
    assert Store(settings).get(key) == "".join(f"{i}\n" for i in range(1, 100001)).encode()


# -- temporary files a killed writer leaves ------------------------------------

def _env(tmp_path, settings_file=None):
    env = dict(os.environ, HOME=str(tmp_path / "home"), PYTHONPATH=REPO, ENGINE_CACHE_DIR=str(tmp_path / "cache"),
               ENGINE_STATE_DIR=str(tmp_path / "state"), XDG_CONFIG_HOME=str(tmp_path / "xdg"),
               XDG_CACHE_HOME=str(tmp_path / "xdgc"), CLAUDE_CONFIG_DIR=str(tmp_path / "cfg"))
    if settings_file:
        env["ENGINE_CONTENT_CACHE"] = str(settings_file)
    return env


def _engine(tmp_path, *args, env=None):
    r = subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, timeout=120,
                       env=env or _env(tmp_path), cwd=str(tmp_path))
    assert "Traceback" not in r.stderr.decode(), r.stderr
    return r


@pytest.mark.parametrize("args", [
    ("prune", "--max-size-mb", "1e400"),  # was: OverflowError traceback
    ("prune", "--max-size-mb", "nan"),  # was: ValueError traceback
    ("prune", "--max-age-days", "nan"),  # was: 'would delete 0 entries', exit 0
    ("prune", "--max-age-days=-1"),
    ("gc", "--grace-seconds", "inf"),
], ids=["size-1e400", "size-nan", "age-nan", "age-negative", "grace-inf"])
def test_a_prune_or_gc_bound_that_is_no_finite_number_is_refused(tmp_path, args):
    """The schema asks the settings' bounds for numbers of 0 or more; the
    options that stand in for them took whatever float() takes."""
    r = subprocess.run([sys.executable, "-m", "engine.cli", "cache", *args, "--dry-run"], capture_output=True,
                       timeout=120, env=_env(tmp_path), cwd=str(tmp_path))
    option, value = args[1].split("=") if "=" in args[1] else args[1:]
    assert r.returncode == 1 and r.stdout == b"", r
    assert r.stderr.decode().splitlines() == [
        f"engine: argument {option}: {value!r} is not a number of 0 or more; give one, e.g. 30 "
        f"(see `engine cache {args[0]} --help`)"], r.stderr


def _slow_settings(tmp_path):
    """Settings under which storing a few MB takes seconds (tiny chunks, the
    slowest zstd level): a kill lands while the store writes."""
    text = open(config.builtin_path(), encoding="utf-8").read()
    text = text.replace("zstd_level: 1\n", "zstd_level: 22\n").replace("chunk_bytes: 1048576", "chunk_bytes: 4096")
    text = text.replace("secret_overlap_bytes: 65536", "secret_overlap_bytes: 128")
    path = tmp_path / "content_cache.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _temps(blobs):
    return sorted(n for n in os.listdir(blobs) if n.startswith(".tmp-")) if os.path.isdir(blobs) else []


def test_kill_9_of_cache_run_mid_store_leaves_temp_files_stats_count_and_prune_gc_clean(tmp_path):
    """Old code: the `.tmp-*` files a killed writer leaves were seen by
    neither stats nor prune nor gc, and stayed forever."""
    env = _env(tmp_path, _slow_settings(tmp_path))
    blobs = tmp_path / "cache" / "ccm" / "blobs"
    # 6 MB of output that compresses slowly; the command itself is quick
    producer = "head -c 4500000 /dev/urandom | base64"
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "cache", "run", "--cwd", str(tmp_path), "--", producer],
                            env=env, cwd=str(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not _temps(blobs) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        assert _temps(blobs), "the store never started (or ended before it could be seen)"
        time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)  # the process this test started
    finally:
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    left = _temps(blobs)
    assert left and not [n for n in os.listdir(blobs) if n.endswith(".zst")]  # no blob: the store never finished
    size = sum(os.path.getsize(blobs / n) for n in left)

    stats = json.loads(_engine(tmp_path, "cache", "stats", "--json", env=env).stdout)
    assert stats["temp_files"] == len(left) and stats["temp_bytes"] == size

    # younger than the grace period: could be a live writer's, kept
    assert "0 temporary file(s)" in _engine(tmp_path, "cache", "prune", env=env).stdout.decode()
    assert _temps(blobs) == left
    old = time.time() - 3600
    for n in left:
        os.utime(blobs / n, (old, old))
    (tmp_path / "none").mkdir(exist_ok=True)  # a folder of no transcripts (a missing one is an error)
    dry = _engine(tmp_path, "cache", "gc", "--dry-run", "--transcripts", str(tmp_path / "none"), env=env).stdout.decode()
    assert f"{size} bytes would be freed" in dry and _temps(blobs) == left
    out = _engine(tmp_path, "cache", "gc", "--transcripts", str(tmp_path / "none"), env=env).stdout.decode()
    assert f"{len(left)} temporary file(s); {size} bytes freed" in out
    assert _temps(blobs) == []
    assert json.loads(_engine(tmp_path, "cache", "stats", "--json", env=env).stdout)["temp_bytes"] == 0


def test_prune_removes_old_temp_files_and_keeps_young_ones(store):
    store.put(b"x" * 5000)
    old_tmp, young_tmp = os.path.join(store.blobs, ".tmp-old"), os.path.join(store.metas, ".tmp-young")
    for p in (old_tmp, young_tmp):
        with open(p, "wb") as fh:
            fh.write(b"z" * 1234)
    past = time.time() - store.settings["store"]["temp_grace_seconds"] - 10
    os.utime(old_tmp, (past, past))
    res = prune(store)
    assert res["temp_files"] == 1 and res["temp_bytes"] == 1234
    assert not os.path.exists(old_tmp) and os.path.exists(young_tmp)
    res = gc(store, [], grace_seconds=0, temp_grace_seconds=0)
    assert not os.path.exists(young_tmp) and res["temp_files"] == 1


# -- the size bound ------------------------------------------------------------

def test_size_bound_applied_after_each_write_pins_respected(settings, tmp_path):
    """Old code: no bound; the cache grew until the user ran prune."""
    settings["store"]["max_size_mb"] = 30_000 / (1024 * 1024)  # about 30 KB
    settings["gc"]["grace_seconds"] = 0  # the order is the subject here (the grace period: test_ccm_keep.py)
    store = Store(settings, str(tmp_path / "ccm"), log=lambda m: None)
    # incompressible blobs of 8 KB each
    hard = store.put(os.urandom(8192), pin={"level": "hard", "reason": "keep"})
    soft = store.put(os.urandom(8192), pin={"level": "soft", "reason": ""})
    keys = []
    for _ in range(6):
        time.sleep(0.01)  # distinct last_used times: oldest first is observable
        keys.append(store.put_stream(io.BytesIO(os.urandom(8192))))
        assert keys[-1] in store.keys()  # never the entry just written
        assert hard in store.keys()
    left = set(store.keys())
    assert hard in left and keys[-1] in left
    assert keys[0] not in left and keys[1] not in left  # unpinned, oldest first
    assert store.disk_bytes() <= 30_000 or left <= {hard, soft, keys[-1]}
    # unpinned go before soft pins: while any older unpinned one is left, so is the soft pin
    if soft not in left:
        assert not (left - {hard, keys[-1]})


def test_no_bound_when_null(settings, tmp_path):
    settings["store"]["max_size_mb"] = None
    store = Store(settings, str(tmp_path / "ccm"), log=lambda m: None)
    keys = [store.put(os.urandom(8192)) for _ in range(4)]
    assert set(keys) <= set(store.keys())


# -- the read-back command ---------------------------------------------------

def test_stub_read_back_command_runs_without_engine_on_path(tmp_path):
    """Old stubs said `engine cache show KEY`, which fails where `engine` is
    not on PATH (a venv not activated); now they name the engine that wrote them."""
    env = _env(tmp_path)
    r = subprocess.run([sys.executable, "-m", "engine.cli", "cache", "run", "--", "seq 1 5000"], capture_output=True,
                       env=env, cwd=str(tmp_path), timeout=120)
    stub = r.stdout.decode()
    assert stub.startswith("[CCM_CACHED]"), r
    command = stub.split("To read it: `")[1].split("`")[0]
    assert command.startswith(engine_shell() + " cache show ")
    bare = dict(env, PATH="/usr/bin:/bin")
    assert subprocess.run(["bash", "-c", "command -v engine"], env=bare, capture_output=True).returncode != 0
    shown = subprocess.run(["bash", "-c", command], env=bare, capture_output=True, cwd=str(tmp_path), timeout=120)
    assert shown.returncode == 0, shown
    assert shown.stdout == "".join(f"{i}\n" for i in range(1, 201)).encode()


def test_every_stub_writer_names_the_engine_by_absolute_path(builtin, tmp_path, monkeypatch):
    """The PostToolUse handler's stub and purge's stub carry the same command."""
    from engine.agents import table
    from engine.agents.event import make
    from engine.ccm.purge import Purger
    from engine.hooks.handlers.ccm_output import replacement

    monkeypatch.setattr("engine.agents.capability.takes", lambda *a, **k: True)
    s = copy.deepcopy(builtin)
    s["folder"] = str(tmp_path / "ccm")
    store = Store(s)
    event = make(table.get("claude-code"), "post_tool", tool="Bash", tool_input={"command": "seq 1 3000"},
                 session="s", cwd=str(tmp_path), tool_output={"stdout": "".join(f"{i}\n" for i in range(3000)),
                                                             "stderr": ""})
    out = replacement(event, s)
    assert f"`{engine_shell()} cache show " in out["text"]
    stub = Purger(s, store)._stub("y" * 5000, "tool_result", {"tool": "Read"})
    assert f"`{engine_shell()} cache show " in stub


def test_cache_run_of_a_command_line_not_utf8_prints_its_stub_and_status(tmp_path):
    """A command whose text is not UTF-8 (a Latin-1 pattern) with a large
    output: its stub could not be encoded, the wrapper ended in a traceback,
    exit 1, and printed neither the output nor the stub."""
    command = b"printf 'caf\xe9\\n'; seq 1 1000; exit 3"
    r = subprocess.run([sys.executable, "-m", "engine.cli", "cache", "run", "--", command], capture_output=True,
                       timeout=120, env=_env(tmp_path), cwd=str(tmp_path))
    assert (r.returncode, r.stderr) == (3, b"")
    assert r.stdout.startswith(b"[CCM_CACHED]") and b"command: printf 'caf\xe9\\n'" in r.stdout
    key = r.stdout.split(b"key: sha256:")[1].split()[0].decode()
    back = _engine(tmp_path, "cache", "show", key)
    assert back.stdout == b"caf\xe9\n" + "".join(f"{i}\n" for i in range(1, 1001)).encode()
