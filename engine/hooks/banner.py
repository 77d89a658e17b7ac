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


# Private-use marks around a placeholder: a value holding one is never memoised.
_OPEN, _CLOSE = "\ue000", "\ue001"


def render_cached(template_text, /, **values):
    """render(), memoised in the results cache.  Variables the template only
    prints (`{{ turn }}`, no filter, test or condition) are left out of the
    key and filled in afterwards, so the banner of turn 40 is the banner of
    turn 20 with another number: a refresh of unchanged files skips Jinja2."""
    from .. import textcache
    from .fastjson import dumps, loads

    tkey = textcache.key("template-analysis", template_text)
    try:
        printed, used = loads(textcache.get("render", tkey) or "null")
    except (TypeError, ValueError):  # absent or unreadable: analyse again
        printed, used = _analyse(template_text)
        textcache.put("render", tkey, dumps([printed, used]))
    holes = [n for n in printed if isinstance(values.get(n), (str, int)) and not isinstance(values.get(n), bool)]
    rest = {k: _plain(v) for k, v in values.items() if k in used and k not in holes}  # what the text depends on
    shape = repr(sorted(rest.items()))  # plain data: its repr is exact and stable
    if _OPEN in shape or _CLOSE in shape or any(_OPEN in str(values[n]) for n in holes):
        return render(template_text, **values)
    rkey = textcache.key("render", template_text, shape, ",".join(holes))
    out = textcache.get("render", rkey)
    if out is None:
        out = render(template_text, **{**values, **{n: f"{_OPEN}{n}{_CLOSE}" for n in holes}})
        textcache.put("render", rkey, out)
    for n in holes:
        out = out.replace(f"{_OPEN}{n}{_CLOSE}", str(values[n]))
    return out


def _plain(value):
    """Template values as plain data (items become tuples of their fields)."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return sorted((str(k), _plain(v)) for k, v in value.items())
    fields = getattr(value, "FIELDS", None) or getattr(value, "__dataclass_fields__", None)
    if fields is not None and not isinstance(value, type):
        return [(k, _plain(getattr(value, k))) for k in fields]
    return value


def _analyse(source):
    """[names only printed, every name the template reads]."""
    from jinja2 import meta

    return [printed_only(source), sorted(meta.find_undeclared_variables(_env().parse(source)))]


def printed_only(source):
    """Names the template uses only as a bare `{{ name }}` output."""
    from jinja2 import nodes

    ast = _env().parse(source)
    uses, printed = {}, {}
    for n in ast.find_all(nodes.Name):
        uses[n.name] = uses.get(n.name, 0) + (1 if n.ctx == "load" else 10**6)  # assigned: never a hole
    for out in ast.find_all(nodes.Output):
        for child in out.nodes:
            if isinstance(child, nodes.Name) and child.ctx == "load":
                printed[child.name] = printed.get(child.name, 0) + 1
    return sorted(n for n, c in printed.items() if uses.get(n) == c)


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
