"""The bounded Jinja2 sandbox banners are rendered in (banner.py): every
operator, call, filter and `~` concatenation that could build a value larger
than `hooks.templates.max_output_chars` is refused before it runs, and all
range() calls of one rendering produce at most `max_range_items` items.

Imported only when a template is compiled or parsed (banner._env): Jinja2
stays off the path of a refresh served from the results cache."""

import functools

from jinja2.compiler import CodeGenerator
from jinja2.runtime import Context
from jinja2.sandbox import SandboxedEnvironment

from .errors import TemplateLimit


def _size(x):
    """What a value weighs against the limits: an int its magnitude, a
    sized value its length, anything else nothing."""
    if isinstance(x, bool):
        return 0
    if isinstance(x, int):
        return abs(x)
    if isinstance(x, (str, bytes, list, tuple, dict, set, frozenset)):
        return len(x)
    return 0


class Generator(CodeGenerator):
    """Jinja2's code generator, with `a ~ b` built through the environment
    (Bounded.bounded_concat), so its size is checked."""

    def visit_Concat(self, node, frame):  # `a ~ b`: through the environment, so it is measured
        self.write("environment.bounded_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class Bounded(SandboxedEnvironment):
    """The sandbox with the limits of `hooks.templates`: (max_output_chars,
    max_range_items), either None for no limit."""

    code_generator_class = Generator
    intercepted_binops = frozenset({"*", "**", "+", "%"})

    def __init__(self, limits, **kw):
        super().__init__(**kw)
        self.max_chars, self.max_range = limits
        self.range_left = self.max_range
        self.globals["range"] = self._range
        self.filters = {k: self._guarded(f) for k, f in self.filters.items()}

    # -- limits ------------------------------------------------------
    def refuse(self, what):
        raise TemplateLimit(f"template {what} (hooks.templates limits it to {self.max_chars} characters"
                            f" and {self.max_range} range items)")

    def check_call(self, first, rest):
        """A generous upper bound of what a call builds, refused before it runs."""
        if self.max_chars is None:
            return
        if (1 + _size(first)) * (1 + sum(_size(a) for a in rest)) > self.max_chars * 4:
            self.refuse("asks for a value too large")

    def checked(self, value):
        if self.max_chars is not None and _size(value) > self.max_chars and not isinstance(value, int):
            self.refuse("built a value too large")
        return value

    def _range(self, *args):
        r = range(*args)
        if self.max_range is not None:
            self.range_left -= len(r)
            if self.range_left < 0:
                self.refuse("loops over too many range() items")
        return r

    def _guarded(self, f):
        env = self

        @functools.wraps(f)  # keeps jinja_pass_arg
        def guarded(*args, **kwargs):
            plain = [a for a in args if not isinstance(a, (Context, SandboxedEnvironment)) and
                     type(a).__name__ != "EvalContext"]
            if plain:
                env.check_call(plain[0], plain[1:] + list(kwargs.values()))
            return env.checked(f(*args, **kwargs))

        return guarded

    # -- the sandbox's interception points -----------------------------
    def call_binop(self, context, op, left, right):
        if self.max_chars is not None:
            if op == "*":
                for a, b in ((left, right), (right, left)):
                    if isinstance(a, (str, list, tuple)) and isinstance(b, int) and len(a) * b > self.max_chars:
                        self.refuse("repeats a value too many times")
            elif op == "**":
                if (isinstance(left, int) and isinstance(right, int) and abs(left) > 1
                        and right * abs(left).bit_length() > self.max_chars * 4):
                    self.refuse("raises to a power too large")
            elif op == "%" and isinstance(left, str):
                self.check_call(left, right if isinstance(right, tuple) else (right,))
            elif op == "+" and _size(left) + _size(right) > self.max_chars and not isinstance(left, int):
                self.refuse("adds values too large")
        return self.checked(self.binop_table[op](left, right))

    def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 - the sandbox's own signature
        owner = getattr(__obj, "__self__", None)
        if owner is not None and not isinstance(owner, type) and owner is not __self:
            __self.check_call(owner, list(args) + list(kwargs.values()))
        else:
            __self.check_call(None, list(args) + list(kwargs.values()))
        return __self.checked(super().call(__context, __obj, *args, **kwargs))

    def bounded_concat(self, parts):
        text = "".join(map(str, parts))
        return self.checked(text)
