"""Banners: Jinja2 templates from the profile, rendered in the sandbox with
strict undefined variables, so a typo is an error at `engine validate`, not
an empty string in front of the agent."""

from functools import lru_cache

# What a template may use; the README documents each one.
VARIABLES = {
    "refresh": {"turn", "event", "handler", "level", "items", "omitted", "omitted_line", "cwd", "session_id", "source"},
    "omitted": {"omitted", "handler", "turn"},
}


def _env():
    from jinja2 import StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    return SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


@lru_cache(maxsize=None)
def _compiled(source):
    return _env().from_string(source)


def render(template_text, /, **values):
    return _compiled(template_text).render(**values)


def check(source, allowed):
    """Problems with a template: (line within the template, message) pairs."""
    from jinja2 import TemplateSyntaxError, meta

    env = _env()
    try:
        ast = env.parse(source)
    except TemplateSyntaxError as exc:
        return [(exc.lineno or 1, f"template syntax error: {exc.message}")]
    import re

    out = []
    for name in sorted(meta.find_undeclared_variables(ast) - set(allowed)):
        first = re.search(rf"\b{re.escape(name)}\b", source)
        line = source.count("\n", 0, first.start()) + 1 if first else 1
        out.append((line, f"template uses unknown variable {name!r}; available: {', '.join(sorted(allowed))}"))
    return out
