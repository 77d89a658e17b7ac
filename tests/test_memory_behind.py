"""A failed command the content cache's wrapper ran prints the cache's stub:
the tool memory reads its error line behind the stub (engine/memory/behind.py),
from an entry of the call's own project only."""

import os

import pytest

from engine.ccm import config
from engine.ccm.store import Store
from engine.ccm.stub import render
from engine.memory.behind import read_behind

OUTPUT = "".join(f"{i}\n" for i in range(1, 3001)) + "error: 3 tests failed\n"


@pytest.fixture
def cached(tmp_path, monkeypatch):
    """(store, text) of a failure whose output the wrapper cached, for a project folder."""
    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))
    settings = config.load(config.builtin_path())
    project = tmp_path / "project"
    project.mkdir()
    store = Store(settings, log=lambda m: None)
    key = store.put(OUTPUT.encode(), {"tool": "Bash", "command": "make test", "cwd": str(project), "exit": "2"})
    stub = render(settings, "template", key, store, store.meta(key), "2", "make test")
    return project, f"Exit code 2\n{stub}\nmake: *** [test] Error 1"


def test_the_output_behind_the_stub_follows_what_the_model_read_outside_it(cached):
    project, text = cached
    read = read_behind(text, str(project))
    assert read.startswith("Exit code 2\n\nmake: *** [test] Error 1\n1\n2\n") and "CCM_CACHED" not in read
    assert "error: 3 tests failed" in read  # the head of the output (20,000 bytes) holds it here


def test_a_stub_naming_another_projects_entry_reads_nothing(cached, tmp_path):
    _, text = cached
    other = tmp_path / "other"
    other.mkdir()
    assert read_behind(text, str(other)) is None  # a command of another project printed this project's stub


@pytest.mark.parametrize("change", [
    lambda t: t.replace("[/CCM_CACHED]", ""),                       # no end: not the cache's stub
    lambda t: t.replace("\npinned:", "\nkey: sha256:" + "0" * 64 + "\npinned:"),  # two keys in it
    lambda t: t.replace("[CCM_CACHED] This is not an error", "[CCM_CACHED] This is"),  # not its opening
])
def test_anything_but_one_whole_stub_of_the_cache_reads_nothing(cached, change):
    project, text = cached
    assert read_behind(change(text), str(project)) is None


def test_a_missing_entry_reads_nothing(cached):
    project, text = cached
    for root, _, files in os.walk(os.environ["ENGINE_CACHE_DIR"]):
        for name in files:
            if name.endswith(".zst"):
                os.remove(os.path.join(root, name))
    assert read_behind(text, str(project)) is None
