"""JSON read as every JSON reader reads it, for what the engine writes back.

Python's json takes NaN and Infinity, which are not JSON, and reads a number
too large for a float (1e400) as infinity, which json.dumps then writes as
Infinity: a valid file would come back as one no JSON reader takes (the
agent's own, JSON.parse, refuses it).  `loads` refuses both instead, with a
ValueError saying which; the caller keeps such a text as it was or says so.
"""

import json


def loads(text):
    """json.loads(text), refusing NaN, Infinity and a number out of a
    float's range (ValueError; JSONDecodeError for malformed JSON)."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON; write it as a string or null")


def _finite_float(text):
    value = float(text)
    if value - value != 0:  # written back, it would become Infinity, which is not JSON
        raise ValueError(f"the number {text[:40]} is out of range for JSON readers (it would become Infinity); "
                         "write it as a string or a smaller number")
    return value
