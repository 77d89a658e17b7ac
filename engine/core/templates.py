"""Rendering the templates of a report document (a session report style,
a replay report): in the engine's bounded sandbox (sandbox.py), within the
document's own `render` bounds, an error said at the template's place."""


def with_places(data, doc, templates):
    """`data` with its file and its templates' places under "_places", for
    an error of a rendering (render_template)."""
    data["_places"] = {".".join(t): (str(doc.file), *doc.where(t)) for t in templates}
    return data


def render_template(style, where, autoescape=False, helpers=None, /, **values):
    """The document's template at `where` rendered within its `render`
    bounds; one past them, or failing (an undefined name), is a UserError
    at the template's FILE:LINE:COL."""
    from engine.base.errors import TemplateLimit, UserError
    from engine.base.timebox import TimeUp

    from .sandbox import render_bounded

    source = style
    for key in where:
        source = source[key]
    name = ".".join(where)
    try:
        return render_bounded(source, style["render"], "this document's `render`", autoescape, helpers, **values)
    except TemplateLimit as exc:
        raise UserError(f"{name}: {exc}", *style["_places"][name]) from None
    except TimeUp:
        raise UserError(f"{name}: template does not finish within render.timeout_ms "
                        f"({style['render']['timeout_ms']} ms)", *style["_places"][name]) from None
    except Exception as exc:  # noqa: BLE001 - a template of the user's failing: one line at it, never a traceback
        raise UserError(f"{name}: template fails: {type(exc).__name__}: {exc}", *style["_places"][name]) from None
