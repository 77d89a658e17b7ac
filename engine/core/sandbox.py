"""The bounded Jinja2 sandbox the hooks' banners (engine/hooks/banner.py)
and the reports' templates (engine/session, engine/replay) render in:
every operator, call, filter, `~` concatenation, literal list, tuple or
dict, and printed value that could build a value larger than
`max_output_chars` (`hooks.templates`, a report style's `render`) is
refused before it runs, and all range() calls of one rendering produce at
most `max_range_items` items.

Sizes are measured before anything is built: a format's widths and
precisions (str.format's nested `{}` fields resolved, `%`'s `*` taken from
its values) count with the values they format; a container weighs its
length and what its items weigh (an item held twice counts twice, as str()
writes it twice), counted only up to past the limit, so a measure stays
cheap.

Imported only when a template is compiled or parsed (banner._env): Jinja2
stays off the path of a refresh served from the results cache."""

import functools
import re

from jinja2.compiler import CodeGenerator
from jinja2.constants import LOREM_IPSUM_WORDS
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment, SandboxedFormatter
from jinja2.utils import Namespace, generate_lorem_ipsum
from markupsafe import EscapeFormatter, Markup

from engine.base.errors import TemplateLimit

_SEQUENCES: tuple[type, ...] = (list, tuple, set, frozenset, type({}.keys()), type({}.values()), type({}.items()))
_DIGITS = re.compile(r"\d+")  # as str.format reads a width or a precision: any decimal digit
_LONGEST_WORD = max(map(len, LOREM_IPSUM_WORDS.split())) + 2  # with its ", " or ". "


def _weight(x, cap):
    """What str(x) may grow to: a string its length, an int its digits, a
    container its length and its items' weights; counted up to past cap."""
    if isinstance(x, (str, bytes)):
        return len(x)
    total, todo = 0, [x]
    while todo and total <= cap:
        v = todo.pop()
        if isinstance(v, (str, bytes)):
            total += len(v)
        elif isinstance(v, int):
            total += v.bit_length() // 3 + 1  # decimal digits, rounded up
        elif isinstance(v, _SEQUENCES):
            total += len(v)
            if total <= cap:
                todo.extend(v)
        elif isinstance(v, dict):
            total += len(v)
            if total <= cap:
                todo.extend(v.items())
        elif isinstance(v, Namespace):  # its repr writes its attributes
            todo.append(object.__getattribute__(v, "_Namespace__attrs"))
    return total


def _size(x, cap):
    """What a value weighs against the limits: an int its magnitude (what
    it repeats or pads by), anything else its weight (_weight)."""
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return abs(x)
    return _weight(x, cap)


class Generator(CodeGenerator):
    """Jinja2's code generator, with `a ~ b` built through the environment
    (Bounded.bounded_concat) and literal lists, tuples and dicts checked
    (Bounded.checked), so their sizes are measured."""

    def visit_Concat(self, node, frame):  # `a ~ b`: through the environment, so it is measured
        self.write("environment.bounded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")

    def _checked(self, visit, node, frame):
        if getattr(node, "ctx", "load") != "load":  # an assignment's target
            return visit(node, frame)
        self.write("environment.checked(")
        visit(node, frame)
        self.write(")")

    def visit_List(self, node, frame):  # `[a, a, a]` holding one large value many times
        self._checked(super().visit_List, node, frame)

    def visit_Tuple(self, node, frame):
        self._checked(super().visit_Tuple, node, frame)

    def visit_Dict(self, node, frame):
        self._checked(super().visit_Dict, node, frame)


class Formatter(SandboxedFormatter):
    """str.format in the sandbox: each field's width and precision (its
    nested `{}` fields resolved) and value measured before it is formatted,
    and what the fields of one call write counted."""

    def vformat(self, format_string, args, kwargs):
        self.left = self._env.max_chars
        return super().vformat(format_string, args, kwargs)

    def format_field(self, value, format_spec):
        env = self._env
        if env.max_chars is None:
            return super().format_field(value, format_spec)
        need = _weight(value, self.left)
        for digits in _DIGITS.findall(format_spec):  # the fill, the width, the precision
            if len(digits) > len(str(self.left)):
                env.refuse("asks for a field too wide")
            need += int(digits)
        if need > self.left:
            env.refuse("asks for a field too wide")
        text = super().format_field(value, format_spec)
        self.left -= len(text)
        if self.left < 0:
            env.refuse("built a value too large")
        return text


class EscapeFormatterBounded(Formatter, EscapeFormatter):
    pass


class Bounded(SandboxedEnvironment):
    """The sandbox with `limits`: (max_output_chars, max_range_items), either
    None for no limit; `source` names where they are set, for the message."""

    code_generator_class = Generator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, limits, source="hooks.templates", **kw):
        super().__init__(**kw)
        self.max_chars, self.max_range = limits
        self.source = source
        self.cap = None if self.max_chars is None else self.max_chars * 4  # check_call's generous bound
        self.range_left = self.max_range
        self.globals["range"] = self._range
        self.globals["lipsum"] = self._lipsum
        self.filters["format"] = self._format_filter(self.filters["format"])
        self.filters = {k: self._guarded(f) for k, f in self.filters.items()}
        self.finalize = self.checked  # a printed value: measured before str() writes it

    # -- limits ------------------------------------------------------
    def refuse(self, what):
        raise TemplateLimit(f"template {what} ({self.source} limits it to {self.max_chars} characters"
                            f" and {self.max_range} range items)")

    def check_call(self, first, rest, filtered=False):
        """A generous upper bound of what a call builds, refused before it
        runs.  A filtered value (`filtered`) is what the filter works on,
        not how much it makes: an int there weighs its digits (`n|int`)."""
        if self.max_chars is None:
            return
        lead = _weight(first, self.cap) if filtered else _size(first, self.cap)
        if (1 + lead) * (1 + sum(_size(a, self.cap) for a in rest)) > self.cap:
            self.refuse("asks for a value too large")

    def check_percent(self, fmt, values):
        """`fmt % values` refused before it runs when its text, its
        conversions' widths and precisions (`*` read from values) and the
        values they write add up past max_output_chars."""
        if self.max_chars is None or not isinstance(fmt, str):
            return
        args = values if isinstance(values, tuple) else (values,)
        widest = len(str(self.max_chars))
        total, n, i, j = len(fmt), len(fmt), 0, fmt.find("%")
        while j != -1 and total <= self.max_chars:
            j += 1
            value, keyed = None, j < n and fmt[j] == "("
            if keyed:  # %(key)s: the key may hold balanced parentheses
                depth, k = 1, j + 1
                while k < n and depth:
                    depth += (fmt[k] == "(") - (fmt[k] == ")")
                    k += 1
                value = values.get(fmt[j + 1:k - 1]) if isinstance(values, dict) else values
                j = k
            while j < n and fmt[j] in "-+ #0":
                j += 1
            for dot in (False, True):  # the width, then the precision
                if dot:
                    if j >= n or fmt[j] != ".":
                        break
                    j += 1
                if j < n and fmt[j] == "*":
                    star = args[i] if i < len(args) else 0
                    total += _size(star, self.cap)
                    i, j = i + 1, j + 1
                    continue
                k = j
                while k < n and fmt[k].isdecimal():
                    k += 1
                if k - j > widest:
                    self.refuse("asks for a field too wide")
                total += int(fmt[j:k] or 0)
                j = k
            while j < n and fmt[j] in "hlL":
                j += 1
            if j < n and fmt[j] != "%" and not keyed:
                value = args[i] if i < len(args) else None
                i += 1
            total += _weight(value, self.cap)
            j = fmt.find("%", j + 1)
        if total > self.max_chars:
            self.refuse("asks for a value too large")

    def checked(self, value):
        if self.max_chars is None or isinstance(value, int):
            return value
        if _size(value, self.cap) > self.max_chars:
            self.refuse("built a value too large")
        if hasattr(type(value), "__next__"):  # a generator (map, select, ...): what it yields is counted
            return self._counted(value)
        return value

    def _counted(self, items):
        left = self.max_chars
        for item in items:
            left -= 1 + _weight(item, self.cap)
            if left < 0:
                self.refuse("built a value too large")
            yield item

    def _range(self, *args):
        r = range(*args)
        if self.max_range is not None:
            self.range_left -= len(r)
            if self.range_left < 0:
                self.refuse("loops over too many range() items")
        return r

    def _lipsum(self, n=5, html=True, min=20, max=100):  # noqa: A002 - Jinja2's own signature
        if self.max_chars is not None and n * max * _LONGEST_WORD > self.max_chars:
            self.refuse("asks for too much lorem ipsum")
        return generate_lorem_ipsum(n, html, min, max)

    def _format_filter(self, f):
        env = self

        @functools.wraps(f)
        def format_filter(value, *args, **kwargs):  # `"%s"|format(x)`: Jinja2 runs `%`
            env.check_percent(str(value), kwargs or args)
            return f(value, *args, **kwargs)

        return format_filter

    def _guarded(self, f):
        env = self

        @functools.wraps(f)  # keeps jinja_pass_arg
        def guarded(*args, **kwargs):
            plain = [a for a in args if not isinstance(a, (Context, SandboxedEnvironment)) and
                     type(a).__name__ != "EvalContext"]
            if plain:
                env.check_call(plain[0], plain[1:] + list(kwargs.values()), filtered=True)
            return env.checked(f(*args, **kwargs))

        return guarded

    # -- the sandbox's interception points -----------------------------
    def wrap_str_format(self, value):
        """Jinja2's str.format and str.format_map, through Formatter."""
        if getattr(value, "__name__", None) not in ("format", "format_map") or \
                not isinstance(getattr(value, "__self__", None), str) or super().wrap_str_format(value) is None:
            return None
        text = value.__self__
        formatter = EscapeFormatterBounded(self, escape=text.escape) if isinstance(text, Markup) else Formatter(self)
        is_map = value.__name__ == "format_map"

        def wrapper(*args, **kwargs):
            if is_map:
                if kwargs:
                    raise TypeError("format_map() takes no keyword arguments")
                if len(args) != 1:
                    raise TypeError(f"format_map() takes exactly one argument ({len(args)} given)")
                args, kwargs = (), args[0]
            return type(text)(formatter.vformat(text, args, kwargs))

        wrapper = functools.update_wrapper(wrapper, value)
        wrapper.measured = True  # call() leaves its arguments to the Formatter
        return wrapper

    def call_binop(self, context, op, left, right):
        if self.max_chars is not None:
            if op == "*":
                for a, b in ((left, right), (right, left)):
                    if isinstance(a, (str, list, tuple)) and isinstance(b, int) and _size(a, self.cap) * b > self.max_chars:
                        self.refuse("repeats a value too many times")
                if (isinstance(left, int) and isinstance(right, int)
                        and abs(left).bit_length() + abs(right).bit_length() > self.cap):
                    self.refuse("multiplies numbers too large")
            elif op == "**":
                if (isinstance(left, int) and isinstance(right, int) and abs(left) > 1
                        and right * abs(left).bit_length() > self.cap):
                    self.refuse("raises to a power too large")
            elif op == "%" and isinstance(left, str):
                self.check_call(left, right if isinstance(right, tuple) else (right,))
                self.check_percent(left, right)
            elif op == "+" and _size(left, self.cap) + _size(right, self.cap) > self.max_chars and not isinstance(left, int):
                self.refuse("adds values too large")
        return self.checked(self.binop_table[op](left, right))

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 - the sandbox's own signature
        owner = getattr(__obj, "__self__", None)
        if getattr(__obj, "measured", False):
            pass  # str.format: its Formatter (wrap_str_format) measures every field it writes
        elif owner is not None and not isinstance(owner, type) and owner is not __self:
            __self.check_call(owner, list(args) + list(kwargs.values()))
        else:
            __self.check_call(None, list(args) + list(kwargs.values()))
        return __self.checked(super().call(__context, __obj, *args, **kwargs))

    def bounded_concat(self, parts):
        if self.max_chars is not None and sum(_weight(p, self.cap) for p in parts) > self.max_chars:
            self.refuse("joins values too large")
        text = "".join(map(str, parts))
        return self.checked(text)


def written(template, values):
    """What `template` (of a Bounded environment) writes with `values`, its
    range budget renewed, refused past max_output_chars as it is written."""
    env = template.environment
    env.range_left = env.max_range
    out, n = [], 0
    for chunk in template.generate(**values):
        n += len(chunk)
        if env.max_chars is not None and n > env.max_chars:
            env.refuse("wrote too much")
        out.append(chunk)
    return "".join(out)


def render_bounded(source, limits, name, autoescape=False, helpers=None, /, **values):
    """`source` rendered with `values` under `limits` (a report style's
    `render`: max_output_chars, max_range_items, timeout_ms; `name` says
    where they are set): TemplateLimit past the first two, TimeUp
    (engine/base/timebox.py) past the last."""
    from jinja2 import StrictUndefined

    from engine.base.timebox import within

    env = Bounded((limits["max_output_chars"], limits["max_range_items"]), name, undefined=StrictUndefined,
                  autoescape=autoescape, keep_trailing_newline=False)
    env.globals.update(helpers or {})
    template = env.from_string(source)
    return within(limits["timeout_ms"] / 1000.0, lambda: written(template, values))
