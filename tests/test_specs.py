"""A kind is declared once (issue 26).

- A default lives in the schema (`default:`) or the built-in YAML, never in
  Python: no engine module looks a key of a spec or of the settings up with
  a default of its own (`spec.get("min_depth", 1)`, `settings.get("x") or
  {}`), read from the code itself; and every `default` of the schemas is
  what the compiled specs hold where a document says nothing.
- Specs are typed and frozen, built once when the profile (or the message
  pipeline) compiles: transforms, message steps and detectors get a frozen
  dataclass made from their schema branch (engine/core/specs.py); handler
  kinds declare a frozen record (handlers/base.py) whose fields are handler
  keys of the schema.
- The core names no hooks setting: resolve merges the ones the schema
  declares (engine/core/resolve.py hook_keys).
"""

import ast
import copy
import dataclasses
import json
import pickle
from pathlib import Path

import pytest

from engine.base.paths import install_copy_name
from engine.core import defaults, specs
from engine.core.compile import TRANSFORM
from support import code

REPO = Path(__file__).resolve().parent.parent
ENGINE = REPO / "engine"

# ---- no default in Python ------------------------------------------------------

# The names a spec or the settings go by in the engine's code.
RECEIVERS = {"spec", "specs", "params", "settings", "hooks", "conf", "memory", "style", "icpt", "trust", "transcript"}

# Data no compile step fills in, module -> the keys it may still look up
# with a default.  Profile documents before they are merged (resolution,
# the trust boundary, the hooks check) say what is absent there: an absent
# key inherits, or says nothing; it has no default.  Agent declarations
# (pipelines/agents/*.yaml) come with the schema's defaults filled in
# (engine/agents/table.py), but for keys whose absence is itself the
# meaning.  Protect rules are filled where they compile
# (engine/core/protectsource.py), golden cases where they load; the content
# cache's settings require every key.  The list only shrinks.
NOT_COMPILED = {
    # profile documents while they are resolved and checked: absent = inherit / nothing said
    "engine/core/resolve.py": {"use", "files", "add", "remove", "events"},
    "engine/core/boundary.py": {"events"},
    "engine/core/trust_store.py": {"events"},
    "engine/hooks/check.py": {"*"},  # *: each settings group it checks for what is missing
    # agent declarations (filled in by the table)
    "engine/agents/spec.py": {"events"},  # an answer without `events`: taken where shown, counted on nowhere
    "engine/replay/payload.py": {"stdout", "stderr"},  # a shape without `text` or `stdout`; a default would make `text` shapes look like stdout ones
}


def _receiver(node):
    """The names along `a.b[c].d` (the object a `.get` is called on)."""
    names = []
    while True:
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Name):
            names.append(node.id)
            return names
        else:
            return names


def _literal(node):
    """A literal other than None: a constant, or a tuple, list, set or dict display."""
    if isinstance(node, ast.Constant):
        return node.value is not None
    return isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict))


def _key(call):
    arg = call.args[0] if call.args else None
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else "*"


def defaults_in_python(root=ENGINE):
    """(module, line, key, code) of every `.get(key, literal)` and `.get(key) or
    literal` on a spec or settings object."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        for node in code.nodes(path):
            call = None
            if isinstance(node, ast.Call) and len(node.args) == 2 and _literal(node.args[1]):
                call = node
            elif (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2
                  and isinstance(node.values[0], ast.Call) and len(node.values[0].args) == 1 and _literal(node.values[1])):
                call = node.values[0]
            if call is None or not isinstance(call.func, ast.Attribute) or call.func.attr != "get":
                continue
            if RECEIVERS & set(_receiver(call.func.value)):
                found.append((rel, node.lineno, _key(call), ast.unparse(node)))
    return found


def test_no_engine_module_holds_a_default_of_a_spec_or_setting():
    """Defaults live in the schema or the YAML: a spec or the settings are read
    as compiled (`spec["min_depth"]`, `spec.min_depth`), complete."""
    bad = [f"{m}:{line}: {code}" for m, line, key, code in defaults_in_python()
           if key not in NOT_COMPILED.get(m, ())]
    assert not bad, "a default in Python; put it in the schema (`default:`) or the built-in YAML:\n" + "\n".join(bad)


def test_the_agents_table_holds_the_schema_defaults(tmp_path, monkeypatch):
    """The agents table fills each document's defaults in where it reads the
    YAML, and its JSON copy is stamped with the schema's file as well as the
    YAML's: a copy made before (without them, or by another schema) is not read."""
    import os

    from engine.agents import table

    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(table, "_table", None)
    root = defaults.schema("agent")
    for name, data in table.agents().items():
        assert data == defaults.fill(root, data), name  # nothing left to fill
    assert "exit_fields" in table.agents()["codex"]["failure"]  # codex declares no `failure`
    copy_path = tmp_path / install_copy_name(table._COPY)
    stamp = json.loads(copy_path.read_text(encoding="utf-8"))["stamp"]
    assert stamp[1][0] == "agent.schema.json"
    old = {"stamp": [stamp[0], *stamp[2:]], "value": {"codex": {"name": "codex", "old": True}}}
    copy_path.write_text(json.dumps(old), encoding="utf-8")
    monkeypatch.setattr(table, "_table", None)
    assert "old" not in table.agents()["codex"]
    assert os.path.getsize(copy_path) > len(json.dumps(old))  # written again, filled


def test_secret_rules_reach_a_rule_set_with_the_schema_defaults(tmp_path, monkeypatch):
    """A protect category's rules and allow-lists are filled where it compiles
    and in the redactor's cached copy (engine/core/protectsource.py): nothing
    is left to fill, and the schema is a source of the copy."""
    from engine.core import cache, protectsource, redact, schema
    from engine.core.yamlload import load_file

    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path))
    root = defaults.schema("protect")
    rule, allow = defaults.at(root, "/properties/rules/items"), defaults.at(root, "/properties/allow/items")
    source = protectsource.source(load_file(REPO / "protect" / "secrets.yaml").data, "c_")
    copied = redact.sources(("secrets",))
    for rules, lists in ((source.rules, source.allow), (copied["rules"], copied["allow"])):
        assert rules and all({"keywords", "starts", "allow"} <= set(r) for r in rules)
        assert all(r == defaults.fill(rule, r, root) for r in rules)
        assert lists and all(a == defaults.fill(allow, a, root) and "target" in a for a in lists)
    entry = json.loads(Path(cache.entry_path(("redact-rules", "secrets"), ".json")).read_text(encoding="utf-8"))
    assert schema.file("protect") in [src for src, _digest in entry["sources"]]


def test_the_scan_sees_what_it_should(tmp_path):
    """The scan is not blind: it finds each way of writing a default."""
    import textwrap

    code = textwrap.dedent('''
        a = spec.get("x", 1)
        b = self.spec.get("x", ())
        c = ctx.settings["memory"].get("x", [])
        d = spec.get("x") or {}
        e = spec.get("x")
        f = other.get("x", 1)
    ''')
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "probe.py").write_text(code, encoding="utf-8")
    found = sorted(line for _m, line, _k, _c in defaults_in_python(tmp_path / "engine"))
    assert found == [2, 3, 4, 5], found


def test_the_exemptions_are_still_needed():
    """NOT_COMPILED only shrinks: a module that no longer reads such a key leaves it."""
    seen = {(m, k) for m, _line, k, _c in defaults_in_python()}
    stale = sorted((m, k) for m, keys in NOT_COMPILED.items() for k in keys if (m, k) not in seen)
    assert not stale, f"take these off NOT_COMPILED: {stale}"


def test_overflow_names_no_digest_title_default():
    """It used to hold 120, which the built-in YAML set too: now the schema alone does."""
    from engine.core.defaults import at, schema

    text = (ENGINE / "hooks" / "overflow.py").read_text(encoding="utf-8")
    assert "120" not in text
    assert at(schema("profile"), "/$defs/handler/properties/digest_title_chars")["default"] == 120
    assert "digest_title_chars" not in (REPO / "pipelines" / "default.yaml").read_text(encoding="utf-8")


# ---- the schemas' defaults are what compiled specs hold ----------------------------

def _strip(node, value, root, path=()):
    """Take every key out of `value` whose schema has a default, at every depth:
    [(path, default)] of what was taken out."""
    out = []
    for part in defaults.parts(node, value, root):
        if isinstance(value, dict):
            for key, child in (part.get("properties") or {}).items():
                child = defaults.resolve(child, root)
                if key in value and "default" in child:
                    del value[key]
                    out.append((path + (key,), child["default"]))
                elif key in value:
                    out.extend(_strip(child, value[key], root, path + (key,)))
        elif isinstance(value, list) and isinstance(part.get("items"), dict):
            for i, item in enumerate(value):
                out.extend(_strip(part["items"], item, root, path + (i,)))
    return out


def _at(spec, path):
    for key in path:
        spec = spec[key] if isinstance(key, int) or isinstance(spec, dict) else getattr(spec, key)
    return spec


def _plain(value):
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _builtin(kind):
    from engine.core.yamlload import load_file

    folders = {"level": REPO / "pipelines" / "levels", "messages": REPO / "pipelines" / "messages",
               "detector": REPO / "pipelines" / "messages" / "detectors"}
    return [load_file(p).data for p in sorted(folders[kind].glob("*.yaml")) if load_file(p).data.get("kind") == kind]


def _documents():
    """(schema kind, pointer, a built-in mapping of that place) for every transform, step and detector."""
    out = []
    for level in _builtin("level"):
        out += [("level", TRANSFORM, t) for t in level["transforms"]]
    for pipe in _builtin("messages"):
        out += [("messages", "/properties/steps/items", s) for s in pipe.get("steps", ())]
    out += [("detector", "", d) for d in _builtin("detector")]
    return out


def _cases():
    return [pytest.param(k, p, d, id=f"{k}:{d['name']}") for k, p, d in _documents()]


def test_built_in_documents_use_every_kind():
    """The check below sees every kind: each one is in a built-in document."""
    from engine.messages.detectors import KINDS as DETECTORS
    from engine.messages.steps import KINDS as STEPS
    from engine.text.transforms import KINDS as TRANSFORMS

    seen = {(k, d.get("kind") if k != "detector" else d["detector"]) for k, _p, d in _documents()}
    want = {("level", k) for k in TRANSFORMS} | {("messages", k) for k in STEPS} | {("detector", k) for k in DETECTORS}
    assert want <= seen, sorted(want - seen)


@pytest.mark.parametrize("kind,pointer,data", _cases())
def test_a_key_left_out_is_the_schema_default_in_the_compiled_spec(kind, pointer, data):
    """Every key with a default, taken out of a built-in document, comes back
    as the default; every key the document gives is the spec's field."""
    root = defaults.schema(kind)
    node = defaults.at(root, pointer)
    given = copy.deepcopy(data)
    taken = _strip(node, given, root)
    spec = specs.build(kind, pointer, given)
    for path, default in taken:
        assert _plain(_at(spec, path)) == default, (path, default)
    full = specs.build(kind, pointer, data)
    for key, value in data.items():
        if not isinstance(value, (dict, list)):
            assert getattr(full, key) == value, key


def test_every_schema_default_is_one_a_kind_reads():
    """A default no kind reads is dead: every handler key with a default is a
    field of some kind's Spec; every transform, step or detector default sits
    on its own branch (a spec field by construction)."""
    from engine.hooks.handlers import KINDS, kind_class

    root = defaults.schema("profile")
    handler = root["$defs"]["handler"]["properties"]
    with_default = {k for k, v in handler.items() if "default" in defaults.resolve(v, root)}
    read = {f for kind in KINDS for f in kind_class(kind).Spec.FIELDS}
    assert with_default <= read, sorted(with_default - read)


# ---- handler kinds declare their spec ----------------------------------------

DERIVED = {"scope"}  # worked out once at compile time (Refresh.compile_spec), not written in a profile


def test_handler_spec_fields_are_handler_keys_of_the_schema():
    from engine.hooks.handlers import KINDS, kind_class

    handler = defaults.schema("profile")["$defs"]["handler"]["properties"]
    for kind in KINDS:
        fields = set(kind_class(kind).Spec.FIELDS)
        assert {"name", "kind", "enabled"} <= fields, kind
        assert fields - DERIVED <= set(handler), (kind, sorted(fields - DERIVED - set(handler)))


def _default_hooks():
    from engine.core.profile import resolve

    resolved, _ = resolve("default", cwd=str(REPO))
    return resolved


def test_handler_specs_compile_with_the_schema_defaults():
    """Every handler key its kind reads with a default, left out of the built-in
    profile, is the schema's default in the compiled settings; the rest of a
    handler's spec is what the profile says."""
    from engine.hooks.compiled import compiled
    from engine.hooks.handlers import kind_class

    resolved = _default_hooks()
    root = defaults.schema("profile")
    handler = root["$defs"]["handler"]
    given = copy.deepcopy(resolved.hooks)
    taken = {}
    for specs_ in given["events"].values():
        for h in specs_:
            taken[h["name"]] = _strip(handler, h, root)
    hooks = compiled(given, "default")
    checked = 0
    for specs_ in hooks["events"].values():
        for h in specs_:
            spec = kind_class(h["kind"]).Spec(h)
            for path, default in taken[h["name"]]:
                if path[0] in spec.FIELDS:
                    assert _at(h, path) == default, (h["name"], path)
                    if len(path) == 1:
                        assert spec[path[0]] == (tuple(default) if isinstance(default, list) else default)
                    checked += 1
    assert checked > 10, checked


def test_settings_defaults_fill_a_profile_without_them():
    from engine.hooks.compiled import compiled

    hooks = compiled({}, "bare")
    assert hooks["events"] == {} and hooks["source_line"] == "" and hooks["context"] == {"growth_bytes_per_token": 1}
    assert hooks["autocompact_pct"] == 0


def test_specs_are_frozen_and_typed():
    from engine.base.record import FrozenRecordError
    from engine.hooks.handlers.refresh import Refresh, RefreshSpec

    spec = specs.build("level", TRANSFORM, {"kind": "heading_labels", "name": "h", "pattern": "x", "label": "y"})
    assert spec.min_depth == 1 and spec.allow == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.min_depth = 2  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(spec)) == spec
    from engine.hooks.compiled import compiled

    resolved = _default_hooks()
    rules = next(h for hs in compiled(resolved.hooks, "default")["events"].values() for h in hs if h["name"] == "rules")
    r = Refresh(rules, {}, None)
    assert isinstance(r.spec, RefreshSpec) and r.spec.overflow == "pending" and r.spec["level"] == r.spec.level
    assert isinstance(r.spec.sources, tuple)
    with pytest.raises(FrozenRecordError):
        r.spec.level = "light"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(r.spec)) == r.spec


def test_the_compiled_profile_caches_as_before(tmp_path):
    """The hooks settings stay plain JSON (the hook reads them without
    unpickling); the compiled profile pickles with its transforms."""
    from engine.core.profile import build

    profile = build("default", cwd=str(tmp_path))
    assert json.loads(json.dumps(profile.hooks)) == profile.hooks
    again = pickle.loads(pickle.dumps(profile))
    from engine.text.pipeline import compress

    text = (REPO / "examples" / "CLAUDE.md").read_text(encoding="utf-8")
    assert compress(again, text).text == compress(profile, text).text


# ---- the core names no hooks setting ------------------------------------------------

def test_resolve_takes_the_hooks_settings_from_the_schema():
    from engine.core.resolve import hook_keys

    props = defaults.schema("profile")["properties"]["hooks"]["properties"]
    scalars, mappings = hook_keys()
    assert set(scalars) | set(mappings) == set(props) - {"events"}
    assert all(props[k]["type"] == "object" for k in mappings)
    names = set(props) - {"events"}
    for module in ("resolve.py", "compile.py"):
        said = {text for _, text in code.strings(ENGINE / "core" / module, docstrings=True)}
        assert not said & names, (module, sorted(said & names))


def test_a_setting_declared_only_in_the_schema_is_merged(tmp_path, monkeypatch):
    """A subsystem adds a setting to the schema and nothing else: a child
    profile's value of it overrides, a mapping merges key by key."""
    from engine.core.profile import resolve

    child = tmp_path / "child.yaml"
    child.write_text("kind: profile\nname: child\nextends: default\nhooks:\n  omitted_names_max: 7\n"
                     "  context: {growth_bytes_per_token: 2}\n  in_view: {max_tail_bytes: 4096}\n", encoding="utf-8")
    resolved, _ = resolve(str(child), cwd=str(tmp_path))
    base, _ = resolve("default", cwd=str(tmp_path))
    assert resolved.hooks["omitted_names_max"] == 7
    assert resolved.hooks["context"] == {**base.hooks["context"], "growth_bytes_per_token": 2}
    assert resolved.hooks["in_view"] == {**base.hooks["in_view"], "max_tail_bytes": 4096}


def _loaders():
    from engine.ccm import config
    from engine.replay import render
    from engine.session import style

    return {"content_cache": config.load, "report": style.load, "replay_report": render.load}


@pytest.mark.parametrize("kind,builtin,path,default", [
    ("content_cache", "pipelines/settings/content_cache.yaml", ("intercept", "mode_when_unnamed"), "default"),
    ("content_cache", "pipelines/settings/content_cache.yaml", ("intercept", "unlisted_mode"), "pass"),
    ("report", "pipelines/reports/session.yaml", ("errors", "skip_lines"), []),
    ("report", "pipelines/reports/session.yaml", ("errors", "strip"), []),
    ("replay_report", "pipelines/reports/replay.yaml", ("unpriced",), "n/a"),
])
def test_a_users_file_written_before_a_key_was_added_takes_its_schema_default(tmp_path, monkeypatch, kind, builtin,
                                                                               path, default):
    """A user's own settings or style file, a copy of an older built-in one,
    still loads after a key was added: the key takes its schema default
    (was: the file failed, and with it the content cache or the report)."""
    import yaml

    monkeypatch.setenv("ENGINE_CACHE_DIR", str(tmp_path / "cache"))
    data = yaml.safe_load((REPO / builtin).read_text(encoding="utf-8"))
    node = data
    for key in path[:-1]:
        node = node[key]
    assert node.pop(path[-1]) is not None  # the built-in file sets it
    old = tmp_path / f"{kind}.yaml"
    old.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    loaded = _loaders()[kind](str(old))
    for key in path:
        loaded = loaded[key]
    assert loaded == default
