"""Each kind is declared in two places, a Python registry (the class that
runs it) and a JSON Schema (the branch that validates its spec); these tests
fail when the two disagree, in either direction: a registered kind without a
schema branch is a kind no YAML can use, and a schema branch without a class
passes validation and then fails at compile time."""

import json
import re
from pathlib import Path

import pytest

from engine.cli.parser import LEVELS_HELP
from engine.hooks.handlers import KINDS as HANDLER_KINDS
from engine.messages.detectors import KINDS as DETECTOR_KINDS
from engine.messages.steps import KINDS as STEP_KINDS
from engine.text.transforms import KINDS as TRANSFORM_KINDS

REPO = Path(__file__).resolve().parent.parent


def _schema(kind):
    return json.loads((REPO / "schemas" / f"{kind}.schema.json").read_text(encoding="utf-8"))


def _branch_kinds(branches, key="kind"):
    """The kinds each oneOf/allOf branch is written for (const or enum), one list per branch."""
    out = []
    for b in branches:
        node = b.get("if", b)["properties"][key]
        out.append([node["const"]] if "const" in node else list(node["enum"]))
    return out


def _flat(lists):
    return [k for kinds in lists for k in kinds]


def _transform_branches():
    return _branch_kinds(_schema("level")["properties"]["transforms"]["items"]["oneOf"])


def _step_branches():
    return _branch_kinds(_schema("messages")["properties"]["steps"]["items"]["oneOf"])


def _detector_branches():
    return _branch_kinds(_schema("detector")["allOf"], key="detector")


def _handler_branches():
    return _branch_kinds(_schema("profile")["$defs"]["complete_handler"]["oneOf"])


CASES = {
    "transform": (TRANSFORM_KINDS, _transform_branches),
    "message step": (STEP_KINDS, _step_branches),
    "detector": (DETECTOR_KINDS, _detector_branches),
    "handler": (HANDLER_KINDS, _handler_branches),
}


@pytest.mark.parametrize("what", sorted(CASES))
def test_every_registered_kind_has_one_schema_branch_and_back(what):
    registry, branches = CASES[what]
    in_schema = _flat(branches())
    duplicated = sorted({k for k in in_schema if in_schema.count(k) > 1})
    assert not duplicated, f"{what} kinds with more than one schema branch: {duplicated}"
    assert sorted(set(registry) - set(in_schema)) == [], f"{what} kinds registered in Python with no schema branch"
    assert sorted(set(in_schema) - set(registry)) == [], f"{what} kinds in the schema with no class registered"


def test_detector_kind_enum_matches_the_registry():
    enum = _schema("detector")["properties"]["detector"]["enum"]
    assert sorted(enum) == sorted(DETECTOR_KINDS)


def test_handler_kind_enum_matches_the_registry():
    enum = _schema("profile")["$defs"]["handler"]["properties"]["kind"]["enum"]
    assert sorted(enum) == sorted(HANDLER_KINDS)


def test_the_branch_finder_sees_a_missing_kind():
    """The comparison above is not vacuous: a registry with one kind more
    than its schema is told apart."""
    registry = dict(TRANSFORM_KINDS, invented_kind=object)
    assert set(registry) - set(_flat(_transform_branches())) == {"invented_kind"}


def test_every_builtin_level_is_named_in_the_level_help():
    levels = sorted(p.stem for p in (REPO / "pipelines" / "levels").glob("*.yaml"))
    assert levels, "no built-in levels found"
    missing = [name for name in levels if not re.search(rf"\b{re.escape(name)}\b", LEVELS_HELP)]
    assert not missing, f"--level help leaves out built-in levels: {missing}"
