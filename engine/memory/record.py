"""From a failed tool call to a store record: the error's signature and its
first meaningful line (a bounded excerpt), a short form of the input, all
redacted (never the raw text), and the key that makes
failures of one tool whose errors differ only in paths, numbers, ids,
positions or times one entry (the error signature, `signature`).

Whether a call failed (`failure`) is decided from the event alone and costs
nothing heavy: PostToolUseFailure, `is_error`, a non-zero exit code in the
response, or a line of the Bash error stream matching one of the profile's
`hooks.memory.error_patterns`.  Everything after that (`build`) runs only
for a failure: the engine's one redactor (engine/core/redact.py, the built-in
`secrets` category) replaces every secret before anything is written
anywhere.  An entry carries the session's project (`project_of`) and, for a
Bash call the content cache wrapped, the user's command, never the wrapper.
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


def error_line(text, memory):
    """(the first line that says something, whether one did): not blank,
    not a bare "Error:"/"Exit code 1", the agent's wrapper tags removed.
    When every line is such a line, the text itself, and False: it says
    nothing on its own (then the input joins the entry's key)."""
    import re

    for pat in memory["strip_patterns"]:
        text = re.sub(pat, "", text)
    for line in text.splitlines():
        line = line.strip()
        if line and not any(re.fullmatch(p, line) for p in memory["skip_lines"]):
            return line[: memory["max_field_chars"]], True
    return text.strip()[: memory["max_field_chars"]], False


def first_line(text, memory):
    """The error line of `error_line`, alone."""
    return error_line(text, memory)[0]


_SIGNATURE = {}


def _signature_rules(memory):
    """The compiled `hooks.memory.signature` rules: once per process and
    list of patterns (a Stop scan records many failures)."""
    rules = tuple((r["pattern"], r["replacement"]) for r in memory.get("signature") or ())
    compiled = _SIGNATURE.get(rules)
    if compiled is None:
        import re

        compiled = _SIGNATURE[rules] = [(re.compile(p), rep.replace("\\", "\\\\")) for p, rep in rules]
    return compiled


def signature(text, memory):
    """The text with paths, numbers, ids, positions, quoted file names and
    times replaced by the profile's `signature` rules (in order): two errors
    that differ only in those have one signature."""
    for rx, rep in _signature_rules(memory):
        text = rx.sub(rep, text)
    return text


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


def redactor(memory):
    """The engine's one redactor (engine/core/redact.py) with the category and
    replacement of `hooks.memory.redact`; raises when it has no pattern
    (then nothing is recorded rather than a secret)."""
    from engine.core.redact import redactor as shared

    return shared((memory["redact"]["category"],), memory["redact"]["replacement"])


def user_command(command):
    """The user's command of a Bash call the content cache rewrote to its
    `engine cache run ... -- CMD` wrapper: CMD (the words after `--`,
    unquoted); any other command as it is."""
    from engine.ccm.intercept import WRAPPER_MARK

    if not isinstance(command, str) or WRAPPER_MARK not in command:
        return command
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        return command
    for i in range(len(words) - 1):
        if words[i] == "cache" and words[i + 1] == "run":
            rest = words[i + 2:]
            if "--" in rest:
                cmd = rest[rest.index("--") + 1:]
                if len(cmd) == 1:
                    return cmd[0]
                if cmd:
                    return shlex.join(cmd)
            break
    return command


def _user_input(event):
    tool_input = event.get("tool_input")
    if event.get("tool_name") == "Bash" and isinstance(tool_input, dict) and "command" in tool_input:
        tool_input = dict(tool_input, command=user_command(tool_input["command"]))
    return tool_input


def build(event, error_text, memory, redact, project):
    """The store record of a failed call (redacted), or None.  Its key is
    the tool, the error line's signature and the project (the same failure
    in two projects is two entries); the input's signature joins it only
    when the error says nothing on its own (a bare "Exit code 1") or is one
    of the profile's `generic_errors` (a traceback's first line).  So one
    error on many files or commands is one entry, and the record keeps the
    concrete error and input as its example."""
    from engine.core.cache import sha256

    tool = event.get("tool_name")
    if not isinstance(tool, str) or not tool:
        return None
    line, says_something = error_line(redact(error_text), memory)
    error = redact(line)
    if says_something and memory.get("generic_errors"):
        import re

        says_something = not any(re.fullmatch(p, error) for p in memory["generic_errors"])
    short = short_input(_user_input(event), memory, redact)
    project = redact(project or "")
    sig = signature(error, memory)
    parts = (tool, sig, "" if says_something else signature(short, memory), project)
    key = sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    from .store import now

    return {"k": key, "t": now(), "tool": tool, "sig": sig[: memory["max_field_chars"]], "error": error,
            "input": short, "project": project, "session": str(event.get("session_id") or "")}


def path_of(memory):
    from .store import store_path

    return store_path(memory)


def project_of(event):
    """The session's project: $CLAUDE_PROJECT_DIR (the folder the agent
    started in) when set, else the repository root above the event's cwd
    (the nearest folder holding .git), else that cwd.  Never the cwd of a
    `cd` into a subfolder: entries are kept and shown per project."""
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env and os.path.isabs(env):
        return os.path.realpath(env)
    cwd = event.get("cwd") if isinstance(event, dict) else None
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        cwd = os.getcwd()
    from engine.base.project import root_of

    return root_of(cwd)
