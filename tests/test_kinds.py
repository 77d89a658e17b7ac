"""Cases per kind (tests/kinds/<registry>_<kind>.yaml), one runner, as
sqlfluff keeps its rule cases: each case gives one kind a spec and an input
and says what comes out.  Every kind registered (transform kinds, message
step kinds, detector kinds, protect categories) has a file with at least
one case, so a new kind fails here until its behaviour is written down.

- transform: `text` in, `expect` the text out, with only `protect:`
  categories masked; the output is a fixed point (a second pass keeps it).
- step: `messages` through a pipeline of the default one with this step
  alone, `expect` the decision per message (outcome/step[/reason]).
- detector: `expect` true when the kind with these params fires on `text`.
- protect: `expect` the texts the category protects in `text`, in order.
- handler: the neutral `event` (its kind and fields, built for each agent
  that sends that kind, or the case's `agents`) through the hooks with this
  handler alone and the default profile's hooks settings (with the case's
  `settings`); `expect` the answer's parts, [what, text] in order, the same
  for every agent.  Kinds without cases yet are listed in PENDING_HANDLERS.
"""

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from engine.core import schema
from engine.core import specs
from engine.core.compile import TRANSFORM, BuildContext
from engine.core.resolve import Slot
from engine.core.yamlload import load_file
from engine.hooks.handlers import KINDS as HANDLER_KINDS
from engine.messages import compress_messages
from engine.messages.detectors import KINDS as DETECTOR_KINDS
from engine.messages.steps import KINDS as STEP_KINDS
from engine.text.model import Profile
from engine.text.pipeline import compress
from engine.text.protect import Protector, category_matcher, category_source
from engine.text.transforms import KINDS as TRANSFORM_KINDS

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).parent / "kinds"
REGISTRIES = {
    "transform": lambda: sorted(TRANSFORM_KINDS),
    "step": lambda: sorted(STEP_KINDS),
    "detector": lambda: sorted(DETECTOR_KINDS),
    "protect": lambda: sorted(p.stem for p in (REPO / "protect").glob("*.yaml")),
    "handler": lambda: sorted(HANDLER_KINDS),
}
# Handler kinds whose cases are still to be written (they need rule files,
# transcripts, state or the content cache around the event).  The list only
# shrinks: a kind that gets its file must leave it.
PENDING_HANDLERS = {"rule_refresh", "file_refresh", "reinject", "clear_state", "ccm_intercept", "ccm_learn",
                    "ccm_output", "ccm_pin", "tool_memory_record", "tool_memory_scan", "tool_memory_banner",
                    "context_monitor", "growth_refresh", "scoped_on_write"}


def _documents():
    docs = []
    for path in sorted(HERE.glob("*.yaml")):
        doc = load_file(path)
        docs.append((path, doc))
    return docs


def _cases(registry):
    out = []
    for path, doc in _documents():
        if doc.data.get("registry") == registry:
            for case in doc.data["cases"]:
                out.append(pytest.param(doc.data["name"], case, id=f"{path.stem}: {case['name']}"))
    return out


def test_case_files_are_valid_and_named_after_their_kind():
    for path, doc in _documents():
        assert not schema.check(doc), [str(e) for e in schema.check(doc)]
        data = doc.data
        assert path.stem == f"{data['registry']}_{data['name']}", f"{path.name}: name it {data['registry']}_{data['name']}.yaml"
        assert data["name"] in REGISTRIES[data["registry"]](), f"{path.name}: no {data['registry']} kind {data['name']!r}"


@pytest.mark.parametrize("registry", sorted(REGISTRIES))
def test_every_registered_kind_has_cases(registry):
    have = {doc.data["name"] for _, doc in _documents() if doc.data.get("registry") == registry and doc.data["cases"]}
    pending = PENDING_HANDLERS if registry == "handler" else set()
    missing = [kind for kind in REGISTRIES[registry]() if kind not in have and kind not in pending]
    assert not missing, f"{registry} kinds without tests/kinds/{registry}_<kind>.yaml: {missing}"
    done = sorted(have & pending)
    assert not done, f"{done} have cases now: take them off PENDING_HANDLERS"
    assert pending <= set(REGISTRIES[registry]()), f"PENDING_HANDLERS names kinds that do not exist: {pending}"


# ---- the default profile every case starts from ------------------------------

@pytest.fixture(scope="module")
def default(tmp_path_factory):
    from engine.core.profile import resolve

    resolved, _ = resolve("default", cwd=str(tmp_path_factory.mktemp("kinds-cwd")))
    return resolved


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("kinds")


# ---- transforms --------------------------------------------------------------

def _spec_errors(kind, spec):
    """The level schema's verdict on this spec, as a level file would give it."""
    level = {"kind": "level", "name": "case", "description": "one transform", "transforms": [spec]}
    return [e.message for e in schema._validator("level").iter_errors(level)]


def _slots(slots, extra):
    out = dict(slots)
    for name, given in extra.items():
        if "entries" in given:
            out[name] = Slot(type="entries", entries=dict(given["entries"]))
        else:
            out[name] = Slot(type="words", words={w.lower(): {"word": w} for w in given["words"]})
    return out


def _protector(resolved, names):
    known = {name: doc for name, doc in resolved.protect}
    assert set(names) <= set(known), f"unknown protect categories {sorted(set(names) - set(known))}"
    cats = [category_source(known[n].data, f"c{i}_") for i, n in enumerate(names)]
    return Protector(cats, resolved.settings["word_pattern"], resolved.settings["pattern_timeout_ms"])


def _profile(kind, case, base):
    spec = dict(case.get("spec", {}), kind=kind, name="case")
    assert not _spec_errors(kind, spec), _spec_errors(kind, spec)
    settings = dict(base.settings, objective=case.get("objective", base.settings["objective"]))
    resolved = replace(base, settings=settings, slots=_slots(base.slots, case.get("dictionaries", {})))
    transform = TRANSFORM_KINDS[kind](specs.build("level", TRANSFORM, spec), BuildContext(resolved))
    s = resolved.settings
    return Profile(name="kinds", level="kinds", objective=s["objective"], tokenizer=s["tokenizer"],
                   timeout_ms_per_mb=s["pattern_timeout_ms"], max_input_bytes=s["max_input_bytes"],
                   fit_factor=s["fit_factor"], protector=_protector(resolved, case.get("protect", [])),
                   transforms=[transform])


@pytest.mark.parametrize("kind,case", _cases("transform"))
def test_transform_case(kind, case, default):
    profile = _profile(kind, case, default)
    assert compress(profile, case["text"]).text == case["expect"]
    assert compress(profile, case["expect"]).text == case["expect"], "a second pass changed the output"


# ---- message steps -----------------------------------------------------------

def _pipeline(kind, spec, folder):
    """The default pipeline with this one step instead of its own."""
    from engine.messages.load import build

    step = dict(spec, kind=kind, name=spec.get("name", kind), description="the case's step")
    text = yaml.safe_dump({"kind": "messages", "name": "case", "description": "one step", "extends": "default",
                           "steps": [step]}, sort_keys=False)
    path = folder / f"step-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    path.write_text(text, encoding="utf-8")
    return build(str(path))


@pytest.mark.parametrize("kind,case", _cases("step"))
def test_step_case(kind, case, folder):
    pipe = _pipeline(kind, case.get("spec", {}), folder)
    result = compress_messages(case["messages"], pipe, **case.get("options", {}))
    assert result["stats"]["decisions"] == case["expect"]


# ---- detectors ---------------------------------------------------------------

def _detector(kind, params, folder):
    from engine.messages.load import load_detector

    text = json.dumps({"kind": "detector", "name": "case", "detector": kind, "description": "one case",
                       "params": params, "examples": {}})
    path = folder / f"detector-{hashlib.sha256(text.encode()).hexdigest()[:16]}.yaml"
    path.write_text(text, encoding="utf-8")
    return load_detector(str(path), base_dir=folder)


@pytest.mark.parametrize("kind,case", _cases("detector"))
def test_detector_case(kind, case, folder):
    assert _detector(kind, case.get("spec", {}), folder).fires(case["text"], {}) is case["expect"]


# ---- protect categories ------------------------------------------------------

@pytest.mark.parametrize("name,case", _cases("protect"))
def test_protect_case(name, case, default):
    data = load_file(REPO / "protect" / f"{name}.yaml").data
    protector = category_matcher(category_source(data, "c0_"), default.settings["word_pattern"])
    assert [t for _, t in protector.mask(case["text"]).texts(case["text"])] == case["expect"]


# ---- handler kinds -----------------------------------------------------------

class _Log:
    max_bytes = 0

    def __init__(self):
        self.lines = []

    def __call__(self, line, *rest):
        self.lines.append(line)


def _agents_for(kind, case):
    from engine.agents import table

    names = case.get("agents") or sorted(table.names())
    return [table.get(n) for n in names if table.get(n).agent_events(kind)]


@pytest.mark.parametrize("kind,case", _cases("handler"))
def test_handler_case(kind, case, default, folder):
    from engine.agents.event import make
    from engine.hooks import dispatch
    from engine.hooks.compiled import compiled

    event = dict(case["event"])
    event_kind = event.pop("kind")
    spec = dict(case.get("spec", {}), kind=kind, name="case")
    hooks = compiled(dict(default.hooks, source_line="", events={event_kind: [spec]}, **case.get("settings", {})), "default")
    agents = _agents_for(event_kind, case)
    assert agents, f"no agent sends {event_kind}"
    for agent in agents:
        trace = []
        dispatch.handle(make(agent, event_kind, cwd=str(folder), session="kinds", **event), None, _Log(),
                        hooks=hooks, trace=trace)
        parts = [[what, text] for _, what, text in trace[0].origins] if trace else []
        assert parts == case["expect"], agent.name
