"""Golden cases of the message pipeline (tests/messages/*.yaml): every
detector and every step, the seed's false positives included."""

from pathlib import Path

import pytest

from engine.core import schema
from engine.core.yamlload import load_file
from engine.messages import compress_messages, restore_messages
from engine.messages.load import load, load_detector
from engine.messages.shapes import view

HERE = Path(__file__).parent / "messages"
FILES = sorted(HERE.glob("*.yaml"))


def _cases(kind):
    out = []
    for f in FILES:
        doc = load_file(f)
        assert not schema.check(doc), schema.check(doc)
        for case in doc.data["cases"]:
            if (kind == "detector") == ("detector" in case):
                out.append(pytest.param(case, id=f"{f.stem}: {case['name']}"))
    return out


@pytest.fixture(scope="module")
def detectors():
    return {}


@pytest.mark.parametrize("case", _cases("detector"))
def test_detector_case(case, detectors):
    if case["detector"] not in detectors:
        detectors[case["detector"]] = load_detector(case["detector"])
    assert detectors[case["detector"]].fires(case["text"], {}) is case["fires"]


_PIPELINES = {}


def _pipeline(ref):
    if ref not in _PIPELINES:
        _PIPELINES[ref] = load(str(HERE / ref) if ref != "default" else ref)
    return _PIPELINES[ref]


def _subset(want, got, where="stats"):
    for k, v in want.items():
        assert k in got, f"{where}: no {k!r}"
        if isinstance(v, dict):
            _subset(v, got[k], f"{where}.{k}")
        else:
            assert got[k] == v, f"{where}.{k}: {got[k]!r} != {v!r}"


@pytest.mark.parametrize("case", _cases("rules"))
def test_rule_case(case):
    opts = dict(case.get("options", {}))
    pipe = _pipeline(opts.pop("pipeline", "default"))
    result = compress_messages(case["messages"], pipe, **opts)
    assert result["stats"]["decisions"] == case["decisions"]
    for i, wants in enumerate(case.get("contains", [])):
        text = "\n".join(t for _, t in view(result["messages"][i], i).units)
        for want in wants:
            assert want in text, f"message {i}: {want!r} not in {text!r}"
    if "output" in case:
        assert result["messages"] == case["output"]
    _subset(case.get("stats", {}), result["stats"])
    # every case restores exactly
    assert restore_messages(result["messages"], result["verbatim"]) == case["messages"]
    # a message that changed never looks like the original: it carries a marker
    for k in result["verbatim"]:
        assert result["messages"][int(k)] != case["messages"][int(k)]
