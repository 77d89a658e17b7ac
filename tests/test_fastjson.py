"""engine.base.fastjson must read exactly what json reads (it only exists to
keep `re` off the hook hot path) and write state that json reads back."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.base.fastjson import dumps_flat, loads

SAMPLES = ['{"a": [1, 2.5, null, true, false, "x\\u00e9"]}', " {} ", "[]", '"s"', "-0.5e3", '{"a":NaN}',
           '{"session_id": "s", "prompt": "line\\nnext \\"quoted\\""}']
BROKEN = ['{"turn": 5', "[1] x", "", "nul", "{", "[1,", '{"a" 1}', "\x00"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@pytest.mark.parametrize("text", SAMPLES)
def test_reads_what_json_reads(text):
    got, want = loads(text), json.loads(text)
    assert repr(got) == repr(want)


@pytest.mark.parametrize("text", BROKEN)
def test_malformed_input_is_a_value_error(text):
    with pytest.raises(ValueError):
        loads(text)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_round_trip_of_any_json_value(value):
    text = json.dumps(value)
    assert loads(text) == json.loads(text)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(), st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(), max_size=6))
def test_state_written_flat_reads_back(state):
    assert json.loads(dumps_flat(state)) == state
    assert dumps_flat(state) == json.dumps(state, separators=(",", ":"))  # the very text, escapes included


@settings(max_examples=300)
@given(json_values)
def test_dumps_writes_what_json_writes(value):
    from engine.base.fastjson import dumps

    assert dumps(value) == json.dumps(value, ensure_ascii=False)
