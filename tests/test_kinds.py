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
  that sends that kind and every `before`/`after` event, or the case's
  `agents`) through the hooks with this handler (and the case's `also`
  handlers) and the default profile's hooks settings (with the case's
  `settings`, merged key by key); `expect` the answer's parts, [what, value]
  in order, the same for every agent.  Each agent's run has a world of its
  own under tmp_path (_World): the project folder (`files`), HOME, the
  state folder (`state` before the events), the transcript (`transcript`),
  the content cache (`content_cache` settings), the environment (`env`);
  the `expect_*` keys check that world after the events (state, files,
  content cache entries, learned commands, tool memory, log lines).
"""

import functools
import hashlib
import itertools
import json
import os
import re
import time
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from engine.core import schema
from engine.core import specs as spec_types
from engine.core.compile import TRANSFORM, BuildContext
from engine.core.protectsource import source
from engine.core.resolve import Slot
from engine.core.yamlload import load_file
from engine.hooks.handlers import KINDS as HANDLER_KINDS
from engine.messages import compress_messages
from engine.messages.detectors import KINDS as DETECTOR_KINDS
from engine.messages.steps import KINDS as STEP_KINDS
from engine.text.model import Profile
from engine.text.pipeline import compress
from engine.text.protect import Protector, category_matcher
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
# Handler kinds whose cases are still to be written: none any more.  The
# list only shrinks (a kind that gets its file must leave it); a new kind
# comes with its file.
PENDING_HANDLERS: set[str] = set()


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
    cats = [source(known[n].data, f"c{i}_") for i, n in enumerate(names)]
    return Protector(cats, resolved.settings["word_pattern"], resolved.settings["pattern_timeout_ms"])


def _profile(kind, case, base):
    spec = dict(case.get("spec", {}), kind=kind, name="case")
    assert not _spec_errors(kind, spec), _spec_errors(kind, spec)
    settings = dict(base.settings, objective=case.get("objective", base.settings["objective"]))
    resolved = replace(base, settings=settings, slots=_slots(base.slots, case.get("dictionaries", {})))
    transform = TRANSFORM_KINDS[kind](spec_types.build("level", TRANSFORM, spec), BuildContext(resolved))
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
    protector = category_matcher(source(data, "c0_"), default.settings["word_pattern"])
    assert [t for _, t in protector.mask(case["text"]).texts(case["text"])] == case["expect"]


# ---- handler kinds -----------------------------------------------------------

PLACES = ("{project}", "{home}", "{state}", "{transcript}")
# Keys of an event that are no neutral field: its transcript, and its tool call in neutral words.
STEP_KEYS = ("kind", "records", "tool_kind", "path", "output")


class _Log:
    max_bytes = 0

    def __init__(self):
        self.lines = []

    def __call__(self, line, *rest):
        self.lines.append(line)


def _merged(base, over):
    """`over` merged into `base` key by key: mappings recursively, anything else replaces."""
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _agent_variables():
    """The environment variables the agents' YAML names (their folders, project, version): unset in a run
    unless the case's `env` sets them, so the machine's own never leak into a case."""
    from engine.agents import table

    names = {"ENGINE_REDIS_URL", "ENGINE_PROFILE"}
    for name in table.names():
        data = table.get(name).data
        names.add((data.get("home") or {}).get("env"))
        names.add(data.get("project_env"))
        names.add(((data.get("version") or {}).get("env") or {}).get("variable"))
        names.add((data.get("permissions") or {}).get("project_env"))
    return sorted(n for n in names if n)


@functools.lru_cache(maxsize=None)
def _builtin_content_cache():
    from engine.ccm.config import builtin_path

    return yaml.safe_load(Path(builtin_path()).read_text(encoding="utf-8"))


def _content_cache(case, shared):
    """The content cache settings file of a case: the built-in one with the case's `content_cache`, its
    folder in the run's HOME; one file per content in `shared`, so the engine reads each once."""
    data = _merged(_builtin_content_cache(), dict(case.get("content_cache", {}), folder="~/.ccm"))
    text = json.dumps(data, sort_keys=True)
    path = Path(shared) / f"content-cache-{hashlib.sha256(text.encode()).hexdigest()[:16]}.json"
    if not path.exists():
        path.write_text(text, encoding="utf-8")
    return path


class _World:
    """One agent's run of a case, all of it under the test's tmp_path: the project folder (the event's
    cwd), HOME (and in it the content cache's folder), the engine's state folder, the transcript; the
    shared `cache` holds compiled profiles, results and the content cache's settings files."""

    def __init__(self, root, case, monkeypatch, cache):
        root.mkdir(parents=True)
        root = root.resolve()
        self.root, self.project, self.home, self.state = root, root / "project", root / "home", root / "state"
        for folder in (self.project, self.home, self.state):
            folder.mkdir()
        self.transcript = root / "transcript.jsonl"
        self.places = dict(zip(PLACES, map(str, (self.project, self.home, self.state, self.transcript))))
        for name in _agent_variables():
            monkeypatch.delenv(name, raising=False)
        env = {"HOME": self.home, "ENGINE_STATE_DIR": self.state, "ENGINE_CACHE_DIR": cache,
               "ENGINE_CONTENT_CACHE": _content_cache(case, cache)}
        for name, value in dict(env, **{k: self.sub(v) for k, v in case.get("env", {}).items()}).items():
            monkeypatch.setenv(name, str(value))
        for name, content in case.get("files", {}).items():
            path = self.path(name)
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, dict):
                path.write_bytes(bytes.fromhex(content["hex"]))
            else:
                path.write_text(self.sub(content), encoding="utf-8")

    def sub(self, value, escape=None):
        """`value` with the placeholders filled in (in every text of a list or mapping)."""
        if isinstance(value, str):
            for place, real in self.places.items():
                value = value.replace(place, escape(real) if escape else real)
            return value
        if isinstance(value, list):
            return [self.sub(v, escape) for v in value]
        if isinstance(value, dict):
            return {self.sub(k, escape): self.sub(v, escape) for k, v in value.items()}
        return value

    def path(self, name):
        name = self.sub(name)
        if name.startswith("~/"):
            return self.home / name[2:]
        return Path(name) if Path(name).is_absolute() else self.project / name

    def event(self, agent, step, default_records):
        """The neutral Event of one step (kind and fields), its transcript written first."""
        from engine.agents.event import make

        fields = {k: v for k, v in step.items() if k not in STEP_KEYS}
        if "tool_kind" in step:
            tools = agent.tools(step["tool_kind"])
            fields.setdefault("tool", tools["names"][0])
            if "path" in step:
                fields["tool_input"] = dict(fields.get("tool_input") or {}, **{tools["path"][0]: step["path"]})
        if "output" in step:
            fields["tool_output"] = _shaped(agent, step["output"])
        records = step.get("records", default_records)
        if records is not None:
            lines = "".join(json.dumps(self.sub(r)) + "\n" for r in records)
            self.transcript.write_text(lines, encoding="utf-8")
            fields.setdefault("transcript", str(self.transcript))
        return make(agent, step["kind"], **dict({"cwd": str(self.project), "session": "kinds"}, **self.sub(fields)))

    def same(self, expected, actual):
        """`actual` is what `expected` says: equal, after the placeholders; {match: REGEX} for a text."""
        if isinstance(expected, dict) and set(expected) == {"match"}:
            pattern = self.sub(expected["match"], escape=re.escape)
            return isinstance(actual, str) and re.fullmatch(pattern, actual, re.S) is not None
        if isinstance(expected, dict):
            return isinstance(actual, dict) and set(expected) == set(actual) and all(
                self.same(v, actual[k]) for k, v in expected.items())
        if isinstance(expected, list):
            return isinstance(actual, (list, tuple)) and len(expected) == len(actual) and all(
                self.same(e, a) for e, a in zip(expected, actual))
        if isinstance(expected, str):
            return actual == self.sub(expected)
        return type(expected) is type(actual) and expected == actual

    def fields(self, expected, actual):
        """The fields `expected` names have those values in `actual` (a mapping)."""
        return isinstance(actual, dict) and all(self.same(v, actual.get(k)) for k, v in expected.items())


def _handler_errors(events):
    """The profile schema's verdict on the case's handlers, as a profile would give them: each known
    to the schema and complete for its kind (once per distinct set: cases share their specs)."""
    return _handler_errors_of(json.dumps(events, sort_keys=True))


@functools.lru_cache(maxsize=None)
def _handler_errors_of(text):
    import jsonschema

    events = json.loads(text)
    validator = schema._validator("profile")
    doc = {"kind": "profile", "name": "case", "hooks": {"events": events}}
    errors = [e.message for e in validator.iter_errors(doc)]
    complete = jsonschema.Draft202012Validator(validator.schema["$defs"]["complete_handler"])
    for specs in events.values():
        for spec in specs:
            errors += [f"{spec['name']}: incomplete for its kind ({e.message})" for e in complete.iter_errors(spec)]
    return errors


def _shaped(agent, output):
    """A shell output (a text, or {stdout, stderr}) in the agent's shape: its two streams, or its one
    text (stdout, a line break, stderr), under its `output.text` path (the whole output when empty)."""
    stdout, stderr = (output, "") if isinstance(output, str) else (output.get("stdout", ""), output.get("stderr", ""))
    spec = agent.tools("shell").get("output") or {}
    if "stdout" in spec:
        return {spec["stdout"]: stdout, spec.get("stderr") or "stderr": stderr}
    text = stdout + ("\n" if stdout and stderr and not stdout.endswith("\n") else "") + stderr
    for key in reversed((spec.get("text") or "").split(".") if spec.get("text") else []):
        text = {key: text}
    return text


def _takes(agent, step):
    """Does the agent send this step: its event, a tool of its kind, a path field for its path?"""
    if not agent.agent_events(step["kind"]):
        return False
    if "tool_kind" in step and not agent.tools(step["tool_kind"]).get("names"):
        return False
    return "path" not in step or bool(agent.tools(step.get("tool_kind", "")).get("path"))


def _agents_for(steps, case):
    """The case's agents (default: every agent) that send every event of the case."""
    from engine.agents import table

    names = case.get("agents") or table.names()
    return [table.get(n) for n in names if all(_takes(table.get(n), s) for s in steps)]


@pytest.fixture(scope="module")
def kinds_cache(tmp_path_factory):
    """Compiled profiles and results, shared by the module's handler cases (nothing of a case's own)."""
    return tmp_path_factory.mktemp("kinds-cache")


def _hooks(kind, case, default):
    event_kind = case["event"]["kind"]
    events = {event_kind: [dict(case.get("spec", {}), kind=kind, name="case")]}
    for name, specs in case.get("also", {}).items():
        events.setdefault(name, []).extend(specs)
    assert not _handler_errors(events), _handler_errors(events)
    from engine.hooks.compiled import compiled

    return compiled(dict(_merged(default.hooks, case.get("settings", {})), source_line="", events=events), "default")


def _check_world(world, case, hooks, log, agent):
    """The case's expect_* keys against the world after the events."""
    said = f"{agent.name}: "
    if "expect_state" in case or "expect_state_keys" in case:
        from engine.hooks.state import open_state

        snap = open_state(case["event"].get("session", "kinds"), hooks["state"], log).get()
        for key, value in case.get("expect_state", {}).items():
            if value is None:
                assert key not in snap, f"{said}state {key!r} is {snap[key]!r}; expected none"
            else:
                assert world.same(value, snap.get(key)), f"{said}state {key!r} is {snap.get(key)!r}; expected {value!r}"
        for pattern in case.get("expect_state_keys", ()):
            assert any(re.fullmatch(pattern, str(k)) for k in snap), f"{said}no state key matches {pattern!r}: {sorted(snap)}"
    for name, text in case.get("expect_files", {}).items():
        path = world.path(name)
        if text is None:
            assert not path.exists(), f"{said}{name} exists"
        else:
            assert path.is_file(), f"{said}{name} is missing"
            got = path.read_text(encoding="utf-8")
            assert world.same(text, got), f"{said}{name} holds {got!r}; expected {text!r}"
    if "expect_cache" in case or "expect_learned" in case:
        from engine.ccm import config
        from engine.ccm.learned import all_projects
        from engine.ccm.store import Store

        settings = config.load()
        store = Store(settings, log=log)
        metas = sorted((store.meta(k) for k in store.keys()), key=lambda m: m["created"])
        got = [{"text": store.get(m["key"]).decode("utf-8"), "pin": m["pin"]["level"], "reason": m["pin"]["reason"],
                "commands": [s.get("command") for s in m["sources"]]} for m in metas]
        if "expect_cache" in case:
            want = case["expect_cache"]
            assert len(got) == len(want) and all(world.fields(w, g) for w, g in zip(want, got)), \
                f"{said}the content cache holds {got!r}; expected {want!r}"
        if "expect_learned" in case:
            learned = {p: sorted(found) for p, found in all_projects(config.folder(settings),
                                                                     settings["learned"]).items() if found}
            want = {world.sub(p): sorted(v) for p, v in case["expect_learned"].items()}
            assert learned == want, f"{said}learned {learned!r}; expected {want!r}"
    if "expect_memory" in case:
        from engine.memory import entries

        got = entries(hooks)
        want = case["expect_memory"]
        # in any order: entries recorded within one second have no order
        assert len(got) == len(want) and any(all(world.fields(w, g) for w, g in zip(want, order))
                                             for order in itertools.permutations(got)), \
            f"{said}the tool memory holds {got!r}; expected {want!r}"
    for pattern in case.get("expect_log", []):
        pattern = world.sub(pattern, escape=re.escape)
        assert any(re.search(pattern, line) for line in log.lines), f"{said}no log line matches {pattern!r}: {log.lines}"


@pytest.mark.parametrize("kind,case", _cases("handler"))
def test_handler_case(kind, case, default, kinds_cache, tmp_path, monkeypatch):
    from engine.hooks import deadline, dispatch
    from engine.hooks.state import open_state

    hooks = _hooks(kind, case, default)
    steps = [*case.get("before", []), case["event"], *case.get("after", [])]
    agents = _agents_for(steps, case)
    assert agents, f"no agent sends {[s['kind'] for s in steps]}"
    # Durability is not what these cases are about: the content cache and the state fsync every write,
    # which costs most of a case's time on a busy disk.
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    for agent in agents:
        world = _World(tmp_path / agent.name, case, monkeypatch, kinds_cache)
        log = _Log()
        if case.get("state"):
            open_state(case["event"].get("session", "kinds"), hooks["state"], log).update(world.sub(case["state"]))
        parts = None
        for i, step in enumerate(steps):
            trace = []
            event = world.event(agent, step, case.get("transcript"))
            # each event is a hook process of its own: its deadline (and the share of it a refresh may
            # spend compressing) counts from now, not from when this test process started
            monkeypatch.setattr(deadline, "STARTED", time.monotonic())
            dispatch.handle(event, None, log, hooks=hooks, trace=trace)
            if i == len(case.get("before", [])):  # the case's event
                parts = [[what, value] for _, what, value in trace[0].origins] if trace else []
        assert world.same(case["expect"], parts), f"{agent.name}: the answer's parts are {parts!r}; expected {case['expect']!r}"
        _check_world(world, case, hooks, log, agent)
