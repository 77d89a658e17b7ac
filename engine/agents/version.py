"""Which version of the agent runs a session: the one reader of that fact
(what is in view, engine/hooks/inview.py, and which answers the agent takes,
capability.py, both ask it).

The transcript says it first, where the agent's YAML says (`version`):
- `transcript_key` at the top of its records (Claude Code: every record
  carries `version`, and its last lines are written by the agent running
  now; a resumed session may hold older versions above them);
- or in its first records (`in_transcript: head`: Codex's session_meta,
  Copilot's session.start), found by the agent's transcript reader.  The lines are
read backwards by their heads (engine/core/lineheads.py): a short line is
parsed whole; of a long one only the start, where 2.0.x and 2.1.5x write
`version` (about the 200th byte) and 2.1.330 writes it in its api-request
records; 2.1.330 writes it after `message` and `toolUseResult` in its user
and assistant records, so a long one of those sends the search to the line
before.  When no line names a version (the transcript is not on disk yet,
or it is not the agent's), the variable the agent sets in its hooks'
environment does (`version.env` of the agent's YAML).  How far back (bytes
and lines) and how much of a line: `agent.version` in
pipelines/settings/engine.yaml.
"""

import os


def parse(text):
    """(major, minor, patch, ...) of "2.1.330" (a suffix such as "-beta" is
    dropped), or None.  ASCII digits only: str.isdigit() is true for "²",
    which int() refuses, and the text may come from a project's variables."""
    if not isinstance(text, str) or not text:
        return None
    head = text.split("-", 1)[0].split("+", 1)[0]
    parts = head.split(".")
    if not parts or not all(p.isascii() and p.isdigit() and len(p) <= 9 for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _bounds():
    from engine.core.settings import agent_facts

    return agent_facts()["version"]


def of_session(agent, transcript_path, environ=None):
    """The version of `agent` (spec.Agent) running this session: the
    transcript's, else its hooks' environment's; None when neither names one."""
    spec = agent.data.get("version") or {}
    if spec.get("in_transcript") == "head":
        found = from_head(agent, transcript_path)
    elif spec.get("transcript_key"):
        found = from_transcript(transcript_path, spec["transcript_key"])
    else:
        found = None
    return found or from_env(spec.get("env"), environ)


def from_head(agent, path):
    """The version the transcript's first records name (its reader's Version record), or None."""
    from .transcripts import head_records

    for rec in head_records(agent.data["transcript"]["reader"], path, _bounds()["head_bytes"], ("version",)):
        if parse(rec.value):
            return rec.value
    return None


def from_transcript(path, key="version"):
    """The top-level `key` of the transcript's last record that names a valid version, or None."""
    from engine.core.lineheads import line_heads

    bounds = _bounds()
    mark = f'"{key}"'.encode()
    lines = line_heads(path, bounds["scan_bytes"], bounds["head_bytes"])
    try:
        for _n, (_start, length, head) in zip(range(bounds["max_lines"]), lines):
            if mark not in head:
                continue
            version = _whole(head, key) if len(head) == length else _at_start(head, key)
            if parse(version):
                return version
        return None
    finally:
        lines.close()  # the file now, not when the collector gets to it


def _whole(line, key):
    from engine.base.fastjson import loads

    try:
        record = loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return record.get(key) if isinstance(record, dict) else None


def _at_start(head, want):
    """The top-level `want` string among the scalar keys that open a
    record cut short, or None.  The walk stops at the first nested value
    (what follows it is past the record's head) and at the first value the
    cut ends."""
    try:
        from _json import make_scanner
    except ImportError:  # pragma: no cover - not CPython
        return None
    from engine.base.fastjson import scanner_context

    scan = make_scanner(scanner_context())
    text = head.decode("utf-8", "replace")
    i = _blank(text, 0)
    if text[i:i + 1] != "{":
        return None
    i += 1
    while True:
        i = _blank(text, i)
        if text[i:i + 1] != '"':
            return None
        try:
            key, i = scan(text, i)
            i = _blank(text, i)
            if text[i:i + 1] != ":":
                return None
            i = _blank(text, i + 1)
            if text[i:i + 1] in ("{", "["):
                return None
            value, i = scan(text, i)
        except (StopIteration, ValueError):
            return None
        if key == want:
            return value if isinstance(value, str) else None
        i = _blank(text, i)
        if text[i:i + 1] != ",":
            return None
        i += 1


def _blank(text, i):
    n = len(text)
    while i < n and text[i] in " \t\r\n":
        i += 1
    return i


def from_env(spec, environ=None):
    """"2.1.330" from AI_AGENT=claude-code_2-1-330_harness, as the agent's
    `version.env` says ({variable, prefix, separator, end}); None when the
    agent has none, or it is absent or not a version."""
    if not spec:
        return None
    value = (environ if environ is not None else os.environ).get(spec["variable"], "")
    if not value.startswith(spec["prefix"]):
        return None
    parts = value[len(spec["prefix"]):].split(spec["end"], 1)[0].split(spec["separator"])
    version = ".".join(parts)
    return version if parse(version) else None
