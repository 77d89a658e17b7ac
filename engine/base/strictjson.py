"""JSON read as every JSON reader reads it, for what the engine writes back.

Python's json takes NaN and Infinity, which are not JSON, and reads a number
too large for a float (1e400) as infinity, which json.dumps then writes as
Infinity: a valid file would come back as one no JSON reader takes (the
agent's own, JSON.parse, refuses it).  `loads` refuses both instead, with a
ValueError saying which; the caller keeps such a text as it was or says so.
"""

import json
import json.decoder
import json.scanner


def loads(text, unique=False):
    """json.loads(text), refusing NaN, Infinity and a number out of a
    float's range (ValueError; JSONDecodeError for malformed JSON).
    unique=True also refuses an object naming a key twice (a JSONDecodeError
    at the object): every reader keeps the last, so a rewrite of the data
    read would drop the other's bytes."""
    if not unique:
        return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    decoder = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)
    decoder.parse_object = _unique_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # the C scanner would not call it
    return decoder.decode(text)


class DuplicateKey(json.JSONDecodeError):
    """An object names a key twice (valid JSON, but not data a rewrite keeps)."""


def _unique_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None, _w=None):
    text, start = s_and_end
    pairs, end = json.decoder.JSONObject(s_and_end, strict, scan_once, None, list, memo)
    seen = set()
    for key, _ in pairs:
        if key in seen:
            name = json.dumps(key, ensure_ascii=False)[:80]
            raise DuplicateKey(f"the key {name} appears twice in this object", text, start - 1)
        seen.add(key)
    return dict(pairs), end


def _no_constant(name):
    raise ValueError(f"{name} is not JSON; write it as a string or null")


def _finite_float(text):
    value = float(text)
    if value - value != 0:  # written back, it would become Infinity, which is not JSON
        raise ValueError(f"the number {text[:40]} is out of range for JSON readers (it would become Infinity); "
                         "write it as a string or a smaller number")
    return value
