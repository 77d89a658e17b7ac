"""Load, check and compile a message pipeline (pipelines/messages/*.yaml).

One way through, as for profiles: the YAML documents (the pipeline, what it
`extends`, the detector documents its steps name, the protect categories
those name) are validated against their schemas, merged, and compiled into
a Pipeline of step and detector objects.  Every mistake is a UserError at
FILE:LINE:COL.  The compiled pipeline is cached, keyed by its source files.
"""

import string
from dataclasses import replace
from pathlib import Path

from engine.base.errors import UserError, suggest
from engine.core import cache, protectsource, specs
from engine.core.documents import Library
from engine.text import regexutil
from engine.text.protect import Protector, pass_timeout
from engine.text.wordscan import WordTable, WordTables

from .detectors import KINDS as DETECTOR_KINDS
from .steps import KINDS as STEP_KINDS
from .summary import Summarizer

STEP = "/properties/steps/items"  # where a pipeline's steps are in its schema

MARKER_FIELDS = {
    "summary": {"summary", "entities"},
    "entities": {"entities"},
    "entity_separator": set(),
    "code_split": {"summary", "entities", "code"},
    "code_separator": set(),
    "duplicate": {"index", "number"},
    "near_duplicate": {"index", "number", "similarity"},
}


class Timer:
    """Seconds a pattern pass may take over a text (the profile's budget per MB)."""

    def __init__(self, ms_per_mb):
        self.ms_per_mb = ms_per_mb

    def __call__(self, text):
        return pass_timeout(self.ms_per_mb, text)


class Union:
    """One scan for every protect category the pipeline names: a text is
    scanned once, whatever number of steps and detectors look at it.

    Patterns run in a Protector, as everywhere.  Word lists are found by the
    engine's word scan (wordscan), one table per category, so that a
    category's spans do not depend on which other categories the pipeline
    names (a word of one list inside a phrase of another counts for both);
    the tables share one pass over the word runs (WordTables)."""

    def __init__(self):
        self.names = []
        self.protector = None
        self.word_tables = []  # [(category, WordTable)]
        self._words = WordTables(())  # all of them, found in one pass
        self._word_re = None
        self._timer = None

    def build(self, sources, word_pattern, timer, message_words=None):
        import regex

        self._timer = timer
        no_words = [replace(c, words=[]) for c in sources]
        self.protector = Protector(no_words, word_pattern, timer.ms_per_mb)
        self._word_re = regex.compile(message_words or word_pattern, regex.V0)
        self.word_tables = []
        for c in sources:
            if c.words:
                table = WordTable()
                for w in c.words:
                    table.add(w, c.name, c.case_sensitive)
                self.word_tables.append((c.name, table))
        self._words = WordTables(table for _, table in self.word_tables)

    def _scan(self, text):
        """{category: [(start, end)]}"""
        found = {}
        for s, e, name in self.protector.scan(text):
            found.setdefault(name, []).append((s, e))
        if self.word_tables:
            per_table = self._words.matches(text, self._word_re, self._timer(text))
            for (name, _), got in zip(self.word_tables, per_table):
                if got:
                    found.setdefault(name, []).extend((s, e) for s, e, _ in got)
        return found

    def scan(self, text, memo):
        if memo is None:
            return self._scan(text)
        key = ("", text)
        got = memo.get(key)
        if got is None:
            got = memo[key] = self._scan(text)
        return got


class Scanner:
    """The spans of some protect categories in a text, read from the one
    scan of all of them (shared through a memo, one per message)."""

    def __init__(self, names, union):
        self.key = tuple(names)
        self.union = union

    def spans(self, text, memo=None):
        if memo is None:
            found = self.union.scan(text, None)
        else:
            key = (self.key, text)
            got = memo.get(key)
            if got is not None:
                return got
            found = self.union.scan(text, memo)
        if len(self.key) == 1:
            got = found.get(self.key[0], [])
        else:
            got = [span for name in self.key for span in found.get(name, ())]
        if memo is not None:
            memo[key] = got
        return got


class Pipeline:
    def __init__(self, name, file, steps, summarizer, markers, tokenizer, sources=()):
        self.name = name
        self.file = file
        self.steps = steps
        self.summarizer = summarizer
        self.markers = markers
        self.tokenizer = tokenizer
        self.sources = list(sources)

    def step(self, kind):
        return next((s for s in self.steps if s.kind == kind), None)


class Context:
    """What a step or detector may ask for while it compiles."""

    def __init__(self, lib, doc, word_pattern, timeout_ms):
        self.lib = lib
        self.doc = doc  # the document errors point into (changed per step)
        self.word_pattern = word_pattern
        self.message_words = None  # the pipeline's word_pattern, when it sets one
        self.timeout_for = Timer(timeout_ms)
        self._scanners = {}
        self._sources = {}
        self.union = Union()
        self._detectors = {}
        self.step = ()  # where the step being compiled is in its document: ("steps", i) or ("step_params", name)

    def error(self, message, path):
        return self.doc.error(message, path)

    def scanner(self, names, path=()):
        """A Scanner for these categories; each name is checked now, and the
        one Protector for all of them is built by finish()."""
        for i, name in enumerate(names):
            if name not in self._sources:
                where = path + (i,) if path else path
                doc = self.lib.get(name, "protect", Path(self.doc.file).parent, (self.doc, where))
                self._sources[name] = protectsource.source(doc.data, f"m{len(self._sources)}_")
                self.union.names.append(name)
        key = tuple(names)
        if key not in self._scanners:
            self._scanners[key] = Scanner(names, self.union)
        return self._scanners[key]

    def finish(self):
        self.union.build([self._sources[n] for n in self.union.names], self.word_pattern, self.timeout_for,
                         self.message_words)

    def compiled(self, fn, source, path, check=regexutil.check):
        try:
            if check is not None:
                check(source)
            return fn(source)
        except regexutil.PatternError as exc:
            raise self.error(str(exc), path) from None
        except MemoryError:  # in the compile box (load): past its memory cap
            from engine.core.compilebox import pattern_memory_message
            from engine.core.settings import compile_limits

            raise self.error(pattern_memory_message(compile_limits()["memory_mb"]), path) from None
        except Exception as exc:  # regex.error
            raise self.error(f"pattern does not compile: {exc}", path) from None

    def detector(self, name, path):
        if name not in self._detectors:
            doc = self.lib.get(name, "detector", Path(self.doc.file).parent, (self.doc, path))
            self._detectors[name] = compile_detector(doc, self)
        return self._detectors[name]


def compile_detector(doc, ctx):
    data = doc.data
    saved, ctx.doc = ctx.doc, doc
    try:
        cls = DETECTOR_KINDS[data["detector"]]
        try:
            spec = specs.build("detector", "", data)  # typed, frozen, the schema's defaults filled in
            return cls(spec.name, spec.params, ctx)
        except regexutil.PatternError as exc:
            raise doc.error(str(exc), ("params",)) from None
        except UserError:
            raise
        except Exception as exc:  # regex.error from a pattern that does not compile
            raise doc.error(f"{data['detector']} detector does not compile: {exc}", ("params",)) from None
    finally:
        ctx.doc = saved


def load_detector(ref, base_dir=None, profile="default"):
    """One detector document compiled on its own (golden cases, tools)."""
    from engine.core.profile import resolve

    lib = Library()
    doc = lib.load(lib.locate(ref, "detector", base_dir or Path.cwd()), "detector")
    resolved, _ = resolve(profile)
    ctx = Context(lib, doc, resolved.settings["word_pattern"], resolved.settings["pattern_timeout_ms"])
    det = compile_detector(doc, ctx)
    ctx.finish()
    return det


def _merged(lib, path, seen=()):
    """(data, origins) of a pipeline after `extends`: data is plain, origins
    maps top-level keys and steps to the (doc, path) that set them."""
    doc = lib.load(path, "messages")
    if str(path) in seen:
        raise doc.error("message pipelines extend each other in a circle; remove one `extends:`", ("extends",))
    if "extends" in doc.data:
        parent = lib.locate(doc.data["extends"], "messages", Path(doc.file).parent, (doc, ("extends",)))
        data, origins = _merged(lib, parent, seen + (str(path),))
    else:
        data, origins = {}, {}
    for key, value in doc.data.items():
        if key in ("extends", "step_params"):
            continue
        data[key] = value
        origins[key] = (doc, (key,))
        if key == "steps":
            origins["step"] = {s["name"]: (doc, ("steps", i)) for i, s in enumerate(value)}
    if "steps" in data:
        data["steps"] = [dict(s) for s in data["steps"]]
    for name, params in doc.data.get("step_params", {}).items():
        names = [s["name"] for s in data.get("steps", [])]
        if name not in names:
            raise doc.error(f"no step named {name!r}{suggest(name, names)}; steps: {', '.join(names)}", ("step_params", name), key=True)
        step = data["steps"][names.index(name)]
        for k, v in params.items():
            step[k] = v
        origins.setdefault("step", {})[name] = (doc, ("step_params", name))
    return data, origins


def build(ref="default", base_dir=None):
    """The compiled Pipeline for a built-in name or a path."""
    lib = Library()
    path = lib.locate(ref, "messages", base_dir or Path.cwd())
    data, origins = _merged(lib, path)
    top = lib.load(path, "messages")
    missing = [k for k in ("steps", "summary", "markers", "profile", "tokenizer") if k not in data]
    if missing:
        raise top.error(f"set {', '.join(missing)} here or extend a pipeline that does (extends: default)")
    from engine.core.profile import resolve

    pdoc, ppath = origins["profile"]
    try:
        resolved, plib = resolve(data["profile"], cwd=str(Path(pdoc.file).parent))
    except UserError as exc:
        raise pdoc.error(f"profile {data['profile']!r} cannot be used: {exc}", ppath) from None
    ctx = Context(lib, top, resolved.settings["word_pattern"], resolved.settings["pattern_timeout_ms"])
    if "word_pattern" in data:
        wdoc, wpath = origins["word_pattern"]
        ctx.message_words = ctx.compiled(lambda src: src, data["word_pattern"], wpath, check=regexutil.check)
    steps, names = [], set()
    for i, spec in enumerate(data["steps"]):
        doc, where = origins.get("step", {}).get(spec["name"], origins["steps"])
        ctx.doc = doc
        if spec["name"] in names:
            raise doc.error(f"two steps are named {spec['name']!r}; give each its own name", where + ("name",))
        names.add(spec["name"])
        ctx.step = where if len(where) == 2 else ("steps", i)  # ("steps", i) or ("step_params", name) in `doc`
        _check_step_params(doc, where, spec)
        try:
            steps.append(STEP_KINDS[spec["kind"]](specs.build("messages", STEP, spec), ctx))
        except UserError:
            raise
        except regexutil.PatternError as exc:
            raise doc.error(str(exc), where) from None
    kinds = [s.kind for s in steps]
    if kinds.count("recency") > 1 or kinds.count("classifier") > 1:
        doc, where = origins["steps"]
        raise doc.error("a pipeline has at most one recency step and one classifier step", where)
    ctx.doc, _ = origins["summary"]
    summarizer = Summarizer(data["summary"], ctx)
    try:
        ctx.finish()
    except Exception as exc:  # regex.error from a combination of valid categories
        raise top.error(f"the protect categories named here do not compile together: {exc}") from None
    mdoc, mpath = origins["markers"]
    for key, allowed in MARKER_FIELDS.items():
        try:
            fields = {f for _, f, _, _ in string.Formatter().parse(data["markers"][key]) if f is not None}
        except ValueError as exc:
            raise mdoc.error(f"markers/{key}: {exc}; write a literal brace as {{{{ or }}}}", mpath + (key,)) from None
        unknown = sorted(fields - allowed)
        if unknown:
            raise mdoc.error(f"markers/{key}: unknown field(s) {', '.join('{' + f + '}' for f in unknown)}; "
                             f"this marker knows {', '.join('{' + f + '}' for f in sorted(allowed)) or 'no fields'}", mpath + (key,))
    sources = [(f, cache.file_digest(f)) for f in dict.fromkeys(lib.files + plib.files)]
    return Pipeline(data["name"], str(path), steps, summarizer, dict(data["markers"]), data["tokenizer"], sources)


def _check_step_params(doc, where, spec):
    """A step as merged (step_params are applied after the schema check)
    checked against the schema of its kind."""
    import jsonschema

    from engine.core.schema import _validator

    variants = _validator("messages").schema["properties"]["steps"]["items"]["oneOf"]
    variant = next(v for v in variants if v["properties"]["kind"].get("const") == spec["kind"])
    for err in jsonschema.Draft202012Validator(variant).iter_errors(spec):
        at = "/".join(str(p) for p in err.absolute_path)
        # at the value itself where the document has it (else its nearest parent)
        raise doc.error(f"step {spec['name']!r} ({spec['kind']}){' ' + at if at else ''}: {err.message}",
                        tuple(where) + tuple(err.absolute_path))


def _ref_path(ref):
    """The resolved path a pipeline ref names, or None for a built-in name."""
    text = str(ref)
    return str(Path(text).resolve()) if "/" in text or text.endswith((".yaml", ".yml")) else None


def load(ref="default", base_dir=None):
    """build(), through the cache when every source file is unchanged."""
    path = _ref_path(ref)
    key = ("messages", path or str(ref), str(base_dir or ""))
    got = cache.load(key)
    if got is not None:
        return got
    from engine.core import compilebox

    # In a box, as a profile compiles: a pipeline is a file the user may
    # have from a stranger's repository, and a pattern of it may ask the
    # regex module for gigabytes (the box's cap then says which one).
    pipeline = compilebox.run(lambda: build(ref, base_dir), path, doing="compiling this message pipeline")
    try:
        cache.store(key, pipeline, pipeline.sources)
    except OSError:
        pass  # a cache that cannot be written only costs time
    return pipeline
