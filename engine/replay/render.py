"""The replay's figures shown: the terminal summary and the HTML page, from
the templates of a `kind: replay_report` document
(pipelines/reports/replay.yaml by default), rendered in the engine's
bounded sandbox within the document's `render` bounds (engine/core/templates.py);
the page is autoescaped (every transcript path and handler name is text,
never markup) and self-contained (inline CSS, no script, nothing fetched)."""

BUILTIN = ("pipelines", "reports", "replay.yaml")


def builtin_path():
    import os

    from engine.base.paths import builtin_root_str

    return os.path.join(builtin_root_str(), *BUILTIN)


def problems(doc):
    """Template errors (syntax, an unknown filter or test) of a schema-valid
    replay_report document."""
    from engine.core.templates import static_problems

    return [doc.error(f"{msg} (on its line {line})", (where, "template"))
            for where in ("terminal", "html") for line, msg in static_problems(doc.data[where]["template"])]


def load(path=None):
    """The replay report's style, checked (UserError when it is not usable)."""
    from engine.core.schema import load_checked

    doc = load_checked(path, builtin_path(), "replay_report", problems)
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
