"""Each handler kind is declared once, on its class (engine/hooks/handlers/
base.py): the events it may sit on, the settings it reads, its template
variables with a sample of each; `engine validate` loops over the kinds and
names none of them."""

import ast
from pathlib import Path

import pytest

from engine.agents.spec import NEUTRAL_EVENTS
from engine.hooks.handlers import KINDS, kind_class
from engine.hooks.handlers.base import Handler

CHECK = Path(__file__).resolve().parent.parent / "engine" / "hooks" / "check.py"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_declares_what_it_takes(kind):
    cls = kind_class(kind)
    assert issubclass(cls, Handler)
    assert cls.events and set(cls.events) <= set(NEUTRAL_EVENTS), cls.events
    for key, allowed in cls.variables.items():
        missing = sorted(set(allowed) - set(cls.samples))
        assert not missing, f"{kind}: {key} uses {missing} with no sample value"
    for group, keys in cls.settings.items():
        assert isinstance(group, str) and all(isinstance(k, str) for k in keys)


def test_the_profile_check_names_no_kind():
    """A new kind brings its checks on its class; check.py needs no branch."""
    strings = {n.value for n in ast.walk(ast.parse(CHECK.read_text())) if isinstance(n, ast.Constant)}
    assert not strings & set(KINDS) - {"rule_refresh", "file_refresh"}, strings & set(KINDS)


def test_a_declared_template_variable_the_kind_does_not_give_is_an_error(tmp_path):
    """The declared variables are what validate holds a template to."""
    from engine.hooks.handlers.base import check_declared

    cls = kind_class("subagent_effort")
    said = []
    problems = check_declared(cls, {"effort": {}, "templates": {"max_output_chars": 1000, "max_range_items": 10}},
                              {"kind": "subagent_effort", "template": "{{ effort }} {{ price }}"},
                              lambda message, *path: said.append((message, path)) or message)
    assert problems and "price" in said[0][0] and said[0][1] == ("template",), said
