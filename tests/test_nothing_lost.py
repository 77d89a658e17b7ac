"""Issue 15, nothing lost: every stub names one blob holding the exact bytes
it replaced, gc keeps what transcripts (wherever the agent keeps them) and
blobs name, purge keeps every byte it cannot parse, restore refuses a
tampered pack, learned commands ignore compound ones, files and folders
are private under any umask, and the reports count right.  Each test fails
on 3bf441d."""

import json
import os
import shutil
import subprocess
import sys

import pytest

import forkrun
from engine.base.errors import UserError
from engine.ccm import config
from engine.ccm.gc import gc
from engine.ccm.purge import purge_file
from engine.ccm.store import Store
from support.ccm import settings, store  # noqa: F401 - fixtures
from testdata import transcript

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EDITS = "10-agentcmd-v2026-image-result.jsonl"
OPEN = "[CCM_CACHED]"
SIG = "EqQBCkYIBxgCKkB" + "s1gnature/+=" * 40


def env_for(tmp, **extra):
    """A subprocess environment that writes only under tmp."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGINE_", "XDG_", "CLAUDE_"))}
    env.update(PYTHONPATH=REPO, HOME=str(tmp / "home"), XDG_CACHE_HOME=str(tmp / "xdg-cache"),
               XDG_CONFIG_HOME=str(tmp / "xdg-config"), XDG_STATE_HOME=str(tmp / "xdg-state"),
               ENGINE_CACHE_DIR=str(tmp / "cache"), ENGINE_STATE_DIR=str(tmp / "state"),
               CLAUDE_CONFIG_DIR=str(tmp / "claude"))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def engine(tmp, *args, env=None, cwd=None):
    """`engine ARGS` as a child process forked from the worker (tests/forkrun.py)."""
    args = [str(a) for a in args]
    rc, out, err = forkrun.run(args, cwd=cwd or str(tmp), env=env or env_for(tmp))
    return subprocess.CompletedProcess(["engine", *args], rc, out, err)


def L(**kw):
    base = {"sessionId": "S", "cwd": "/p", "version": "2.1.0", "isSidechain": False, "timestamp": "2026-01-01T00:00:00Z"}
    base.update(kw)
    return base


def write_rows(path, rows):
    path.write_bytes(b"".join((json.dumps(r) + "\n").encode() for r in rows))
    os.utime(path, (1, 1))
    return path


def key_of_stub(text):
    return text.split("sha256:", 1)[1][:64]


def stubs_against(orig, new, found):
    """Walk an original JSON value and its purged copy side by side: every
    stub in the copy, with the exact value it replaced."""
    if isinstance(new, str):
        if new.startswith(OPEN) and new != orig:
            found.append((key_of_stub(new), orig))
        return
    if isinstance(new, dict) and isinstance(orig, dict):
        for k, v in new.items():
            if k in orig:
                stubs_against(orig[k], v, found)
        return
    if isinstance(new, list) and isinstance(orig, list):
        if len(orig) != len(new):  # thinking blocks gone
            orig = [b for b in orig if not (isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking"))]
        assert len(orig) == len(new)
        for a, b in zip(orig, new):
            stubs_against(a, b, found)


# -- 1. one rule for stubs ----------------------------------------------------

def test_purge_then_gc_every_stub_reads_back_byte_exact_and_edit_results_stay_objects(settings, tmp_path):
    """Old: Edit's toolUseResult became one string stub naming a blob that
    named the originalFile blob; gc (transcripts only) deleted the inner one."""
    claude = tmp_path / "claude" / "projects" / "-p"
    claude.mkdir(parents=True)
    path = claude / "S.jsonl"
    shutil.copy(transcript(EDITS), path)
    os.utime(path, (1, 1))
    store = Store(settings, str(tmp_path / "cache" / "ccm"), log=lambda m: None)
    report, backup = purge_file(str(path), settings, store)
    assert backup and report.keys
    res = gc(store, [str(tmp_path / "claude" / "projects")], grace_seconds=0)
    assert res["deleted"] == []
    before = {}
    for raw in open(backup, "rb"):
        d = json.loads(raw)
        before[d.get("uuid")] = d
    found, edits = [], 0
    for raw in path.read_bytes().splitlines():
        d = json.loads(raw)
        stubs_against(before[d.get("uuid")], d, found)
        orig_tur = before[d.get("uuid")].get("toolUseResult")
        if isinstance(orig_tur, dict):
            assert isinstance(d["toolUseResult"], dict) and d["toolUseResult"].keys() == orig_tur.keys()
            if "originalFile" in orig_tur and len(orig_tur["originalFile"] or "") > 2000:
                assert d["toolUseResult"]["originalFile"].startswith(OPEN)
                edits += 1
    assert edits and len(found) >= len(report.keys)
    for key, value in found:
        assert store.get(key) == value.encode("utf-8", "surrogatepass")
    # the command the stub names prints the same bytes
    key, value = found[0]
    # the transcript's own project (its lines' cwd) is not here: --all; the secret is this process's
    r = engine(tmp_path, "cache", "show", "--all", key, env=env_for(tmp_path, ENGINE_STATE_DIR=os.environ["ENGINE_STATE_DIR"]))
    assert r.returncode == 0 and r.stdout == value.encode("utf-8", "surrogatepass")


def test_gc_follows_blobs_that_name_blobs(settings, store, tmp_path):
    inner = store.put(b"inner output\n" * 300, {"tool": "t"})
    outer = store.put(f"a cached output that holds a stub: sha256:{inner}\n".encode() * 100, {"tool": "t"})
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "x.jsonl").write_text(json.dumps({"c": f"sha256:{outer}"}) + "\n")
    res = gc(store, [str(folder)], grace_seconds=0)
    assert res["deleted"] == [] and store.get(inner) is not None
    # an older sidecar without the list: the blob is read
    store.update_meta(outer, lambda m: {k: v for k, v in m.items() if k != "names"})
    assert gc(store, [str(folder)], grace_seconds=0)["deleted"] == []


# -- 2. transcripts where the agent keeps them ----------------------------------

def test_gc_keeps_blobs_named_by_transcripts_under_claude_config_dir(tmp_path):
    """Old: gc searched ~/.claude/projects only and deleted what a
    transcript under $CLAUDE_CONFIG_DIR named."""
    env = env_for(tmp_path)
    blob = tmp_path / "out.txt"
    blob.write_bytes(b"x" * 5000)
    settings = config.load(config.builtin_path())
    store = Store(settings, str(tmp_path / "cache" / "ccm"), log=lambda m: None)
    named = store.put(blob.read_bytes(), {"tool": "t"})
    loose = store.put(b"y" * 5000, {"tool": "t"})
    folder = tmp_path / "claude" / "projects" / "-work-p"
    folder.mkdir(parents=True)
    (folder / "abc.jsonl").write_text(json.dumps({"content": f"[CCM_CACHED] key: sha256:{named}"}) + "\n")
    cfg = tmp_path / "cc.yaml"
    cfg.write_text(open(config.builtin_path()).read().replace("grace_seconds: 3600", "grace_seconds: 0"))
    env["ENGINE_CONTENT_CACHE"] = str(cfg)
    r = engine(tmp_path, "cache", "gc", env=env)
    assert r.returncode == 0, r.stderr
    assert store.get(named) is not None and store.get(loose) is None


def test_gc_and_prune_keep_what_a_transcript_purged_elsewhere_names(tmp_path):
    """Old: `engine purge PATH` of a transcript outside the agent's folders
    (a copy, an archive) stubbed its outputs, and the next gc or prune past
    the grace period deleted every one (gc: 'deleted 1 unreferenced entry
    (0 referenced)'): its stubs read back nothing.  It is searched once
    purged, until it is gone."""
    env = env_for(tmp_path)
    cfg = tmp_path / "cc.yaml"
    cfg.write_text(open(config.builtin_path()).read().replace("grace_seconds: 3600", "grace_seconds: 0"))
    env["ENGINE_CONTENT_CACHE"] = str(cfg)
    (tmp_path / "archive").mkdir()
    path = write_rows(tmp_path / "archive" / "S.jsonl", _conversation())
    assert engine(tmp_path, "purge", path, env=env).returncode == 0
    keys = sorted({key_of_stub(x) for x in path.read_text().split("[CCM_CACHED]")[1:]})
    assert keys
    (tmp_path / "elsewhere").mkdir()
    # --transcripts used to replace every folder searched, the purged transcripts with them
    # (audit: "deleted 10 unreferenced entries (0 referenced)"); a missing folder was no error
    missing = engine(tmp_path, "cache", "gc", "--transcripts", tmp_path / "no-such-folder", env=env)
    assert missing.returncode == 1 and b"--transcripts" in missing.stderr and b"nothing was deleted" in missing.stderr
    for args in (["cache", "gc"], ["cache", "gc", "--transcripts", tmp_path / "elsewhere"],
                 ["cache", "prune", "--max-size-mb", "0", "--max-age-days", "0"]):
        assert engine(tmp_path, *args, env=env).returncode == 0
        for key in keys:
            r = engine(tmp_path, "cache", "show", "--all", key, env=env)
            assert r.returncode == 0 and r.stdout, (args, r.stderr)
    path.unlink()
    assert engine(tmp_path, "cache", "gc", env=env).returncode == 0
    assert engine(tmp_path, "cache", "show", "--all", keys[0], env=env).returncode == 1


def test_purge_and_report_find_sessions_under_claude_config_dir(tmp_path):
    """Old: purge looked under ~/.claude only (a session id found nothing)."""
    folder = tmp_path / "claude" / "projects" / "-work-p"
    folder.mkdir(parents=True)
    write_rows(folder / "8ced4264-aaaa-bbbb.jsonl", [L(type="user", uuid="u1", parentUuid=None,
                                                          message={"role": "user", "content": "hi"})])
    r = engine(tmp_path, "purge", "8ced4264-aaaa-bbbb", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["path"] == str(folder / "8ced4264-aaaa-bbbb.jsonl")
    r = engine(tmp_path, "session", "report", "8ced4264-aaaa-bbbb", "--json")
    assert r.returncode == 0, r.stderr


# -- 3. purge on hostile transcripts ---------------------------------------------

def _conversation():
    big = "".join(f"row {i}\n" for i in range(900))
    return [
        L(type="user", uuid="u1", parentUuid=None, message={"role": "user", "content": "go"}),
        L(type="assistant", uuid="a1", parentUuid="u1", message={"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}]}),
        L(type="user", uuid="u2", parentUuid="a1", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": big}]}),
    ]


@pytest.mark.parametrize("bad", [
    b'{"type":"user","uuid":"u9","message":{"content":"caf\xe9"}}\n',  # one invalid UTF-8 byte
    b'{"type":"user","uuid":"u9","message":{"content":"torn',  # torn last line
    b'["not", "an", "object"]\n',
    b"[" * 100000 + b"]" * 100000 + b"\n",
], ids=["utf8", "torn", "array", "deep"])
def test_a_line_purge_cannot_parse_is_kept_byte_for_byte(settings, store, tmp_path, bad):
    rows = _conversation()
    path = tmp_path / "S.jsonl"
    # the tool_result line is the unparsable one: no made-up result takes its place
    body = b"".join((json.dumps(r) + "\n").encode() for r in rows[:2])
    torn = not bad.endswith(b"\n")
    tail = (json.dumps(rows[2]) + "\n").encode()
    path.write_bytes(body + (tail + bad if torn else bad + tail))
    os.utime(path, (1, 1))
    report, _ = purge_file(str(path), settings, store)
    out = path.read_bytes()
    assert bad in out and out.endswith(bad if torn else b"\n")
    assert b"tool result missing" not in out
    assert out.count(b"\n") == (body + bad + tail).count(b"\n")
    assert report.repairs.get("kept_unparsable_line") == 1


@pytest.mark.parametrize("cycle", ["self", "two"])
def test_parent_cycles_of_dropped_lines_terminate(settings, store, tmp_path, cycle):
    think = {"type": "thinking", "thinking": "hmm", "signature": SIG}
    rows = [L(type="user", uuid="u1", parentUuid=None, message={"role": "user", "content": "go"})]
    if cycle == "self":
        rows.append(L(type="assistant", uuid="a1", parentUuid="a1", message={"id": "m", "role": "assistant", "content": [think]}))
    else:
        rows += [L(type="assistant", uuid="a1", parentUuid="a2", message={"id": "m", "role": "assistant", "content": [think]}),
                 L(type="assistant", uuid="a2", parentUuid="a1", message={"id": "m", "role": "assistant", "content": [think]})]
    rows.append(L(type="assistant", uuid="a3", parentUuid="a1", message={"id": "m2", "role": "assistant", "content": [
        {"type": "text", "text": "done"}]}))
    path = write_rows(tmp_path / "S.jsonl", rows)
    env = env_for(tmp_path)
    r = subprocess.run([sys.executable, "-m", "engine.cli", "purge", str(path), "--json"], capture_output=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    out = [json.loads(x) for x in path.read_bytes().splitlines()]
    assert [d["uuid"] for d in out] == ["u1", "a3"]


def test_disk_full_names_the_file_and_leaves_no_torn_backup(settings, store, tmp_path, monkeypatch):
    import errno

    from engine.core import transcript

    path = write_rows(tmp_path / "S.jsonl", _conversation())
    before = path.read_bytes()
    real = transcript.copy_range

    def full(src, dst, start, end, chunk_bytes=None):  # the backup's copy (no line here is too long to parse)
        dst.write(src.read(100))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(transcript, "copy_range", full)
    with pytest.raises(UserError) as exc:
        purge_file(str(path), settings, store)
    monkeypatch.setattr(transcript, "copy_range", real)
    assert "No space left" in str(exc.value) and ".purge-S.jsonl.backup-" in str(exc.value)
    assert "standard output" not in str(exc.value)
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["S.jsonl", "ccm"]  # no backup name, no temporary file


def test_leftovers_of_a_killed_purge_are_removed_by_the_next(settings, store, tmp_path):
    path = write_rows(tmp_path / "S.jsonl", _conversation())
    (tmp_path / ".purge-S.jsonl.new-abc123").write_bytes(b"half")
    (tmp_path / ".purge-S.jsonl.backup-def456").write_bytes(b"half")
    old = tmp_path / ".purge-k2j3h4"  # an older version's nameless leftover
    old.write_bytes(b"half")
    os.utime(old, (1, 1))
    purge_file(str(path), settings, store)
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".purge-")]


def test_a_symlinked_transcript_stays_a_link_and_its_target_is_purged(settings, store, tmp_path):
    real = write_rows(tmp_path / "real.jsonl", _conversation())
    (tmp_path / "projects").mkdir()
    link = tmp_path / "projects" / "S.jsonl"
    link.symlink_to(real)
    _, backup = purge_file(str(link), settings, store)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert OPEN.encode() in real.read_bytes()
    assert os.path.dirname(backup) == str(tmp_path)


def test_nothing_to_remove_is_not_rewritten_and_backups_are_bounded(settings, store, tmp_path):
    path = write_rows(tmp_path / "S.jsonl", _conversation())
    _, first = purge_file(str(path), settings, store)
    assert first
    done = path.read_bytes()
    mtime = os.stat(path).st_mtime_ns
    report, again = purge_file(str(path), settings, store, force=True)
    assert again is None and not report.changed
    assert path.read_bytes() == done and os.stat(path).st_mtime_ns == mtime
    kept = settings["purge"]["backups_kept"]
    for i in range(kept + 2):  # each run has something new to remove
        with open(path, "a") as fh:
            fh.write(json.dumps(L(type="assistant", uuid=f"x{i}", parentUuid="u2", message={
                "id": f"m{i}", "role": "assistant", "content": [
                    {"type": "thinking", "thinking": "t", "signature": SIG}, {"type": "text", "text": "ok"}]})) + "\n")
        purge_file(str(path), settings, store, force=True)
    backups = [n for n in os.listdir(tmp_path) if n.startswith("S.jsonl.backup.")]
    assert len(backups) == kept


# -- 9. learned commands -------------------------------------------------------

@pytest.mark.parametrize("command", ["git add -A && git status", "gh pr view 12 --comments | head -5", "make; ls",
                                     "make || true", "(cd sub && make)", "echo `ls -R`", "cat $(ls)", 'echo "$(ls)"'])
def test_a_compound_command_teaches_nothing(tmp_path, command):
    """Old: `git add -A && git status` taught `git add`."""
    from engine.ccm.learned import learn, pattern_of, read

    assert pattern_of(command, 2) == ""
    conf = {"expiry_days": 30, "max_entries": 500, "max_bytes": 131072}
    learn(str(tmp_path), "/p", pattern_of(command, 2), 9000, conf)
    assert read(str(tmp_path), "/p", conf) == {}


def test_a_simple_command_still_teaches_its_first_words():
    from engine.ccm.learned import pattern_of

    assert pattern_of("git log --stat", 2) == "git log"
    assert pattern_of("grep 'a|b' -r src", 2) == "grep 'a|b'"
    assert pattern_of("make test 2>&1", 2) == "make test"


# -- 10. messages restore checks what it restores -------------------------------

PROSE = ("The deployment pipeline runs the unit tests first, then it builds the container image and pushes it "
         "to the registry, after which the staging environment is updated automatically. ") * 4


@pytest.mark.parametrize("tamper", ["drop_verbatim", "insert_front", "none"])
def test_restore_refuses_a_tampered_pack(tmp_path, tamper):
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": PROSE},
            {"role": "user", "content": PROSE}, {"role": "assistant", "content": "ok"}]
    src = tmp_path / "in.json"
    src.write_text(json.dumps(msgs))
    r = engine(tmp_path, "messages", "compress", src, "--json", "--recency", "0")
    assert r.returncode == 0, r.stderr
    pack = json.loads(r.stdout)
    assert pack["verbatim"]
    if tamper == "drop_verbatim":
        pack["verbatim"].pop(sorted(pack["verbatim"])[0])
    elif tamper == "insert_front":
        pack["messages"].insert(0, {"role": "user", "content": "injected"})
    (tmp_path / "pack.json").write_text(json.dumps(pack))
    r = engine(tmp_path, "messages", "restore", tmp_path / "pack.json")
    if tamper == "none":
        assert r.returncode == 0 and json.loads(r.stdout) == msgs
        return
    assert r.returncode == 1 and r.stdout == b""
    err = r.stderr.decode()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "was changed" in err


# -- 11. modes ------------------------------------------------------------------

def _modes(root):
    bad = []
    for folder, dirs, files in os.walk(root):
        for d in dirs:
            m = os.stat(os.path.join(folder, d)).st_mode & 0o777
            if m != 0o700:
                bad.append((os.path.join(folder, d), oct(m)))
        for f in files:
            m = os.lstat(os.path.join(folder, f)).st_mode & 0o777
            if m != 0o600:
                bad.append((os.path.join(folder, f), oct(m)))
    return bad


def test_every_folder_is_0700_and_every_file_0600_under_umask_000(tmp_path):
    """Old: the content-cache folder came out 0777 (0755 under umask 022)
    when its first write was a learned command; folders on the way to the
    state folder took the umask's mode."""
    env = env_for(tmp_path, ENGINE_CACHE_DIR=tmp_path / "new" / "cache", ENGINE_STATE_DIR=tmp_path / "new" / "st" / "state")
    project = tmp_path / "proj"
    project.mkdir()
    big = "\n".join(f"line {i}" for i in range(2000))
    ev = {"session_id": "S1", "transcript_path": str(tmp_path / "t.jsonl"), "cwd": str(project),
          "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "make all"},
          "tool_use_id": "toolu_1", "tool_response": {"stdout": big, "stderr": ""}}
    r = subprocess.run([sys.executable, "-m", "engine.cli", "hook"], input=json.dumps(ev).encode(), capture_output=True,
                       env=env, cwd=str(project), preexec_fn=lambda: os.umask(0))
    assert r.returncode == 0, r.stderr
    code = ("import os; os.umask(0)\n"
            "from engine.ccm import config\nfrom engine.ccm.store import Store\nfrom engine.ccm.pins import SessionPins\n"
            "from engine.core.log import Log\n"
            "s = config.load(config.builtin_path()); st = Store(s)\n"
            "k = st.put(b'x' * 3000, {'tool': 't'}, session='S1')\n"
            "Log()('a line')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env, cwd=str(project))
    assert r.returncode == 0, r.stderr
    learned = tmp_path / "new" / "cache" / "ccm" / "learned"
    assert learned.is_dir() and any(n.endswith(".json") for n in os.listdir(learned))
    assert (tmp_path / "new" / "st" / "state" / "hook.log").exists()
    assert _modes(tmp_path / "new") == []
    assert os.stat(tmp_path / "new").st_mode & 0o777 == 0o700


# -- 13. reports ------------------------------------------------------------------

def _session_with_errors_and_injections():
    import session_fixtures as sf

    use = lambda i: {"type": "tool_use", "id": f"t{i}", "name": "Edit", "input": {"file_path": f"/f{i}"}}
    err = lambda i, text: {"type": "tool_result", "tool_use_id": f"t{i}", "is_error": True,
                           "content": f"<tool_use_error>{text}</tool_use_error>"}
    rows = [sf.user("go"), sf.hook_context("[Effort policy: medium] Use standard reasoning depth.", "SessionStart"),
            sf.hook_context("[TOOL MEMORY: lessons from past sessions for Edit]\n- [x] Edit -- File has not been read yet",
                            "PreToolUse"),
            sf.hook_context("a note from the user's own hook", "PostToolUse")]
    for i in range(4):
        rows += [sf.assistant(f"m{i}", 10000 + i, [use(i)]),
                 sf.user([err(i, "File has not been read yet. Read it first before writing to it.")])]
    rows += [sf.assistant("m9", 20000, [use(9)]), sf.user([err(9, "String to replace not found in file.")])]
    return rows


def test_identical_errors_are_one_row_with_a_count_and_every_injection_is_listed(tmp_path):
    """Old: one row per error (21 identical rows); tool-memory and effort
    injections were not in the refresh list."""
    from engine.session import build_report, load_style, render_text

    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _session_with_errors_and_injections()))
    style = load_style()
    r = build_report(str(path), style)
    assert r["error_count"] == 5
    assert [(e["message"][:20], e["count"]) for e in r["errors"]] == [
        ("File has not been re", 4), ("String to replace no", 1)]
    text = render_text(r, style)
    assert "(4 times)" in text and text.count("File has not been read yet") == 1
    assert [f["handler"] for f in r["refreshes"]] == ["effort_guidance", "tool_memory", "other_hook"]


def test_a_session_id_prefix_names_its_session_and_an_ambiguous_one_is_refused(tmp_path):
    """Old: `engine session report 8ced4264` found nothing."""
    import session_fixtures as sf

    folder = tmp_path / "claude" / "projects" / "-work-p"
    folder.mkdir(parents=True)
    rows = [sf.user("go"), sf.assistant("m1", 1000)]
    for sid in ("8ced4264-1111-2222-3333-444455556666", "8ce0aaaa-1111-2222-3333-444455556666"):
        (folder / f"{sid}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in rows))
    r = engine(tmp_path, "session", "report", "8ced4264", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["transcript"].endswith("8ced4264-1111-2222-3333-444455556666.jsonl")
    r = engine(tmp_path, "session", "report", "8ce", "--json")
    err = r.stderr.decode()
    assert r.returncode == 1 and len(err.splitlines()) == 1 and "ambiguous" in err
    assert "8ced4264-1111-2222-3333-444455556666" in err and "8ce0aaaa-1111-2222-3333-444455556666" in err


def test_gc_dry_run_reports_the_bytes_the_real_run_frees(settings, store, tmp_path):
    """Old: --dry-run said 0 bytes."""
    for i in range(3):
        store.put(f"output {i}\n".encode() * 2000, {"tool": "t"})
    empty = tmp_path / "none"
    empty.mkdir()
    dry = gc(store, [str(empty)], grace_seconds=0, dry_run=True)
    real = gc(store, [str(empty)], grace_seconds=0)
    assert dry["freed_bytes"] > 0 and dry["freed_bytes"] == real["freed_bytes"]
    assert sorted(dry["deleted"]) == sorted(real["deleted"])


def test_cache_show_reads_an_entry_whole_where_its_read_cannot_be_recorded(tmp_path):
    """Old: on a cache folder that cannot be written (read-only, full),
    `cache show` printed every byte and then failed, exit 1, on recording
    the read.  The read is the user's data: exit 0, and one note on stderr
    that gc's grace period did not start again.  (The locks folder made a
    file stands for a read-only cache: root writes anywhere.)"""
    project = tmp_path / "p"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "big.txt").write_text("".join(f"line {i}\n" for i in range(20000)))
    assert engine(tmp_path, "cache", "run", "--", "cat", "big.txt", cwd=str(project)).returncode == 0
    (key,) = [x.split()[0] for x in engine(tmp_path, "cache", "list", cwd=str(project)).stdout.decode().splitlines()]
    (locks,) = (tmp_path / "cache").rglob("locks")
    shutil.rmtree(locks)
    locks.write_bytes(b"")
    r = engine(tmp_path, "cache", "show", key, cwd=str(project))
    assert r.returncode == 0 and r.stdout == (project / "big.txt").read_bytes(), r.stderr
    (note,) = r.stderr.decode().splitlines()
    assert note.startswith("engine: note: the read was not recorded") and key.removeprefix("sha256:") in note
