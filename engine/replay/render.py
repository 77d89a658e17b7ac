"""The replay's figures shown: the terminal summary and the HTML page, from
the templates of a `kind: replay_report` document
(pipelines/reports/replay.yaml by default), rendered in the engine's
bounded sandbox within the document's `render` bounds (engine/core/templates.py);
the page is autoescaped (every transcript path and handler name is text,
never markup) and self-contained (inline CSS, no script, nothing fetched)."""

from engine.base.errors import ValidationErrors

BUILTIN = ("pipelines", "reports", "replay.yaml")


def builtin_path():
    import os

    from engine.base.paths import builtin_root_str

    return os.path.join(builtin_root_str(), *BUILTIN)


def problems(doc):
    """Template syntax errors of a schema-valid replay_report document."""
    from jinja2 import TemplateSyntaxError
    from jinja2.sandbox import SandboxedEnvironment

    out = []
    for where in ("terminal", "html"):
        try:
            SandboxedEnvironment().parse(doc.data[where]["template"])
        except TemplateSyntaxError as exc:
            out.append(doc.error(f"template syntax error on its line {exc.lineno}: {exc.message}", (where, "template")))
    return out


def load(path=None):
    from engine.base.errors import given
    from engine.core import schema
    from engine.core.yamlload import load_file

    if path is not None:
        given(path)  # said as the user wrote it
    doc = load_file(path or builtin_path())
    errors = schema.check(doc, "replay_report") or problems(doc)
    if errors:
        raise ValidationErrors(errors)
    from engine.core.defaults import filled
    from engine.core.templates import with_places

    return with_places(filled("replay_report", doc.data), doc, (("terminal", "template"), ("html", "template")))


def _helpers(style):
    places, unpriced = style["cost_decimals"], style["unpriced"]
    return {"money": lambda v, sign=False: unpriced if v is None else format(v, f"{'+' if sign else ''},.{places}f")}


def render_text(result, style):
    from engine.core.templates import render_template

    cur = "$" if result["pricing"]["currency"] == "USD" else result["pricing"]["currency"] + " "
    return render_template(style, ("terminal", "template"), False, _helpers(style), r=result, cur=cur)


def render_html(result, style):
    from engine.core.templates import render_template

    return render_template(style, ("html", "template"), True, _helpers(style), r=result)
