"""Frozen records for the hook path: a class declares its fields as
annotations, an instance takes them from a mapping once and never changes.

Not dataclasses: importing dataclasses (and inspect through it) costs a hook
process milliseconds, and a handler's spec is built on every event that
runs it (engine/hooks/handlers/base.py).  What a record is built from is
complete already (the profile's compile step filled in the schema's
defaults, engine/core/defaults.py): a field the mapping lacks is None, a
list becomes a tuple.  A record reads like the mapping it came from too
(`spec["level"]`, `"digest_template" in spec`: a field that is not None).
"""


class FrozenRecordError(AttributeError):
    """A field of a frozen record was set or deleted."""


class Record:
    FIELDS: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = [k for k in cls.__dict__.get("__annotations__", {}) if not k.isupper()]
        cls.FIELDS = tuple(dict.fromkeys([*cls.FIELDS, *own]))

    def __init__(self, data):
        values = self.__dict__
        for name in self.FIELDS:
            value = data.get(name)
            values[name] = tuple(value) if type(value) is list else value

    def __setattr__(self, name, value):
        raise FrozenRecordError(f"{type(self).__name__}.{name} is set once, when the profile compiles")

    def __delattr__(self, name):
        raise FrozenRecordError(f"{type(self).__name__}.{name} is set once, when the profile compiles")

    def __getitem__(self, name):
        return self.__dict__[name]

    def __contains__(self, name):
        return self.__dict__.get(name) is not None

    def __eq__(self, other):
        return type(other) is type(self) and other.__dict__ == self.__dict__

    __hash__ = None  # type: ignore[assignment]  # fields may hold mappings

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={self.__dict__[k]!r}' for k in self.FIELDS)})"

    def __reduce__(self):
        return type(self), (dict(self.__dict__),)
