"""Transcript readers: one module per agent's transcript format, each turning
that agent's lines into the neutral records of engine/agents/records.py.

This file only maps a reader name (an agent's `transcript.reader`) to its
module, and drives any reader both ways, always bounded (the reading itself
is engine/core/transcript.py's):

- `backwards(reader, path, max_bytes)`: records of the file's end, newest
  first (hooks: the context size, what is in view, the last tool calls);
- `forwards(reader, fh, reading, problems)`: every record in file order
  (reports, the tool memory's scan);
- `spans(reader, fh)`: each line's byte span and records, in file order
  (replay: what an event saw of the file).

- `detect(path)`: the reader whose format the file's first lines are in.

A reader module has `MARKS` (per record kind, the bytes of which a line must
hold one to be worth parsing for that kind: a hook asking for the context
size parses only the lines that can hold a usage record),
`records_of(obj, seen=None)`: the records of one parsed line, in order
(`seen`, a dict kept over one forward reading, for a format whose record
depends on earlier lines, or one of its own for each line a backwards or
head read gives; every reading sets its `first_line`: whether the line is
the file's first), `looks_like(obj)`: whether a parsed line is in
its format (cheap: a key or two), `project_key(cwd)`: how its session
records name a project folder (`Session.project`), and
`USAGE_AFTER_OUTPUT`: whether a response's usage record is written after
its output's lines (then the call began before them: replay's Timeline).
What a compaction's own requests hold, which the transcript does not
record, is the agent's: `transcript.summary_requests` of its YAML.  What
a resumed session's requests hold of what hooks added before the resume is
the agent's, not its format's: `transcript.resumed` of its YAML.
"""

READERS = {
    "claude": "claude",
    "codex": "codex",
    "gemini": "gemini",
    "copilot": "copilot",
}


def reader(name):
    module = READERS[name]
    return __import__(f"{__name__}.{module}", fromlist=["records_of"])


def _parsed(raw):
    from engine.base.fastjson import loads

    try:
        return loads(raw.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None


def marks_for(mod, kinds):
    if kinds is None:
        return tuple(m for ms in mod.MARKS.values() for m in ms)
    return tuple(m for k in kinds for m in mod.MARKS.get(k, ()))


def backwards(name, path, max_bytes, kinds=None, head_bytes=None):
    """Records of the lines that start in the last `max_bytes` of the
    transcript, newest first, each with `offset` (where its line starts);
    only those of `kinds` (record kind names) when given.  A line longer
    than `head_bytes` (default: the engine's agent.version.head_bytes) is
    skipped, never held whole (engine/core/lineheads.py)."""
    from engine.core.lineheads import line_heads

    mod = reader(name)
    marks = marks_for(mod, kinds)
    if head_bytes is None:
        from engine.core.settings import agent_facts

        head_bytes = agent_facts()["version"]["head_bytes"]
    lines = line_heads(path, max_bytes, head_bytes)
    try:
        for start, length, raw in lines:
            if length != len(raw) or not any(m in raw for m in marks):
                continue
            obj = _parsed(raw)
            if not isinstance(obj, dict):
                continue
            for rec in reversed(mod.records_of(obj, {"first_line": start == 0})):
                if kinds is None or rec.kind in kinds:
                    rec.offset = start
                    yield rec
    finally:
        lines.close()


def tail(name, path, max_bytes, kinds=None, head_bytes=None):
    """Records of the lines that start in the last `max_bytes` of the
    transcript, newest first, as `backwards` gives them; for a reader whose
    records depend on earlier lines (its READS_ON: Gemini CLI's compression
    is a history shorter than the one before it), every line of that tail
    is read forwards first, with one `seen`, and held meanwhile (bounded by
    `max_bytes`)."""
    mod = reader(name)
    if not getattr(mod, "READS_ON", False):
        yield from backwards(name, path, max_bytes, kinds, head_bytes)
        return
    from engine.core.lineheads import line_heads

    if head_bytes is None:
        from engine.core.settings import agent_facts

        head_bytes = agent_facts()["version"]["head_bytes"]
    lines = line_heads(path, max_bytes, head_bytes)
    try:
        whole = [(start, raw) for start, length, raw in lines if length == len(raw)]
    finally:
        lines.close()
    seen, found = {}, []
    for start, raw in reversed(whole):
        obj = _parsed(raw)
        if isinstance(obj, dict):
            seen["first_line"] = start == 0
            for rec in mod.records_of(obj, seen):
                if kinds is None or rec.kind in kinds:
                    rec.offset = start
                    found.append(rec)
    yield from reversed(found)


def compaction_written_after(name, path, offset, max_bytes, head_bytes=None):
    """Does a line that starts after byte `offset` of the transcript (and
    within its last `max_bytes`) hold the bytes of a compaction?  Its
    reader's EPOCH_MARKS where its MARKS for compactions match far more
    lines (Gemini CLI's every patch), else those.  Only line heads are
    read, newest first, back to `offset`: a cheap test before the epochs
    are read (a resume's lines may match too)."""
    from engine.core.lineheads import line_heads

    mod = reader(name)
    marks = getattr(mod, "EPOCH_MARKS", None) or mod.MARKS.get("compaction", ())
    if head_bytes is None:
        from engine.core.settings import agent_facts

        head_bytes = agent_facts()["version"]["head_bytes"]
    lines = line_heads(path, max_bytes, head_bytes)
    try:
        for start, _length, raw in lines:
            if start < offset:
                return False
            if any(m in raw for m in marks):
                return True
    finally:
        lines.close()
    return False


def head_records(name, path, max_bytes, kinds=None):
    """Records of the transcript's first lines (within its first `max_bytes`), in order."""
    from engine.base.files import open_regular

    try:
        with open_regular(path) as fh:
            data = fh.read(max_bytes)
    except (OSError, ValueError, TypeError):  # not there, no regular file, no path
        return
    mod = reader(name)
    offset = 0
    for raw in data.split(b"\n")[:-1] if b"\n" in data else []:
        obj = _parsed(raw)
        if isinstance(obj, dict):
            for rec in mod.records_of(obj, {"first_line": offset == 0}):
                if kinds is None or rec.kind in kinds:
                    rec.offset = offset
                    yield rec
        offset += len(raw) + 1


def forwards(name, fh, reading, problems):
    """Every record of a transcript opened in binary, in order, each with its line number."""
    from engine.core.transcript import records as lines

    mod = reader(name)
    seen = {}
    for lineno, obj in lines(fh, reading, problems):
        seen["first_line"] = lineno == 1
        for rec in mod.records_of(obj, seen):
            rec.line = lineno
            yield rec


def spans(name, fh, skipped=None):
    """(start, end, records) of each line of a transcript opened in binary,
    in order, bounded as `forwards` is; `records` is None for a line too
    long to hold (its (line number, bytes) is added to `skipped`) or one
    that is not a JSON object.  Records carry their line number."""
    from engine.core.transcript import lines

    mod = reader(name)
    seen = {}
    for lineno, (start, end, raw) in enumerate(lines(fh), 1):
        if raw is None:
            if skipped is not None:
                skipped.append((lineno, end - start))
            yield start, end, None
            continue
        obj = _parsed(raw)
        if not isinstance(obj, dict):
            yield start, end, None
            continue
        seen["first_line"] = lineno == 1
        recs = mod.records_of(obj, seen)
        for rec in recs:
            rec.line = lineno
        yield start, end, recs


# Most specific first: Claude Code's lines are the loosest to recognise.
DETECT_ORDER = ("codex", "copilot", "gemini", "claude")
DETECT_LINES = 8  # a Claude file may open with a few summary or snapshot lines: each one is in its format


def detect(path, reading=None):
    """The reader of the first of the file's first DETECT_LINES lines that a
    reader recognises, or None (also for a file that cannot be read).  Read
    one bounded line at a time: a huge first line is passed over."""
    from engine.base.files import open_regular
    from engine.core.transcript import Problems, records

    reading = reading or {"max_line_bytes": 1 << 22, "chunk_bytes": 1 << 16}
    try:  # a FIFO named as a transcript must not wait for a writer
        fh = open_regular(path)
    except (OSError, ValueError, TypeError):
        return None
    with fh:
        for n, (_lineno, obj) in enumerate(records(fh, reading, Problems())):
            for name in DETECT_ORDER:
                if reader(name).looks_like(obj):
                    return name
            if n + 1 >= DETECT_LINES:
                return None
    return None
