"""The reference pages (docs/reference/) are generated from the schemas and
the `engine` parser (engine/cli/reference.py, scripts/gen_docs.py): the
committed pages must be what generation gives now, so a schema key or a
command option added without regenerating fails here."""

from pathlib import Path

from engine.cli import reference

REPO = Path(__file__).resolve().parent.parent
FOLDER = REPO / "docs" / "reference"


def test_committed_reference_pages_match_generation():
    drifted = reference.check(FOLDER)
    assert not drifted, f"docs/reference/ drifted: {drifted}; run: python scripts/gen_docs.py"


def test_every_schema_and_the_commands_have_a_page():
    names = set(reference.pages())
    kinds = {p.name[: -len(".schema.json")] for p in (REPO / "schemas").glob("*.schema.json")}
    assert {f"{k}.md" for k in kinds} | {"commands.md", "README.md"} == names


def test_check_names_a_changed_a_missing_and_a_left_over_page(tmp_path):
    reference.write(tmp_path)
    assert reference.check(tmp_path) == []
    (tmp_path / "level.md").write_text("# edited by hand\n", encoding="utf-8")
    (tmp_path / "pricing.md").unlink()
    (tmp_path / "gone.md").write_text("# a page whose schema went\n", encoding="utf-8")
    assert reference.check(tmp_path) == ["gone.md", "level.md", "pricing.md"]
    reference.write(tmp_path)
    assert reference.check(tmp_path) == [] and not (tmp_path / "gone.md").exists()


def test_a_schema_page_lists_nested_keys_kinds_refs_and_conditions():
    schema = {
        "title": "toy", "type": "object", "required": ["kind", "steps"],
        "$defs": {"label": {"type": "string", "description": "a <short> label"}},
        "properties": {
            "kind": {"const": "toy"},
            "limit": {"type": "integer", "minimum": 2, "x-project": True},
            "steps": {"type": "array", "items": {"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "push"}, "label": {"$ref": "#/$defs/label"}}},
                {"type": "object", "properties": {"kind": {"const": "pull"}, "depth": {"enum": [1, 2]}}},
            ]}},
            "mode": {"enum": ["a", "b"]},
        },
        "allOf": [{"if": {"properties": {"mode": {"const": "a"}}}, "then": {"properties": {"extra": {"type": "boolean"}}}}],
    }
    page = reference.schema_page("toy", schema)
    assert "| `limit` | integer |  | at least 2, *project* |" in page
    assert "| `steps` | list of mapping | yes |" in page
    assert "## `steps[]` of kind `push`" in page and "## `steps[]` of kind `pull`" in page
    assert "| `label` | string |  | a &lt;short&gt; label |" in page  # the $ref followed, the text escaped
    assert "| `depth` | one of `1`, `2` |" in page
    assert "## when `mode` is `a`" in page and "| `extra` | boolean |" in page


def test_the_commands_page_lists_every_subcommand_and_option():
    page = reference.commands_page()
    for heading in ("## `engine compress`", "## `engine cache prune`", "## `engine session report`"):
        assert heading in page
    assert "| `--tokenizer TOKENIZER` |" in page and "one of o200k_base, cl100k_base" in page


def test_the_readme_stays_a_front_page():
    """Issue 26: the README is a front page of at most 400 lines; the
    reference lives in docs/ (it was a 2,013-line hand-written reference
    that drifted)."""
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"README.md has {lines} lines; move reference material to docs/"
