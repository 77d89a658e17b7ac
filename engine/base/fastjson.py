"""Parse the event JSON without importing json.decoder.

json.decoder imports `re` (and through it `enum`): about 11 ms of the ~35 ms
a quiet hook process is allowed.  The C scanner in `_json` parses the same
documents with the same results when given plain settings; we fall back to
the json module wherever that scanner is missing.
"""


class _Context:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    memo = None

    @staticmethod
    def parse_constant(name):
        return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


def scanner_context():
    """The plain settings the C scanner (`_json.make_scanner`) takes."""
    ctx = _Context()
    ctx.memo = {}
    return ctx


def loads(text):
    """Like json.loads for a str; raises ValueError on malformed input."""
    try:
        from _json import make_scanner
    except ImportError:  # pragma: no cover - not CPython
        import json

        return json.loads(text)
    ctx = scanner_context()
    n = len(text)
    i = 0
    while i < n and text[i] in " \t\n\r":
        i += 1
    try:
        value, end = make_scanner(ctx)(text, i)
        while end < n and text[end] in " \t\n\r":
            end += 1
        if end == n:
            return value
    except Exception:  # noqa: BLE001 - the C scanner's error paths need json.decoder
        pass
    # Malformed (the rare path): let the json module say exactly what is wrong.
    import json

    return json.loads(text)


def dumps_flat(data):
    """JSON for a flat mapping of str to int, float or str (the session
    state); anything else goes through the json module."""
    parts = []
    for k, v in data.items():
        if not isinstance(k, str):
            break
        if isinstance(v, bool) or not isinstance(v, (int, float, str)):
            break
        if isinstance(v, float) and v - v != 0:  # NaN and infinities are not JSON
            break
        parts.append(f"{_quote(k)}:{_quote(v) if isinstance(v, str) else repr(v)}")
    else:
        return "{" + ",".join(parts) + "}"
    import json

    return json.dumps(data)


def _quote(s):
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    try:  # what json.dumps(s) calls, without the json package (its decoder imports re)
        from _json import encode_basestring_ascii
    except ImportError:  # pragma: no cover - not CPython
        import json

        return json.dumps(s)
    return encode_basestring_ascii(s)


def dumps(value):
    """json.dumps(value, ensure_ascii=False) for dicts, lists, str, int,
    finite floats, bool and None, without importing the json package (whose decoder imports `re`):
    the hook's output on the injecting path."""
    try:
        from _json import encode_basestring
    except ImportError:  # pragma: no cover - not CPython
        encode_basestring = None
    if encode_basestring is None:
        import json

        return json.dumps(value, ensure_ascii=False)

    def enc(v):
        if isinstance(v, str):
            return encode_basestring(v)
        if v is None:
            return "null"
        if v is True:
            return "true"
        if v is False:
            return "false"
        if isinstance(v, int):
            return int.__repr__(v)
        if isinstance(v, float) and v - v == 0:  # finite: as json writes it (NaN and infinities: json's own words)
            return float.__repr__(v)
        if isinstance(v, dict):
            if not all(isinstance(k, str) for k in v):
                raise TypeError("non-string key")
            return "{" + ", ".join(f"{encode_basestring(k)}: {enc(x)}" for k, x in v.items()) + "}"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(enc(x) for x in v) + "]"
        raise TypeError(type(v).__name__)

    try:
        return enc(value)
    except TypeError:  # anything else: the json module's own answer (or error)
        import json

        return json.dumps(value, ensure_ascii=False)
