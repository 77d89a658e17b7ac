"""The YAML examples of the docs are what a user copies first: each one that
is an engine document validates, and each `hooks:` fragment validates inside
a profile that extends the default.

A block whose first line is a `# NAME.yaml` comment is written under that
name, so the files an example names (`./protect/ticket-ids.yaml`) are there
beside it, as a user following the page would have them."""

import re

import pytest

from conftest import REPO, write

BLOCK = re.compile(r"^```yaml\n(.*?)^```", re.S | re.M)
NAMED = re.compile(r"\A# (\S+\.yaml)\n")


def _blocks(page):
    return [m.group(1) for m in BLOCK.finditer(page.read_text(encoding="utf-8"))]


def _checked(text):
    return bool(re.search(r"^kind: ", text, re.M)) or text.startswith("hooks:")


# The pages with an engine document or a hooks fragment among their examples.
PAGES = [p for p in sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")]) if any(map(_checked, _blocks(p)))]


def _documents(page, folder):
    """[(path written, what it is)] for each block of `page` that is a
    document or a hooks fragment; other blocks (a pre-commit config) are not
    the engine's."""
    out = []
    for i, text in enumerate(_blocks(page)):
        named = NAMED.match(text)
        if re.search(r"^kind: ", text, re.M):
            name = named.group(1) if named else f"{page.stem}-{i}.yaml"
            out.append(write(folder, name, text))
        elif text.startswith("hooks:"):
            profile = f"kind: profile\nname: doc-{i}\nextends: default\n{text}"
            out.append(write(folder, f"{page.stem}-{i}.yaml", profile))
    return out


def test_the_docs_hold_examples_to_check():
    assert {"profiles.md", "hooks.md", "context-intelligence.md", "messages.md", "security.md"} <= {p.name for p in PAGES}
    assert any(NAMED.match(b) for b in _blocks(REPO / "docs" / "profiles.md"))


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_yaml_example_of_a_page_validates(page, cli, tmp_path):
    folder = tmp_path / "examples"
    documents = _documents(page, folder)
    run = cli("validate", *documents, cwd=folder)
    assert run.returncode == 0 and not run.err, str(run)
