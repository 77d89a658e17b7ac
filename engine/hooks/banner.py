"""Banners: Jinja2 templates from the profile, rendered in the sandbox with
strict undefined variables, so a typo is an error at `engine validate`, not
an empty string in front of the agent.

Jinja2's sandbox stops a template from reaching Python, not from using all
memory and time: `{{ 'x' * 1000000000 }}` or two nested `range(100000)`
loops pass it.  The environment (engine/core/sandbox.py) bounds them (`hooks.templates`): every
operator, call, filter, `~` concatenation, literal list and printed value that
could build a value larger than `max_output_chars` (a format's widths and
precisions included) is refused before it runs, all range() calls of one
rendering produce at most `max_range_items` items together, and the output
stops at `max_output_chars`.  What is left (a long pure-Python loop) is
bounded by the hook's deadline.
"""

from engine.base.errors import TemplateLimit  # noqa: F401 - raised by the sandbox; callers catch it from here


def _memo(fn):
    """functools.lru_cache(maxsize=None) without importing functools (and
    collections with it) on the path of a refresh served from the cache."""
    memo = {}

    def wrapper(*args):
        try:
            return memo[args]
        except KeyError:
            value = memo[args] = fn(*args)
            return value

    wrapper.cache_clear = memo.clear
    wrapper.__wrapped__ = fn
    return wrapper


# What a template may use; docs/hooks.md documents each one.
VARIABLES = {
    "refresh": {"turn", "event", "handler", "level", "items", "omitted", "omitted_count", "omitted_more",
                "omitted_line", "cwd", "session_id", "source"},
    "omitted": {"omitted", "omitted_count", "omitted_more", "handler", "turn"},
    "digest": {"name", "title", "path", "priority", "chars", "handler", "turn"},
}


def _env(limits=(None, None)):
    from jinja2 import StrictUndefined

    from engine.core.sandbox import Bounded

    return Bounded(limits, undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


@_memo
def _compiled(source, limits):
    return _env(limits).from_string(source)


def render(template_text, limits, /, **values):
    """The template rendered with `values`, within `limits` (a mapping with
    max_output_chars and max_range_items); TemplateLimit past them."""
    from engine.core.sandbox import written

    return written(_compiled(template_text, (limits["max_output_chars"], limits["max_range_items"])), values)


# Private-use marks around a placeholder: a value holding one is never memoised.
_OPEN, _CLOSE = "\ue000", "\ue001"


def trial(template_text, hooks, /, **values):
    """What is wrong with rendering `template_text` with the sample `values`
    as a hook would: under the profile's template limits and within its
    deadline_ms (never more than the engine's own bound), whatever timer
    this process runs (a compile box runs for a minute).  None when it
    renders."""
    from engine.base.timebox import TimeUp, within
    from engine.core.settings import hook_bounds

    bound = hook_bounds()["deadline_ms"]
    ms = min(hooks.get("deadline_ms", bound), bound)
    try:
        within(ms / 1000.0, lambda: render(template_text, hooks["templates"], **values))
    except TemplateLimit as exc:
        return str(exc)
    except TimeUp:
        return f"template does not finish within deadline_ms ({ms} ms)"
    except Exception as exc:  # noqa: BLE001 - any failure here is one the hook would meet
        return f"template fails with sample values: {type(exc).__name__}: {exc}"
    return None


def render_cached(template_text, limits, /, **values):
    """render(), memoised in the results cache.  Variables the template only
    prints (`{{ turn }}`, no filter, test or condition) are left out of the
    key and filled in afterwards, so the banner of turn 40 is the banner of
    turn 20 with another number: a refresh of unchanged files skips Jinja2."""
    from engine.base.fastjson import dumps, loads
    from engine.core import textcache

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
        return render(template_text, limits, **values)
    bounds = f"{limits['max_output_chars']},{limits['max_range_items']}"
    rkey = textcache.key("render", template_text, shape, ",".join(holes), bounds)
    out = textcache.get("render", rkey)
    if out is None:
        out = render(template_text, limits, **{**values, **{n: f"{_OPEN}{n}{_CLOSE}" for n in holes}})
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
    """Problems with a template: (line within the template, message) pairs.
    Known once per template and set of variables in a process: every
    profile compiled checks the same built-in templates (`engine validate`
    compiles up to seven, each in a box forked after the first)."""
    if not isinstance(source, str):  # not a template: said as Jinja2 says it, never kept
        return list(_problems(source, allowed))
    return list(_known_problems(source, frozenset(allowed)))


def _problems(source, allowed):
    from jinja2 import meta

    from engine.core.templates import parsed

    ast, out = parsed(source, _env())
    if out:
        return tuple(out)
    import re

    out = []
    for name in sorted(meta.find_undeclared_variables(ast) - set(allowed)):
        first = re.search(rf"\b{re.escape(name)}\b", source)
        line = source.count("\n", 0, first.start()) + 1 if first else 1
        out.append((line, f"template uses unknown variable {name!r}; available: {', '.join(sorted(allowed))}"))
    return tuple(out)


_known_problems = _memo(_problems)
