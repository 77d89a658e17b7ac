"""Which agent version is running this session, and whether it replaces a
Bash output with a PostToolUse `updatedToolOutput` answer.

The version is read from the session's transcript: every line the agent
writes carries a top-level `version` field, and the last line is written by
the agent running now (a resumed session may hold older versions above it).
Only the tail is read (`replace_output.transcript_tail_bytes`), a regular
file only (transcript.reversed_lines).  The rule kept: an unknown version
is not a supported one (PostToolUse then leaves the output alone and the
older PreToolUse rewrite is used), and so is a version in a known-bad range
(`replace_output.broken_versions`).
"""


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


def from_transcript(path, max_bytes):
    """The version string of the last transcript line that has one, or None."""
    from engine.base.fastjson import loads
    from engine.core.transcript import reversed_lines

    for raw in reversed_lines(path, max_bytes):
        if b'"version"' not in raw:
            continue
        try:
            record = loads(raw.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            continue
        version = record.get("version") if isinstance(record, dict) else None
        if isinstance(version, str) and parse(version):
            return version
    return None


def supported(version, replace):
    """Does this version replace a Bash output by updatedToolOutput?"""
    v = parse(version)
    if v is None:
        return False
    if v < parse(replace["min_version"]):
        return False
    for bad in replace["broken_versions"]:
        if parse(bad["from"]) <= v <= parse(bad["to"]):
            return False
    return True


def replaces_output(event, settings):
    """True when this event's agent takes a PostToolUse updatedToolOutput for Bash."""
    replace = settings["replace_output"]
    if not replace["enabled"]:
        return False
    version = from_transcript(event.get("transcript_path"), replace["transcript_tail_bytes"])
    return supported(version, replace)
