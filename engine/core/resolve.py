"""Profile resolution: follow `extends:`, apply add/remove, merge dictionaries,
expand the level chain.  The result is plain data (see `engine profile show`)."""

from dataclasses import dataclass, field
from pathlib import Path

from engine.base.errors import UserError, ValidationErrors, suggest

# What a slot's own mapping may hold: a slot by one of these names is
# almost always an edit indented one level too little.
SLOT_EDITS = ("use", "files", "add", "remove")

SCALARS: tuple[str, ...] = ("level", "objective", "tokenizer", "word_pattern", "pattern_timeout_ms", "cache", "max_input_bytes",
           "fit_factor")


def hook_keys():
    """(scalar keys, mapping keys) of the hooks settings, in the schema's
    order.  The subsystems declare their settings once, as properties of
    `hooks` in schemas/profile.schema.json; the core names none of them.  A
    mapping (`"type": "object"`) merges key by key along `extends`, anything
    else overrides; `events` merges handler by handler (_merge_hooks)."""
    from .defaults import schema

    props = schema("profile")["properties"]["hooks"]["properties"]
    keys = [k for k in props if k != "events"]
    mappings = tuple(k for k in keys if props[k].get("type") == "object")
    return tuple(k for k in keys if k not in mappings), mappings


@dataclass
class Slot:
    """One dictionary slot of a profile, merged from its files and edits."""

    type: str = ""  # "entries" or "words"
    entries: dict = field(default_factory=dict)
    words: dict = field(default_factory=dict)  # word -> {word, guards...}, insertion-ordered
    files: list = field(default_factory=list)
    lists: dict = field(default_factory=dict)  # name -> [word]: the guards' \L<name>, a later file's list wins

    def merge_doc(self, doc):
        data = doc.data
        kind = "entries" if "entries" in data else "words"
        self._type_check(kind, doc, (kind,))
        if kind == "entries":
            self.entries.update(data["entries"])
        else:
            for w in data["words"]:
                entry = {"word": w} if isinstance(w, str) else {k: v for k, v in w.items() if k != "note"}
                self.words[entry["word"].lower()] = entry
        self.lists.update(data.get("lists", {}))
        self.files.append(doc.file)

    def _type_check(self, kind, doc, path):
        if self.type and self.type != kind:
            raise doc.error(f"this dictionary holds {kind} but the slot holds {self.type}; use one kind per slot", path)
        self.type = kind

    def copy(self):
        return Slot(self.type, dict(self.entries), dict(self.words), list(self.files), dict(self.lists))


@dataclass
class Resolved:
    name: str
    file: str
    settings: dict  # scalars
    protect: list  # [(category name, doc)]
    slots: dict  # slot name -> Slot
    hooks: dict = field(default_factory=dict)
    hook_origins: dict = field(default_factory=dict)  # handler name -> (doc, path) where last defined
    level_chain: list = field(default_factory=list)  # level docs, lowest first
    setting_origins: dict = field(default_factory=dict)  # setting -> (doc, path) where last set
    transforms: list = field(default_factory=list)  # [(spec, doc, index)]
    ignored: list = field(default_factory=list)  # machine-level keys a project profile set (engine/core/boundary.py)
    # Slots a profile that extends another names and does not inherit, when
    # its own level is compiled: name -> (doc, path).  Only a transform naming
    # one uses it; the compile calls one that no transform of the level uses
    # and that is close to a slot it does use a misspelled name.
    new_slots: dict = field(default_factory=dict)

    def show(self):
        """Plain data for `engine profile show`."""
        return {
            "name": self.name,
            "file": self.file,
            **self.settings,
            "levels": [d.data["name"] for d in self.level_chain],
            "transforms": [f"{d.data['name']}/{s['name']} ({s['kind']})" for s, d, _ in self.transforms],
            "protect": [name for name, _ in self.protect],
            "hooks": self.hooks,
            "dictionaries": {
                k: {"files": s.files, **({"entries": s.entries} if s.type == "entries" else {"words": list(s.words.values())}),
                    **({"lists": s.lists} if s.lists else {})}
                for k, s in self.slots.items()
            },
        }


def resolve_profile(lib, path, level_override=None, _seen=()):
    doc = lib.load(path, "profile")
    data = doc.data
    base_dir = Path(doc.file).parent
    if str(path) in _seen:
        raise doc.error("profiles extend each other in a circle; remove one `extends:`", ("extends",))
    settings, protect, slots, hooks, origins, setting_origins = _inherited(lib, doc, path, base_dir, _seen)
    # Each part is resolved even when another failed, so one run reports
    # every unknown name, not just the first.
    errors = []
    attempt = _attempter(errors)
    if "hooks" in data:
        attempt(_merge_hooks, doc, data["hooks"], hooks, origins)
    for key in SCALARS:
        if key in data:
            settings[key] = data[key]
            setting_origins[key] = (doc, (key,))
    if "protect" in data:
        protect = attempt(_protect, lib, doc, data["protect"], protect, base_dir) or protect
    inherited_slots = set(slots)
    _resolve_slots(lib, doc, slots, base_dir, errors, attempt)
    missing = [k for k in SCALARS if k not in settings]
    if missing:
        errors.append(doc.error(f"set {', '.join(missing)} here or extend a profile that does (extends: default)"))
    res = Resolved(data["name"], doc.file, settings, protect, slots, hooks, origins)
    res.setting_origins = setting_origins
    if not _seen and not missing:
        _resolve_level(lib, res, level_override, base_dir, attempt)
        if level_override is None and inherited_slots:  # a root profile declares the slots of every level
            res.new_slots = {k: (doc, ("dictionaries", k)) for k in slots if k not in inherited_slots}
    if errors:
        raise ValidationErrors(errors)
    return res


def _inherited(lib, doc, path, base_dir, _seen):
    """(settings, protect, slots, hooks, hook origins, setting origins) the
    profile `doc` starts from: copies of the one it extends, else empty."""
    data = doc.data
    if "extends" not in data:
        return {}, [], {}, {}, {}, {}
    parent_path = lib.locate(data["extends"], "profile", base_dir, (doc, ("extends",)))
    base = resolve_profile(lib, parent_path, None, _seen + (str(path),))
    return (dict(base.settings), list(base.protect), {k: v.copy() for k, v in base.slots.items()},
            _copy_hooks(base.hooks), dict(base.hook_origins), dict(base.setting_origins))


def _attempter(errors):
    """attempt(fn, *args): fn's value, or None with its error(s) added to `errors`."""

    def attempt(fn, *args):
        try:
            return fn(*args)
        except ValidationErrors as exc:
            errors.extend(exc.errors)
        except UserError as exc:
            errors.append(exc)
        return None

    return attempt


def _resolve_slots(lib, doc, slots, base_dir, errors, attempt):
    """The profile's dictionary slots, into `slots`; a slot edit (SLOT_EDITS)
    sitting where a new slot's name goes is an error that says where it belongs."""
    data = doc.data
    above = None
    for slot_name, spec in data.get("dictionaries", {}).items():
        if slot_name in SLOT_EDITS and slot_name not in slots:
            under = f"under `{above}:`" if above else "under the slot it changes"
            errors.append(doc.error(
                f"`{slot_name}:` sits directly under `dictionaries:`, where it names a new dictionary slot; "
                f"indent it {under} (two more spaces)", ("dictionaries", slot_name), key=True))
            continue
        above = slot_name
        slot = attempt(_slot, lib, doc, slot_name, spec, slots.get(slot_name), base_dir)
        if slot is not None:
            slots[slot_name] = slot


def _resolve_level(lib, res, level_override, base_dir, attempt):
    """The level chain of the profile at the top (`level_override`, else its
    `level`, read relative to the file that sets it) and its transforms."""
    settings, setting_origins = res.settings, res.setting_origins
    level_ref = level_override or settings["level"]
    origin = None if level_override else setting_origins.get("level")
    level_dir = Path(origin[0].file).parent if origin else base_dir  # relative to the file that says it
    chain = attempt(_level_chain, lib, level_ref, level_dir, origin)
    if chain:
        res.level_chain = chain
        res.settings["level"] = chain[-1].data["name"]
        attempt(_collect_transforms, res)


def _protect(lib, doc, spec, inherited, base_dir):
    if isinstance(spec, list):
        out, items = [], [(ref, ("protect", i)) for i, ref in enumerate(spec)]
    else:
        out = list(inherited)
        for i, name in enumerate(spec.get("remove", [])):
            if not any(n == name for n, _ in out):
                have = [n for n, _ in out]
                hint = suggest(name, have) or f"; the profile has: {', '.join(have)}"
                raise doc.error(f"protect/remove: no category {name!r} to remove{hint}", ("protect", "remove", i))
            out = [(n, d) for n, d in out if n != name]
        items = [(ref, ("protect", "add", i)) for i, ref in enumerate(spec.get("add", []))]
    errors = []
    for ref, p in items:
        try:
            cat = lib.get(ref, "protect", base_dir, (doc, p))
        except ValidationErrors as exc:
            errors.extend(exc.errors)
            continue
        except UserError as exc:
            errors.append(exc)
            continue
        name = cat.data["name"]
        if any(n == name for n, _ in out):
            errors.append(doc.error(f"category {name!r} is listed twice; keep one", p))
            continue
        out.append((name, cat))
    if errors:
        raise ValidationErrors(errors)
    return out


def _slot(lib, doc, slot_name, spec, inherited, base_dir):
    here = ("dictionaries", slot_name)
    if isinstance(spec, list):
        spec = {"use": spec}
    if "use" in spec or inherited is None:
        slot = Slot()
        for i, ref in enumerate(spec.get("use", [])):
            slot.merge_doc(lib.get(ref, "dictionary", base_dir, (doc, here + ("use", i))))
    else:
        slot = inherited.copy()
    for i, ref in enumerate(spec.get("files", [])):
        slot.merge_doc(lib.get(ref, "dictionary", base_dir, (doc, here + ("files", i))))
    add = spec.get("add")
    if add is not None:
        kind = "entries" if isinstance(add, dict) else "words"
        slot._type_check(kind, doc, here + ("add",))
        if kind == "entries":
            slot.entries.update(add)
        else:
            for w in add:
                entry = {"word": w} if isinstance(w, str) else {k: v for k, v in w.items() if k != "note"}
                slot.words[entry["word"].lower()] = entry
    for i, key in enumerate(spec.get("remove", [])):
        table = slot.entries if slot.type == "entries" else slot.words
        k = key if slot.type == "entries" else key.lower()
        if k not in table:
            hint = suggest(k, table) or "; check the spelling"
            raise doc.error(f"remove: {key!r} is not in the {slot_name!r} dictionary{hint}", here + ("remove", i))
        del table[k]
    return slot


def _level_chain(lib, ref, base_dir, origin):
    chain = []
    seen = set()
    while ref is not None:
        path = lib.locate(ref, "level", base_dir, origin)
        if str(path) in seen:
            d = lib.load(path, "level")
            raise d.error("levels extend each other in a circle; remove one `extends:`", ("extends",))
        seen.add(str(path))
        d = lib.load(path, "level")
        chain.append(d)
        ref = d.data.get("extends")
        base_dir = Path(d.file).parent
        origin = (d, ("extends",))
    chain.reverse()
    return chain


def _collect_transforms(res):
    names = {}
    for d in res.level_chain:
        for i, spec in enumerate(d.data["transforms"]):
            if spec["name"] in names:
                raise d.error(
                    f"transform name {spec['name']!r} is already used by level {names[spec['name']]!r}; names must be unique along the chain",
                    ("transforms", i, "name"),
                )
            names[spec["name"]] = d.data["name"]
            res.transforms.append((spec, d, i))


def _copy_hooks(hooks):
    import copy

    return copy.deepcopy(hooks)


def _merge_hooks(doc, spec, hooks, origins):
    """Scalars override, `state` merges, and each event's handlers merge by
    name: a handler named again changes only the fields it gives."""
    scalars, mappings = hook_keys()
    for key in scalars:
        if key in spec:
            hooks[key] = spec[key]
    for key in mappings:
        if key in spec:
            hooks.setdefault(key, {}).update(spec[key])
    events = hooks.setdefault("events", {})
    from .checks import namer

    canonical = namer("event")
    for written, handlers in spec.get("events", {}).items():
        event = canonical(written) or written
        current = events.setdefault(event, [])
        for i, h in enumerate(handlers):
            where = (doc, ("hooks", "events", written, i))
            for other_event, lst in events.items():
                if other_event != event and any(x["name"] == h["name"] for x in lst):
                    raise doc.error(f"handler name {h['name']!r} is already used under {other_event}; names are unique", where[1] + ("name",))
            existing = next((x for x in current if x["name"] == h["name"]), None)
            if existing is None:
                current.append(dict(h))
            else:
                existing.update(h)
            origins[h["name"]] = where
