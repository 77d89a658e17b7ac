"""`engine session report`: one session of the agent, read from its
transcript: turns, context fill over time with the refreshes and
compactions marked, the refreshes and their sizes, the tools whose results
filled the context, and the errors.

The Python API comes first; the CLI (command.py) is a thin layer over it:

    from engine.session import build_report, load_style, render_text, render_html, find
    report = build_report(find(None, True, cwd), load_style())
"""

# The API's names from their modules, imported at first use: a hook reads
# locate.py alone (Stop's failure scan, a resume's run), never the report,
# its analysis and its style (about 7 ms of every such hook).
_LAZY = {"find": ("locate", "find"), "build_report": ("report", "build_report"), "load_style": ("style", "load")}


def __getattr__(name):
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{where[0]}"), where[1])
    globals()[name] = value
    return value


def render_text(report, style, color=False):
    """The terminal report (the style's `terminal.template`)."""
    from engine.core.templates import render_template

    from .chart import terminal

    shown = report["errors"][: style["errors"]["shown"]]
    return render_template(style, ("terminal", "template"), r=report, chart=terminal(report, style, color),
                           errors_shown=shown)


def render_html(report, style):
    """One self-contained page: inline CSS and SVG, no script, nothing fetched."""
    from markupsafe import Markup

    from engine.core.templates import render_template

    from .chart import svg

    return render_template(style, ("html", "template"), True, r=report, chart=Markup(svg(report, style)),
                           style=style["html"])


def render_period(period, style, html=False):
    """`--since`: one row a session of the period plus totals, for the
    terminal or as one HTML page (the style's `since` templates)."""
    from engine.core.templates import render_template

    key = "html_template" if html else "terminal_template"
    return render_template(style, ("since", key), html, p=period, style=style["html"])


__all__ = ["render_period", "build_report", "find", "load_style", "render_text", "render_html"]
