"""From a failed tool call to a store record: the error's first meaningful
line, a short form of the input, both redacted, and the key that makes the
same tool + error + input one entry.

Whether a call failed (`failure`) is decided from the event alone and costs
nothing heavy: PostToolUseFailure, `is_error`, a non-zero exit code in the
response, or a line of the Bash error stream matching one of the profile's
`hooks.memory.error_patterns`.  Everything after that (`build`) runs only
for a failure: it loads the profile's `secrets` protect category (compiled
patterns) and replaces every match before anything is written anywhere.
"""

import os

# Fields of a tool response that carry an exit status (the agent's shapes
# over its versions) and those that hold the error stream.
EXIT_FIELDS = ("exit_code", "exitCode", "returncode", "return_code")
ERROR_STREAMS = ("stderr",)


def _text(value, limit=20000):
    """The text of a tool result: a string, a list of text blocks, or a dict
    with content/text/error."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, list):
        return "\n".join(_text(v, limit) for v in value if isinstance(v, (str, dict)))[:limit]
    if isinstance(value, dict):
        for k in ("error", "content", "text", "stderr", "message"):
            if isinstance(value.get(k), (str, list)) and value.get(k):
                return _text(value[k], limit)
    return ""


def failure(event, memory):
    """The error text of a failed call, or None for a call that succeeded."""
    if event.get("hook_event_name") == "PostToolUseFailure":
        err = event.get("error")
        return _text(err) or _text(event.get("tool_response")) or "failed"
    resp = event.get("tool_response")
    if isinstance(resp, dict):
        if resp.get("is_error") is True:
            return _text(resp) or "failed"
        for f in EXIT_FIELDS:
            code = resp.get(f)
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                return _text(resp.get("stderr")) or _text(resp.get("stdout")) or f"exit code {code}"
        patterns = memory.get("error_patterns")
        if patterns and event.get("tool_name") in memory["pattern_tools"]:
            for stream in ERROR_STREAMS:
                text = resp.get(stream)
                if isinstance(text, str) and text:
                    import re  # only for an error stream to read: re costs a quiet hook a fifth of its time

                    for line in text[:20000].splitlines():
                        if any(re.search(p, line) for p in patterns):
                            return text
    return None


def first_line(text, memory):
    """The first line that says something (not blank, not a bare
    "Error:"/"Exit code 1"), with the agent's wrapper tags removed."""
    import re

    for pat in memory["strip_patterns"]:
        text = re.sub(pat, "", text)
    for line in text.splitlines():
        line = line.strip()
        if line and not any(re.fullmatch(p, line) for p in memory["skip_lines"]):
            return line[: memory["max_field_chars"]]
    return text.strip()[: memory["max_field_chars"]]


def short_input(tool_input, memory, redact):
    """The input's short form: the first of the profile's `input_fields`
    present (command, file path, pattern...), else the whole input as
    compact JSON (MCP arguments).  Redacted before it is cut: a secret cut
    in half would no longer match its pattern."""
    cap = memory["max_field_chars"]
    if isinstance(tool_input, dict):
        for f in memory["input_fields"]:
            v = tool_input.get(f)
            if isinstance(v, str) and v.strip():
                return redact(" ".join(v.split()))[:cap]
        import json

        return redact(json.dumps(tool_input, ensure_ascii=False, separators=(",", ":"), default=str))[:cap]
    return redact("" if tool_input is None else str(tool_input))[:cap]


class Redactor:
    """Replaces every match of the profile's secrets category.  The pattern
    sources are kept as plain data in the profile cache (checked against the
    profile's files like the hooks settings), so a failure costs compiling
    a few patterns, not unpickling the whole compiled profile."""

    def __init__(self, profile_ref, cwd, memory):
        from .. import cache
        from ..profile import _key

        category = memory["redact"]["category"]
        self.replacement = memory["redact"]["replacement"]
        key = _key(f"redact-{category}", profile_ref, None, cwd or None)
        sources = cache.load_plain(key)
        if sources is None:
            from ..profile import load_profile

            profile = load_profile(profile_ref, cwd=cwd or None)
            sources = [[p.pattern, bool(p.flags & 2)] for p in profile.protector.patterns(category)]  # 2: IGNORECASE
            cache.store_plain(key, sources, profile.sources)
        self.patterns = [_compile(src, ignorecase) for src, ignorecase in sources]
        if not self.patterns:
            # No pattern, no redaction: refuse to write rather than risk a secret.
            raise ValueError(f"the profile has no protect category {category!r} to redact with; nothing recorded")

    def __call__(self, text):
        for p in self.patterns:
            text = p.sub(self.replacement, text)
        return text


def _compile(source, ignorecase):
    """With `re` (already loaded) when the pattern is plain, else with the
    regex module the protect categories are written for."""
    import re

    try:
        return re.compile(source, re.IGNORECASE if ignorecase else 0)
    except re.error:
        import regex

        return regex.compile(source, regex.V0 | (regex.IGNORECASE if ignorecase else 0))


def build(event, error_text, memory, redact, cwd):
    """The store record of a failed call (redacted), or None."""
    from ..cache import sha256

    tool = event.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return None
    error = redact(first_line(redact(error_text), memory))
    short = short_input(event.get("tool_input"), memory, redact)
    key = sha256("\x00".join((tool, error, short)).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    from .store import now

    return {"k": key, "t": now(), "tool": tool, "error": error, "input": short,
            "project": redact(cwd or ""), "session": str(event.get("session_id") or "")}


def path_of(memory):
    from .store import store_path

    return store_path(memory)


def project_of(event):
    cwd = event.get("cwd")
    return cwd if isinstance(cwd, str) else os.getcwd()
