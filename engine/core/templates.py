"""Rendering the templates of a report document (a session report style,
a replay report): in the engine's bounded sandbox (sandbox.py), within the
document's own `render` bounds, an error said at the template's place."""


def static_problems(source, env=None):
    """(line within the template, message) of what is wrong before any
    rendering: its syntax, a filter or test Jinja2 does not have."""
    return parsed(source, env)[1]


def parsed(source, env=None):
    """(the template's syntax tree, its static problems): the tree, None
    when it does not parse, for a caller that checks more (its variables)
    without parsing it again.  Parsing resolves neither filters nor tests,
    and a test under `if` fails only as it renders: each is looked up here,
    then the template is compiled for the rest."""
    from jinja2 import TemplateSyntaxError, nodes

    from .sandbox import Bounded

    env = env or Bounded((None, None))
    try:
        ast = env.parse(source)
    except TemplateSyntaxError as exc:
        return None, [(exc.lineno or 1, f"template syntax error: {exc.message}")]
    out = [_unknown(node, kind, known) for kind, cls, known in (("filter", nodes.Filter, env.filters),
                                                                 ("test", nodes.Test, env.tests))
           for node in ast.find_all(cls) if node.name not in known]
    if out:
        return ast, out
    try:
        env.compile(ast)
    except TemplateSyntaxError as exc:
        return ast, [(exc.lineno or 1, f"template error: {exc.message}")]
    return ast, []


def _unknown(node, kind, known):
    from engine.base.errors import suggest

    hint = suggest(node.name, known) or f"; use one of Jinja2's {kind}s"
    return (node.lineno or 1, f"template uses unknown {kind} {node.name!r}{hint}")


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
