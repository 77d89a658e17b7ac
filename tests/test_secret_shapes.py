"""What is redacted (issue 23, finding 4): the table of secret shapes in
tests/secrets/shapes.yaml, each with the secrets that must not survive, and
clean texts (prose, lockfile hashes, UUIDs, paths) that must come back
unchanged.  The nine shapes the issue found written to the tool memory are
in the table by name; `python3 bench/secret_shapes.py` prints the figure."""

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
TABLE = yaml.safe_load((REPO / "tests" / "secrets" / "shapes.yaml").read_text(encoding="utf-8"))
SHAPES = TABLE["shapes"]
CLEAN = TABLE["clean"]
ISSUE_SHAPES = ["azure storage connection string", "azure sas token", "docker config auth",
                "authorization basic header", "npm legacy authtoken", "kubeconfig client-key-data",
                "hugging face token", "mysql -p password", "aws secret after a line continuation"]


@pytest.fixture(scope="module")
def redactor(tmp_path_factory):
    """The built-in redactor, its rule cache in a folder of this module."""
    import os

    from engine.core import redact

    old = os.environ.get("ENGINE_CACHE_DIR")
    os.environ["ENGINE_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    redact._MEMO.clear()
    try:
        yield redact.redactor()
    finally:
        redact._MEMO.clear()
        if old is None:
            os.environ.pop("ENGINE_CACHE_DIR", None)
        else:
            os.environ["ENGINE_CACHE_DIR"] = old


def test_the_table_is_large_and_holds_the_issues_shapes():
    names = [s["name"] for s in SHAPES]
    assert len(SHAPES) >= 60 and len(set(names)) == len(names)
    assert set(ISSUE_SHAPES) <= set(names)
    assert len(CLEAN) >= 20


@pytest.mark.parametrize("shape", SHAPES, ids=[s["name"] for s in SHAPES])
def test_every_secret_of_a_shape_is_redacted(redactor, shape):
    text = shape["text"]
    out = redactor.redact(text)
    for secret in shape["secrets"]:
        assert secret in text, "the table's secret must be in its text"
        assert secret not in out, out
    assert "[REDACTED]" in out
    assert redactor.found_in(text) and redactor.found_in(text.encode("utf-8"))


@pytest.mark.parametrize("clean", CLEAN, ids=[c["name"] for c in CLEAN])
def test_a_clean_text_is_left_alone(redactor, clean):
    assert redactor.redact(clean["text"]) == clean["text"]
    assert not redactor.found_in(clean["text"])


def test_a_shape_stays_caught_inside_a_long_output(redactor):
    """Past the short-text path (the keyword test then reads distinct
    words): a secret in the middle of 200 KB of build log, after non-ASCII
    text that makes character and byte offsets differ."""
    shape = next(s for s in SHAPES if s["name"] == "azure sas token")
    filler = "".join(f"step {i}: compiled module_{i}.o ✓ (ünïcode 🚀)\n" for i in range(4000))
    text = filler + shape["text"] + "\n" + filler
    out = redactor.redact(text)
    assert shape["secrets"][0] not in out and out.count("[REDACTED]") == 1
    assert out.startswith(filler) and out.endswith("\n" + filler)
