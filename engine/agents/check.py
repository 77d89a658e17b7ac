"""What an agent document must say beyond its schema: every answer kind and
install template names only events the agent has, its transcript reader
exists and its transcript patterns compile (FILE:LINE:COL errors, as
`engine validate` prints them)."""


def problems(doc):
    """The problems of a document valid against its schema (read with the
    schema's defaults filled in, as the agents table holds it)."""
    from .spec import Agent
    from .table import complete
    from .transcripts import READERS

    data, out = complete(doc.data), []
    agent = Agent(data)
    neutral = set(data.get("events", {}).values())
    for what in data.get("answers") or {}:
        for i, event in enumerate(agent.answer_events(what)):
            if event not in neutral:
                out.append(doc.error(f"answers.{what} names the event {event!r}, which this agent does not send "
                                     f"(its events: {', '.join(sorted(neutral))})", ("answers", what, "events", i)))
    matcher = (data.get("install") or {}).get("matcher") or {}
    for i, event in enumerate(matcher.get("events") or ()):
        if event not in neutral:
            out.append(doc.error(f"install.matcher names the event {event!r}, which this agent does not send",
                                 ("install", "matcher", "events", i)))
    out += _install_problems(doc, data)
    for what, spec in (data.get("answers") or {}).items():
        out.extend(_version_errors(doc, what, spec))
    reader = (data.get("transcript") or {}).get("reader")
    if reader not in READERS:
        out.append(doc.error(f"no transcript reader named {reader!r}; readers: {', '.join(sorted(READERS))}",
                             ("transcript", "reader")))
    out.extend(_patterns(doc, data.get("transcript") or {}))
    out.extend(_session_shape(doc, data.get("transcript") or {}))
    out.extend(_path_patterns(doc, data.get("tools") or {}))
    out.extend(_failure_patterns(doc, data.get("failure") or {}))
    out.extend(_cut_markers(doc, data.get("tools") or {}))
    out.extend(_compaction_problems(doc, data.get("context") or {}))
    if not data.get("event_key") and not (data.get("install") or {}).get("event_arg"):
        out.append(doc.error("the payload names no event (no event_key) and the hook command does not either: "
                             "set install.event_arg: true", ("install",)))
    return out


def _compaction_problems(doc, context):
    """Where the agent compacts lies inside its window; a setting's fields fit its unit."""
    spec, where = context.get("compaction"), ("context", "compaction")
    if not spec:
        return []
    window, setting = context["window_tokens"], spec.get("setting")
    out = [doc.error(f"context.compaction.{key} is {spec[key]:,}, not below window_tokens ({window:,})", (*where, key))
           for key in ("tokens", "tokens_before_window") if key in spec and spec[key] >= window]
    if not setting:
        return out
    if setting["of_tokens_before_window"] and setting["unit"] == "tokens":
        out.append(doc.error("context.compaction.setting.of_tokens_before_window applies to a fraction or a percent, "
                             "not to unit tokens", (*where, "setting", "of_tokens_before_window")))
    if "format" in setting and "file" not in setting:
        out.append(doc.error("context.compaction.setting.format needs a file (without one the agent's settings "
                             "files are read)", (*where, "setting", "format")))
    return out


def _names_command(node):
    if isinstance(node, dict):
        return any(_names_command(v) for v in node.values())
    if isinstance(node, list):
        return any(_names_command(v) for v in node)
    return node == "{command}"


def _install_problems(doc, data):
    """The hook group holds the engine's command; the trust check labels only the agent's events."""
    out, install = [], data.get("install") or {}
    if "group" in install and not _names_command(install["group"]):
        out.append(doc.error('install.group names no "{command}" (where the engine\'s hook command goes)',
                             ("install", "group")))
    for name in ((install.get("trust_check") or {}).get("labels") or {}):
        if name not in (data.get("events") or {}):
            out.append(doc.error(f"install.trust_check.labels names {name!r}, which is not one of this agent's "
                                 "events", ("install", "trust_check", "labels", name)))
    for name in data.get("timeout_caps") or {}:
        if name not in (data.get("events") or {}):
            out.append(doc.error(f"timeout_caps names {name!r}, which is not one of this agent's events",
                                 ("timeout_caps", name)))
    return out + _order_problems(doc, install.get("settings_order") or ())


def _order_problems(doc, order):
    """An entry of install.settings_order is beside another entry with a file of its own."""
    files = {entry["name"] for entry in order if "file" in entry and "beside" not in entry}
    return [doc.error(f"install.settings_order[{i}].beside names {entry['beside']!r}, which is no entry with a file "
                      "of its own", ("install", "settings_order", i, "beside"))
            for i, entry in enumerate(order) if "beside" in entry and entry["beside"] not in files]


def _patterns(doc, transcript):
    """The transcript's patterns compile and do not run away; the session
    id one has a group."""
    import re

    from engine.core.patterncheck import re_pattern_problems

    out = []
    folder = transcript.get("project_folder")  # as written: an agent may declare none
    for path, pattern in ((("session_id",), transcript.get("session_id")),
                          (("project_folder", "keep"), folder["keep"] if folder else None)):
        if pattern is None:
            continue
        found = re_pattern_problems(doc, pattern, ("transcript", *path))
        if found:
            out.extend(found)
            continue
        if path == ("session_id",) and re.compile(pattern).groups < 1:
            out.append(doc.error("the pattern has no group: put the session id in (...)", ("transcript", *path)))
    return out


# Ids no session_shape may take: each would climb out of its folder, cut
# the path short, break a log line or make a name no file system takes.
UNSAFE_IDS = ("", ".", "..", "...", "../x", "a/b", "/a", "a..b", "a\0b", "a\nb", "a\\b", "x" * 256)


def _session_shape(doc, transcript):
    """`session_shape` takes none of the UNSAFE_IDS: a session id it
    takes becomes a path component."""
    from .spec import has_shape

    shape = transcript.get("session_shape")
    if shape is None:
        return []
    taken = [i for i in UNSAFE_IDS if has_shape(shape, i)]
    if taken:
        return [doc.error(f"the shape takes {', '.join(repr(i if len(i) < 20 else i[:8] + '...') for i in taken)}, "
                          "which must never become a path component: take no '/', '.', '\\', NUL or line break",
                          ("transcript", "session_shape"))]
    return []


def _path_patterns(doc, tools):
    """Each `paths_in.pattern` compiles, does not run away and has a group
    (the path)."""
    import re

    from engine.core.patterncheck import re_pattern_problems

    out = []
    for kind, spec in tools.items():
        if "paths_in" not in spec:
            continue
        pattern = spec["paths_in"]["pattern"]
        where = ("tools", kind, "paths_in", "pattern")
        found = re_pattern_problems(doc, pattern, where)
        out.extend(found)
        if not found and re.compile(pattern).groups < 1:
            out.append(doc.error("the pattern has no group: put the path in (...)", where))
    return out


def _failure_patterns(doc, failure):
    """Each pattern that reads a failure (`strip`, `skip_lines`,
    `not_lessons`) compiles with Python's re and does not run away."""
    from engine.core.patterncheck import re_pattern_problems

    return [p for key in ("strip", "skip_lines", "not_lessons") for i, pattern in enumerate(failure.get(key) or ())
            for p in re_pattern_problems(doc, pattern, ("failure", key, i))]


def _cut_markers(doc, tools):
    """A tool output's `cut_marker` and `failed_cut_marker` compile with Python's re and do not run away."""
    from engine.core.patterncheck import re_pattern_problems

    marked = [(kind, key, spec["output"][key]) for kind, spec in tools.items() for key in ("cut_marker", "failed_cut_marker")
              if isinstance(spec.get("output"), dict) and key in spec["output"]]
    return [p for kind, key, marker in marked for p in re_pattern_problems(doc, marker, ("tools", kind, "output", key))]


def _version_errors(doc, what, spec):
    from .version import parse

    out = []
    if spec.get("since") and parse(spec["since"]) is None:
        out.append(doc.error(f"answers.{what}.since: {spec['since']!r} is not a version (1.2.3)", ("answers", what, "since")))
    for i, bad in enumerate(spec["broken"]):
        a, b = parse(bad["from"]), parse(bad["to"])
        if a is None or b is None:
            out.append(doc.error(f"answers.{what}.broken: {bad['from']!r}..{bad['to']!r} is not a version range",
                                 ("answers", what, "broken", i)))
        elif a > b:
            out.append(doc.error(f"answers.{what}.broken: from {bad['from']} is after to {bad['to']}; swap them",
                                 ("answers", what, "broken", i)))
    return out
