"""`engine session report`: one session of the agent, read from its
transcript: turns, context fill over time with the refreshes and
compactions marked, the refreshes and their sizes, the tools whose results
filled the context, and the errors.

The Python API comes first; the CLI (command.py) is a thin layer over it:

    from engine.session import build_report, load_style, render_text, render_html, find
    report = build_report(find(None, True, cwd), load_style())
"""

from engine.core.templates import render_template

from .locate import find
from .report import build_report
from .style import load as load_style


def render_text(report, style, color=False):
    """The terminal report (the style's `terminal.template`)."""
    from .chart import terminal

    shown = report["errors"][: style["errors"]["shown"]]
    return render_template(style, ("terminal", "template"), r=report, chart=terminal(report, style, color),
                           errors_shown=shown)


def render_html(report, style):
    """One self-contained page: inline CSS and SVG, no script, nothing fetched."""
    from markupsafe import Markup

    from .chart import svg

    return render_template(style, ("html", "template"), True, r=report, chart=Markup(svg(report, style)),
                           style=style["html"])


def render_period(period, style, html=False):
    """`--since`: one row a session of the period plus totals, for the
    terminal or as one HTML page (the style's `since` templates)."""
    key = "html_template" if html else "terminal_template"
    return render_template(style, ("since", key), html, p=period, style=style["html"])


__all__ = ["render_period", "build_report", "find", "load_style", "render_text", "render_html"]
