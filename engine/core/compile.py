"""Compile a resolved profile into an immutable, picklable Profile."""

from engine.text import regexutil
from engine.text.model import Profile, TokenJudge
from engine.text.protect import Protector
from engine.text.transforms import KINDS

from . import protectsource, specs

TRANSFORM = "/properties/transforms/items"  # where a level's transforms are in its schema


class BuildContext:
    """What a transform may ask for while it compiles."""

    def __init__(self, resolved, used=None):
        self._r = resolved
        self.used = set() if used is None else used  # the slot names the profile's transforms asked for
        self.word_pattern = resolved.settings["word_pattern"]
        self.rewrite_pays_at_run_time = TokenJudge(resolved.settings["objective"], resolved.settings["tokenizer"])
        self.rewrite_pays = self.rewrite_pays_at_run_time  # fixed dictionaries: decided here, once

    def _slot(self, name, want):
        self.used.add(name)
        slot = self._r.slots.get(name)
        if slot is None:
            raise KeyError(f"dictionary slot {name!r} is not defined by the profile; add it under `dictionaries:`")
        if slot.type != want:
            raise KeyError(f"dictionary slot {name!r} holds {slot.type or 'nothing'}, this transform needs {want}")
        return slot

    def entries(self, name):
        return dict(self._slot(name, "entries").entries)

    def word_list(self, name):
        return list(self._slot(name, "words").words.values())

    def lists(self, name):
        """The named word lists of a dictionary slot (`\\L<name>` in its guards)."""
        self.used.add(name)
        slot = self._r.slots.get(name)
        return dict(slot.lists) if slot is not None else {}

    def word_set(self, name):
        return {w["word"] for w in self.word_list(name)}


def compile_profile(resolved, files):
    """files: every YAML file read."""
    s = resolved.settings
    cats = []
    for i, (name, doc) in enumerate(resolved.protect):
        try:
            for j, p in enumerate(doc.data.get("patterns", ())):
                regexutil.check(p)
        except regexutil.PatternError as exc:
            raise doc.error(str(exc), ("patterns", j)) from None
        if doc.data.get("rules") and getattr(doc, "origin", None) != "builtin":
            # a rule compiles when a text first needs it: a broken one must fail here, not in a hook
            # (the built-in rule set is checked by `engine validate` and the test suite)
            from .rulecheck import pattern_errors

            problems = pattern_errors(doc)
            if problems:
                raise problems[0]
        cats.append(protectsource.source(doc.data, f"c{i}_"))
    try:
        regexutil.check(s["word_pattern"])
    except regexutil.PatternError as exc:
        doc, path = resolved.setting_origins.get("word_pattern", (None, None))
        if doc is None:
            raise resolved_error(resolved, f"word_pattern: {exc}", "word_pattern") from None
        raise doc.error(f"word_pattern: {exc}", path) from None
    try:
        protector = Protector(cats, s["word_pattern"], s["pattern_timeout_ms"])
    except Exception as exc:  # regex.error from a combination of valid parts
        raise resolved_error(resolved, f"the protect categories do not compile together: {exc}", "protect") from None
    known = {name for name, _ in resolved.protect}
    transforms, notes, used = [], {}, set()
    for raw, doc, i in resolved.transforms:
        spec = specs.build("level", TRANSFORM, raw)  # typed, frozen, the schema's defaults filled in
        for key in ("allow", "skip_inside", "stands_alone_after"):
            unknown = sorted(set(getattr(spec, key, None) or ()) - known)  # None: a key this kind does not have
            if unknown:
                raise doc.error(f"{key}: unknown protect categor{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}", ("transforms", i, key))
        ctx = BuildContext(resolved, used)
        try:
            t = KINDS[spec.kind](spec, ctx)
        except regexutil.PatternError as exc:
            raise doc.error(str(exc), ("transforms", i)) from None
        except KeyError as exc:
            raise doc.error(exc.args[0], ("transforms", i, "dictionary")) from None
        except Exception as exc:  # regex.error and friends: a pattern that does not compile
            raise doc.error(f"{spec.kind} transform does not compile: {exc}", ("transforms", i)) from None
        if getattr(t, "skipped", None):
            notes[spec.name] = t.skipped
        transforms.append(t)
    _unused_slots(resolved, used)
    from .checks import checker, compiler

    checker("profile.hooks")(resolved)  # the hooks subsystem's own semantics (engine/core/checks.py)
    return Profile(
        name=resolved.name, level=s["level"], objective=s["objective"], tokenizer=s["tokenizer"],
        timeout_ms_per_mb=s["pattern_timeout_ms"], max_input_bytes=s["max_input_bytes"], fit_factor=s["fit_factor"],
        protector=protector, transforms=transforms, notes=notes,
        hooks=compiler("profile.hooks")(resolved), cache=s["cache"],
    )


def _unused_slots(resolved, used):
    """A slot the profile names, inherits from nowhere, and no transform of
    its level uses does nothing; when its name is close to one the level
    uses, it is that name misspelled.  (Another may serve a level of the
    user's own, chosen with --level.)"""
    from engine.base.errors import ValidationErrors, suggest

    known = used | (set(resolved.slots) - set(resolved.new_slots))
    errors = []
    for name, (doc, path) in resolved.new_slots.items():
        hint = "" if name in used else suggest(name, sorted(known))
        if hint:
            errors.append(doc.error(f"no transform of level {resolved.settings['level']!r} uses a dictionary slot "
                                    f"named {name!r}{hint}", path, key=True))
    if errors:
        raise ValidationErrors(errors)


def resolved_error(resolved, message, *path):
    """A UserError at `path` of the profile's own file where that file sets
    it, else at the nearest key above it the file has (else its start)."""
    from engine.base.errors import UserError

    from .yamlload import Document, load_file

    try:
        doc = load_file(resolved.file)
    except (UserError, OSError, TypeError):
        doc = Document(resolved.file, {})
    return doc.error(message, path)
