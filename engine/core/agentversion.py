"""Which version of the agent runs a session: the one reader of that fact
(what is in view, engine/hooks/inview.py, and whether a Bash output can be
replaced, engine/ccm/agentversion.py, both ask it).

The transcript says it first: every record the agent writes carries a
top-level `version`, and its last lines are written by the agent running
now (a resumed session may hold older versions above them).  The lines are
read backwards by their heads (engine/core/lineheads.py): a short line is
parsed whole; of a long one only the start, where 2.0.x and 2.1.5x write
`version` (about the 200th byte) and 2.1.330 writes it in its api-request
records; 2.1.330 writes it after `message` and `toolUseResult` in its user
and assistant records, so a long one of those sends the search to the line
before.  When no line names a version (the transcript is not on disk yet,
or it is not the agent's), the variable the agent sets in its hooks'
environment does.  How far back (bytes and lines), how much of a line, which
variable: `agent` in pipelines/settings/engine.yaml.
"""

import os


def parse(text):
    """(major, minor, patch, ...) of "2.1.330" (a suffix such as "-beta" is
    dropped), or None."""
    if not isinstance(text, str) or not text:
        return None
    head = text.split("-", 1)[0].split("+", 1)[0]
    parts = head.split(".")
    if not parts or not all(p.isdigit() and len(p) <= 9 for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _facts():
    from .settings import agent_facts

    return agent_facts()["version"]


def of_session(transcript_path, environ=None):
    """The version of the agent running this session: the transcript's,
    else its hooks' environment's; None when neither names one."""
    return from_transcript(transcript_path) or from_env(environ)


def from_transcript(path):
    """The `version` of the transcript's last record that names a valid one, or None."""
    from .lineheads import line_heads

    facts = _facts()
    lines = line_heads(path, facts["scan_bytes"], facts["head_bytes"])
    try:
        for _n, (_start, length, head) in zip(range(facts["max_lines"]), lines):
            if b'"version"' not in head:
                continue
            version = _whole(head) if len(head) == length else _at_start(head)
            if parse(version):
                return version
        return None
    finally:
        lines.close()  # the file now, not when the collector gets to it


def _whole(line):
    from engine.base.fastjson import loads

    try:
        record = loads(line.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    return record.get("version") if isinstance(record, dict) else None


def _at_start(head):
    """The top-level `version` string among the scalar keys that open a
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
        if key == "version":
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


def from_env(environ=None):
    """"2.1.330" from AI_AGENT=claude-code_2-1-330_harness, as `agent.version.env`
    says ({variable, prefix, separator, end}); None when absent or not a version."""
    spec = _facts()["env"]
    value = (environ if environ is not None else os.environ).get(spec["variable"], "")
    if not value.startswith(spec["prefix"]):
        return None
    parts = value[len(spec["prefix"]):].split(spec["end"], 1)[0].split(spec["separator"])
    version = ".".join(parts)
    return version if parse(version) else None
