"""The report style: `pipelines/reports/session.yaml` (kind: report) or a
file of the user's, schema-checked, its patterns compiled (and in a user's
file probed for runaways) and its templates compiled (their filters and tests looked up), so a mistake is one
FILE:LINE:COL line before any transcript is read.
"""

BUILTIN = ("pipelines", "reports", "session.yaml")
# Where each template is, in the style's own words (the rendering's errors say so).
TEMPLATES = (("terminal", "template"), ("html", "template"), ("since", "terminal_template"),
             ("since", "html_template"))


def builtin_path():
    import os

    from engine.base.paths import builtin_root_str

    return os.path.join(builtin_root_str(), *BUILTIN)


def problems(doc):
    """Semantic problems of a schema-valid report document."""
    out = []
    data = doc.data
    for i, m in enumerate(data["context_windows"]["models"]):
        out.extend(_pattern(doc, m["pattern"], ("context_windows", "models", i, "pattern")))
    for i, b in enumerate(data["refreshes"]["banners"]):
        out.extend(_pattern(doc, b["pattern"], ("refreshes", "banners", i, "pattern")))
    for key in ("skip_lines", "strip", "failure_lines", "lead_ins", "generic"):
        for i, pattern in enumerate(data["errors"].get(key) or ()):
            out.extend(_pattern(doc, pattern, ("errors", key, i)))
    for where in TEMPLATES:
        out.extend(_template(doc, data[where[0]][where[1]], where))
    return out


def _pattern(doc, pattern, path):
    from engine.core.patterncheck import re_pattern_problems

    return re_pattern_problems(doc, pattern, path)


def _template(doc, source, path):
    from engine.core.templates import static_problems

    return [doc.error(f"{msg} (on its line {line})", path) for line, msg in static_problems(source)]


def load(path=None):
    """The style document's data, checked (UserError when it is not usable)."""
    from engine.core.schema import load_checked

    doc = load_checked(path, builtin_path(), "report", problems)
    from engine.core.defaults import filled
    from engine.core.templates import with_places

    return with_places(filled("report", doc.data), doc, TEMPLATES)
