"""What an agent document must say beyond its schema: every answer kind and
install template names only events the agent has, and its transcript reader
exists (FILE:LINE:COL errors, as `engine validate` prints them)."""


def problems(doc):
    from .transcripts import READERS

    data, out = doc.data, []
    neutral = set(data.get("events", {}).values())
    for what, spec in (data.get("answers") or {}).items():
        for i, event in enumerate(spec.get("events") or ()):
            if event not in neutral:
                out.append(doc.error(f"answers.{what} names the event {event!r}, which this agent does not send "
                                     f"(its events: {', '.join(sorted(neutral))})", ("answers", what, "events", i)))
    matcher = (data.get("install") or {}).get("matcher") or {}
    for i, event in enumerate(matcher.get("events") or ()):
        if event not in neutral:
            out.append(doc.error(f"install.matcher names the event {event!r}, which this agent does not send",
                                 ("install", "matcher", "events", i)))
    for what, spec in (data.get("answers") or {}).items():
        out.extend(_version_errors(doc, what, spec))
    reader = (data.get("transcript") or {}).get("reader")
    if reader not in READERS:
        out.append(doc.error(f"no transcript reader named {reader!r}; readers: {', '.join(sorted(READERS))}",
                             ("transcript", "reader")))
    if not data.get("event_key") and not (data.get("install") or {}).get("event_arg"):
        out.append(doc.error("the payload names no event (no event_key) and the hook command does not either: "
                             "set install.event_arg: true", ("install",)))
    return out


def _version_errors(doc, what, spec):
    from .version import parse

    out = []
    if spec.get("since") and parse(spec["since"]) is None:
        out.append(doc.error(f"answers.{what}.since: {spec['since']!r} is not a version (1.2.3)", ("answers", what, "since")))
    for i, bad in enumerate(spec.get("broken") or ()):
        a, b = parse(bad["from"]), parse(bad["to"])
        if a is None or b is None:
            out.append(doc.error(f"answers.{what}.broken: {bad['from']!r}..{bad['to']!r} is not a version range",
                                 ("answers", what, "broken", i)))
        elif a > b:
            out.append(doc.error(f"answers.{what}.broken: from {bad['from']} is after to {bad['to']}; swap them",
                                 ("answers", what, "broken", i)))
    return out
