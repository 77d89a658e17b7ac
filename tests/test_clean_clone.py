"""A clean clone holds nothing that points at the machine it was made on:
every committed symbolic link is relative and stays inside the checkout
(a link to a local folder, such as the real agents' .agent, resolves on
the author's machine and dangles, or worse, on every other one)."""

import os
import subprocess

import pytest

from support.agent import REPO


def _tracked_links():
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-s", "-z"], cwd=str(REPO), capture_output=True, check=True).stdout
    for entry in out.split(b"\0"):
        if entry.startswith(b"120000 "):
            meta, path = entry.split(b"\t", 1)
            yield path.decode(), meta.split()[1].decode()


def _escapes(path, target):
    if os.path.isabs(target):
        return True
    resolved = os.path.normpath(os.path.join(os.path.dirname(path), target))
    return resolved == ".." or resolved.startswith("../")


def test_the_link_rule_tells_inside_from_outside():
    assert _escapes(".agent", "/work/wt/agentlab/.agent")
    assert _escapes("docs/x", "../../elsewhere")
    assert not _escapes("docs/x", "../README.md")
    assert not _escapes("a/b/c", "../d")


def test_every_committed_link_stays_inside_the_checkout():
    outside = []
    for path, blob in _tracked_links():
        target = subprocess.run(["git", "cat-file", "blob", blob], cwd=str(REPO), capture_output=True,
                                text=True).stdout
        if _escapes(path, target):
            outside.append(f"{path} -> {target}")
    assert not outside, outside
