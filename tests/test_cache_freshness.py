"""What every hook pays to trust the compiled-profile cache
(engine/core/cache.py): the code fingerprint lists no __pycache__ folder,
and a source whose stat signature is unchanged since it was hashed is not
read again, while any change, and any source too recent to trust its
signature, is still hashed; an installed wheel is fingerprinted by its
RECORD."""

import os

import pytest

from engine.core import cache


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(folder))
    monkeypatch.setattr(cache, "_DIGESTS", {})  # a fresh process
    return folder


def _source(tmp_path, text="kind: profile\nname: x\n"):
    path = tmp_path / "src.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _hashes(monkeypatch):
    """Count the sources load_plain reads (hashes) from here on."""
    seen = []
    real = cache.file_digest

    def counting(path):
        seen.append(path)
        return real(path)

    monkeypatch.setattr(cache, "file_digest", counting)
    return seen


def test_fingerprint_lists_no_pycache(tmp_path, monkeypatch):
    from engine.base import paths

    pkg = tmp_path / "engine"
    for rel in ("a.py", "sub/b.py", "sub/data.txt", "__pycache__/a.cpython-311.pyc", "sub/__pycache__/b.cpython-311.pyc"):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(paths, "package_root_str", lambda: str(pkg))
    listed = []
    real = os.scandir

    def scandir(path="."):
        listed.append(os.path.basename(str(path)))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    fp = cache._code_fingerprint()
    assert [part.split(":")[0] for part in fp.split("|")] == ["a.py", os.path.join("sub", "b.py")]
    assert sorted(listed) == ["engine", "sub"], "a __pycache__ folder holds no module: it is not listed"


def test_an_installed_wheel_is_fingerprinted_by_its_record_without_a_walk(tmp_path, monkeypatch):
    """pip's RECORD beside engine/ (a regular install): one stat, and a new
    RECORD (an upgrade, a reinstall) is a new fingerprint; a working copy or
    an editable install, with none beside it, walks its modules."""
    from engine.base import paths
    from engine.base.version import __version__

    site = tmp_path / "site-packages"
    (site / "engine").mkdir(parents=True)
    (site / "engine" / "a.py").write_text("x = 1\n", encoding="utf-8")
    monkeypatch.setattr(paths, "package_root_str", lambda: str(site / "engine"))
    walked = cache._code_fingerprint()
    assert walked.startswith("a.py:"), walked

    record = site / f"rules_engine-{__version__}.dist-info" / "RECORD"
    record.parent.mkdir()
    record.write_text("engine/a.py,sha256=x,6\n", encoding="utf-8")
    monkeypatch.setattr(os, "scandir", lambda *a: pytest.fail("an installed wheel's modules are not listed"))
    installed = cache._code_fingerprint()
    assert installed.startswith("RECORD:")
    os.utime(record, ns=(1, 1))  # pip writes RECORD anew at every install
    assert cache._code_fingerprint() not in (installed, walked)


def test_unchanged_source_is_not_read_again(private_cache, tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "_SETTLED_NS", 0, raising=False)  # the file was written just now: trust its signature anyway
    src = _source(tmp_path)
    cache.store_plain(("t", "a"), {"v": 1}, [(src, cache.file_digest(src))])
    monkeypatch.setattr(cache, "_DIGESTS", {})  # the next hook process
    seen = _hashes(monkeypatch)
    assert cache.load_plain(("t", "a")) == {"v": 1}
    assert seen == [], "a source with its recorded stat signature is not hashed"


@pytest.mark.parametrize("kind", ["plain", "pickle"])
def test_a_source_too_recent_to_sign_is_signed_once_it_settles(private_cache, tmp_path, monkeypatch, kind):
    """A profile compiled right after an install or an edit holds sources
    too recent to trust their stat: the first event after they settle
    signs them in the entry, and later events hash none of them."""
    src = _source(tmp_path)
    store, load = (cache.store_plain, cache.load_plain) if kind == "plain" else (cache.store, cache.load)
    store(("t", kind), {"v": 1}, [(src, cache.file_digest(src))])  # written just now: unsigned

    def next_event_hashes():
        monkeypatch.setattr(cache, "_DIGESTS", {})  # the next hook process
        seen = _hashes(monkeypatch)
        assert load(("t", kind)) == {"v": 1}
        return seen

    assert next_event_hashes() == [src], "too recent: hashed, left unsigned"
    assert next_event_hashes() == [src]
    monkeypatch.setattr(cache, "_SETTLED_NS", 0)  # two seconds later
    assert next_event_hashes() == [src], "hashed once more, and signed"
    assert next_event_hashes() == [], "signed: a stat is enough"


def test_changed_source_is_seen_even_with_its_old_size_and_mtime(private_cache, tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "_SETTLED_NS", 0, raising=False)
    src = _source(tmp_path, "kind: profile\nname: a\n")
    cache.store_plain(("t", "b"), {"v": 1}, [(src, cache.file_digest(src))])
    st = os.stat(src)
    with open(src, "w", encoding="utf-8") as fh:
        fh.write("kind: profile\nname: b\n")  # same size
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime put back; the ctime cannot be
    monkeypatch.setattr(cache, "_DIGESTS", {})
    assert cache.load_plain(("t", "b")) is None


def test_recent_source_is_hashed_at_every_check(private_cache, tmp_path, monkeypatch):
    """A source changed moments before it was hashed gets no signature: a
    second write in the same clock tick could leave it unchanged."""
    src = _source(tmp_path)
    cache.store_plain(("t", "c"), {"v": 1}, [(src, cache.file_digest(src))])
    monkeypatch.setattr(cache, "_DIGESTS", {})
    seen = _hashes(monkeypatch)
    assert cache.load_plain(("t", "c")) == {"v": 1}
    assert seen == [src]


def test_entry_without_signatures_is_still_read(private_cache, tmp_path, monkeypatch):
    """Entries written before signatures existed stay valid (hashed)."""
    import json

    src = _source(tmp_path)
    path = cache.entry_path(("t", "d"), ".json")
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"sources": [[src, cache.file_digest(src)]], "value": {"v": 2}}, fh)
    assert cache.load_plain(("t", "d")) == {"v": 2}
    with open(src, "a", encoding="utf-8") as fh:
        fh.write("# changed\n")
    monkeypatch.setattr(cache, "_DIGESTS", {})
    assert cache.load_plain(("t", "d")) is None


def test_two_installs_sharing_a_cache_folder_keep_each_its_own_copies(private_cache, tmp_path, monkeypatch):
    """The engine settings' and the agents' JSON copies are stamped with the
    built-in files' times, which differ between installs: with one file
    each, a plugin's venv and a pip install (or an old venv and a new one)
    overwrote each other's copy, and every event of either read the YAML
    again (a quiet event 25 ms -> 60 ms, measured)."""
    import shutil

    from engine.agents import table
    from engine.base import paths
    from engine.core import settings

    def load_both():
        monkeypatch.setattr(table, "_table", None)
        monkeypatch.setattr(settings, "_plain", None)
        return table.agents(), settings.plain()

    first = load_both()
    copies = {p.name: p.read_bytes() for p in private_cache.glob("engine-*.json")}
    assert len(copies) == 2, sorted(copies)

    other = tmp_path / "other-install"  # the same built-in files, written at another time
    for rel in (("pipelines", "agents"), ("pipelines", "settings")):
        shutil.copytree(os.path.join(paths.builtin_root_str(), *rel), other.joinpath(*rel))
    (other / "schemas").mkdir()
    shutil.copy(os.path.join(paths.builtin_root_str(), "schemas", "agent.schema.json"), other / "schemas")
    for where in (paths, table, settings):
        monkeypatch.setattr(where, "builtin_root_str", lambda: str(other))
    assert load_both() == first
    mine = {p.name: p.read_bytes() for p in private_cache.glob("engine-*.json") if p.name in copies}
    assert mine == copies, "the other install's copies are files of their own"
    assert len(list(private_cache.glob("engine-*.json"))) == 4
