"""From a failed tool call to a store record: the error's signature and its
first meaningful line (a bounded excerpt), a short form of the input, all
redacted (never the raw text), and the key that makes
failures of one tool whose errors differ only in paths, numbers, ids,
positions or times one entry (the error signature, `signature`).

Whether a call failed (`failure`) is decided from the neutral event alone
and costs nothing heavy: a tool_failure event, the agent's failure flag or
a non-zero exit status in the output (`failure` of its YAML), or a line of a
shell call's error stream (its one output text where it has no separate
stream) matching one of the profile's `hooks.memory.error_patterns`.  Everything after that (`build`) runs only
for a failure: the engine's one redactor (engine/core/redact.py, the built-in
`secrets` category) replaces every secret before anything is written
anywhere.  An entry carries the session's project (`project_of`) and, for a
Bash call the content cache wrapped, the user's command, never the wrapper.
"""

import os


def _head_chars():
    from engine.core.settings import failure_head_chars

    return failure_head_chars()


def _text(value, limit=None):
    """The text of a tool result (a string, a list of text blocks, or a dict
    with content/text/error), its first `failures.head_chars` characters."""
    if limit is None:
        limit = _head_chars()
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
    """The error text of a failed call (a neutral event), or None for a call that succeeded."""
    from engine.agents.event import as_event

    event = as_event(event)
    if event.kind == "tool_failure":
        return _text(event.error) or _text(event.tool_output) or "failed"
    spec = event.agent.data["failure"]
    raw = event.tool_output
    if isinstance(raw, dict):
        if spec.get("flag") and raw.get(spec["flag"]) is True:
            return _text(raw) or "failed"
        for f in spec["exit_fields"]:
            code = raw.get(f)
            if isinstance(code, int) and not isinstance(code, bool) and code != 0:
                return _text(raw.get("stderr")) or _text(raw.get("stdout")) or f"exit code {code}"
    streams = event.output_streams() if event.tool_kind == "shell" else None
    if streams is None:
        return None
    if event.exit_code():
        return streams[0]
    tools = memory["pattern_tools"]  # tool kinds (shell), or an agent's tool names
    if memory.get("error_patterns") and (event.tool_kind in tools or event.tool in tools):
        has_stderr = "stderr" in (event.agent.tools("shell").get("output") or {})
        text = streams[1] if has_stderr else streams[0]
        if text and _matches_a_line(text, memory["error_patterns"], memory.get("error_literals")):
            return text
    return None


def _matches_a_line(text, patterns, literals=None):
    """Whether a line of the text's head matches one of the patterns;
    `literals` (engine/base/regexlit.py, one per pattern) rule it out
    first without re, which costs a quiet hook a fifth of its time."""
    from engine.base.regexlit import may_match

    head = text[:_head_chars()]
    if literals is not None and len(literals) == len(patterns) and not may_match(head, literals):
        return False
    import re

    return any(re.search(p, line) for line in head.splitlines() for p in patterns)


def for_agent(memory, agent):
    """The tool memory's settings with the agent's own failure facts added
    (`failure` of its YAML): its error wrappers, the patterns that strip
    its wrapper tags and labels, the lines it writes around an output, its
    answers for a call that did not run as asked (never a lesson)."""
    facts = agent.data["failure"]
    return dict(memory, error_wrappers=[*facts["wrappers"], *memory["error_wrappers"]],
                strip_patterns=[*facts["strip"], *memory["strip_patterns"]],
                skip_lines=[*facts["skip_lines"], *memory["skip_lines"]],
                own_answers=[*facts["not_lessons"], *memory["own_answers"]])


def error_line(text, memory):
    """(the line that says what went wrong, whether one did), by
    engine/text/errorline.py's rule with the memory's lists (`memory` with
    the agent's facts: for_agent), after the agent's wrapper tags are
    removed: the first line that names a failed test (`failure_lines`),
    else the error a traceback's heading announces, else the first line
    matching one of `error_patterns`, else the first that says something
    and is not one of `generic_errors` (a script that printed data, "1" ...
    "5000", then "FAILED 3 of 40 tests": the latter).  (An agent that gives the model
    one text for both output streams puts a failing command's error after
    what it printed first: a build's log, then its `error: ...` line.)
    When every line is a skipped one, the text itself, and False: it says
    nothing on its own (then the input joins the entry's key)."""
    import re

    from engine.text.errorline import pick

    for pat in memory["strip_patterns"]:
        text = re.sub(pat, "", text)
    line = pick(text, searched=_head_chars(), skip_lines=memory["skip_lines"], failure_lines=memory["failure_lines"],
                lead_ins=memory["error_lead_ins"], error_patterns=memory["error_patterns"],
                generic=memory["generic_errors"])
    if line:
        return line[: memory["max_field_chars"]], True
    return text.strip()[: memory["max_field_chars"]], False


def first_line(text, memory):
    """The error line of `error_line`, alone."""
    return error_line(text, memory)[0]


_SIGNATURE: dict = {}


def _signature_rules(memory):
    """The compiled `hooks.memory.signature` rules: once per process and
    list of patterns (a Stop scan records many failures)."""
    rules = tuple((r["pattern"], r["replacement"]) for r in memory["signature"])
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
    tool_input = event.tool_input
    if event.tool_kind == "shell" and isinstance(event.command, str):
        field = event.agent.tools("shell")["command"]
        tool_input = dict(tool_input, **{field: user_command(event.command)})
    return tool_input


def build(event, error_text, memory, redact, project):
    """The store record of a failed call (redacted), or None.  Its key is
    the tool, the error line's signature and the project (the same failure
    in two projects is two entries); the input's signature joins it only
    when the error says nothing on its own (a bare "Exit code 1") or is one
    of the profile's `generic_errors` (a traceback's first line).  So one
    error on many files or commands is one entry, and the record keeps the
    concrete error and input as its example.  None when the project's
    folder is gone: after `rm -rf "$PWD"` every call of the session fails
    for that reason alone (measured with Claude Code and Copilot CLI,
    tests/support/AGENTS-MEASURED.md), which says nothing of the project;
    None for the engine's own answer to the call (`own_answers`).  A shell
    call that printed the content cache's stub is read by the output the
    stub stands for (behind.py)."""
    from engine.agents.event import as_event
    from engine.core.cache import sha256

    event = as_event(event)
    tool = event.tool
    if not tool or (project and not os.path.isdir(project)):
        return None
    memory = for_agent(memory, event.agent)
    if event.tool_kind == "shell":
        from .behind import read_behind

        behind = read_behind(error_text, event.cwd)  # the wrapper printed the cache's stub: its output says
        error_text = error_text if behind is None else behind
    line, says_something = error_line(redact(error_text), memory)
    if _own_answer(line, memory):
        return None
    error = redact(line)
    if says_something and memory["generic_errors"]:
        import re

        says_something = not any(re.fullmatch(p, error) for p in memory["generic_errors"])
    short = short_input(_user_input(event), memory, redact)
    sig = signature(error, memory)
    # The real path in the key and the id: two projects whose paths redact alike stay two.
    parts = (tool, sig, "" if says_something else signature(short, memory), project or "")
    key = sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    from .store import now, project_id

    return {"k": key, "t": now(), "tool": tool, "sig": sig[: memory["max_field_chars"]], "error": error,
            "input": short, "project": redact(project or ""), "pid": project_id(project or ""),
            "session": event.session}


def _own_answer(line, memory):
    """Whether the error line is the engine's own answer to the call (its
    denial of a whole-file read), which the agent shows as a failure."""
    if not memory.get("own_answers"):
        return False
    import re

    return any(re.search(p, line) for p in memory["own_answers"])


def path_of(memory):
    from .store import store_path

    return store_path(memory)


def project_of(event):
    """The session's project: the folder the agent started in, where it
    names it in its hooks' environment (`project_env` of its YAML), else
    the repository root above the event's cwd (the nearest folder holding
    .git, never the user's home or above), else that cwd.  Never the cwd
    of a `cd` into a subfolder: entries are kept and shown per project."""
    from engine.agents.event import as_event

    event = as_event(event)
    name = event.agent.data.get("project_env")
    env = os.environ.get(name) if name else None
    if env and os.path.isabs(env):
        return os.path.realpath(env)
    cwd = event.cwd
    if not os.path.isabs(cwd):
        cwd = os.getcwd()
    from engine.base.project import project_folder

    return project_folder(cwd)  # a home kept in git is no project: its folders are not one
