"""JSON read as every JSON reader reads it, for what the engine writes back.

Python's json takes NaN and Infinity, which are not JSON, and reads a number
too large for a float (1e400) as infinity, which json.dumps then writes as
Infinity: a valid file would come back as one no JSON reader takes (the
agent's own, JSON.parse, refuses it).  `loads` refuses both instead, with a
ValueError saying which; the caller keeps such a text as it was or says so.

`loads_exact` and `dumps_exact` are for a text rewritten in part (a purged
transcript line): every number is written back with the text it was read
from, and an object naming a key twice is refused, so the parts not
rewritten keep their bytes' meaning and form.
"""

import json
import json.decoder
import json.scanner
import os
import re
import sys


def loads(text, unique=False):
    """json.loads(text), refusing NaN, Infinity, a number out of a float's
    range and an integer too long for int() to read (ValueError saying
    which; JSONDecodeError for malformed JSON).
    unique=True also refuses an object naming a key twice (DuplicateKey,
    a JSONDecodeError at the object): every reader keeps the last, so a
    rewrite of the data read would drop the other's bytes.  Read by the C
    scanner, which nests as deep as without `unique`; only a text refused
    so is read again by the Python one, which gives the place."""
    if text.startswith("\ufeff"):  # json's own words say "decode using utf-8-sig", advice for a Python program
        raise json.JSONDecodeError("the text starts with a byte order mark (U+FEFF), which JSON does not allow; "
                                   "save the file as UTF-8 without one", text, 0)
    try:
        if not unique:
            return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
        try:
            return json.loads(text, parse_constant=_no_constant, parse_float=_finite_float,
                              object_pairs_hook=_unique_pairs)
        except DuplicateKey as exc:
            raise _placed(text) or exc from None
    except ValueError as exc:
        if type(exc) is ValueError and "integer string conversion" in str(exc):
            # Python's own words advise sys.set_int_max_str_digits(): say what the file's writer can do
            raise ValueError(f"an integer of more than {_int_digits()} digits is too long to read; "
                             "write it as a string") from None
        raise


def _int_digits():
    """The most digits int() reads from a text; 0 for none (a Python
    before 3.10.7 has no limit)."""
    return getattr(sys, "get_int_max_str_digits", lambda: 0)()


def loads_exact(text):
    """loads(), for data that is written back with dumps_exact: a float
    whose text json.dumps would write otherwise (1E5, 1e-7, 0.00001, -0)
    comes back as a Number that keeps its text, and an object naming a key
    twice is refused (DuplicateKey, at the start of the text: this reader
    uses the fast C scanner, which gives no position)."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_exact_float, parse_int=_exact_int,
                      object_pairs_hook=_unique_pairs)


def dumps_utf8(value):
    """json.dumps(value, ensure_ascii=False) as text UTF-8 can carry: a lone
    surrogate (valid JSON, "\\ud800") written as its JSON escape.  A
    surrogate only ever sits inside a string: the value read back is the same."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def write_utf8(value, write, depth=2):
    """write() the text dumps_utf8(value) gives, in pieces: a list's items
    and an object's members (with string keys) down to `depth` are dumped
    one by one, with the separators json.dumps writes.  A large pack (the
    messages and the originals of `engine messages compress --json`) is
    then never one string, nor a list of all its parts, nor an encoded copy."""
    if depth and isinstance(value, list) and value:
        write("[")
        for i, item in enumerate(value):
            if i:
                write(", ")
            write_utf8(item, write, depth - 1)
        write("]")
    elif depth and isinstance(value, dict) and value and all(type(k) is str for k in value):
        write("{")
        for i, (key, item) in enumerate(value.items()):
            write(("{}: " if not i else ", {}: ").format(dumps_utf8(key)))
            write_utf8(item, write, depth - 1)
        write("}")
    else:
        write(dumps_utf8(value))


def dumps_exact(value):
    """Compact JSON (non-ASCII as it is, as JSON.stringify writes it), each
    Number written with the text it was read from."""
    while True:
        mark = "\ue000" + os.urandom(8).hex()  # no string of the data holds it (checked below)
        numbers: list = []
        text = json.dumps(_marked(value, mark, numbers), ensure_ascii=False, separators=(",", ":"))
        if not numbers:
            return text
        if text.count(mark) == len(numbers):
            return re.sub(f'"{re.escape(mark)}(\\d+)"', lambda m: numbers[int(m.group(1))].text, text)


class Number(float):
    """A JSON number whose text is not the one json.dumps writes for its
    value: dumps_exact writes `text` back."""

    __slots__ = ("text",)


def _exact_float(text):
    value = _finite_float(text)
    if repr(value) == text:
        return value
    number = Number(value)
    number.text = text
    return number


def _exact_int(text):
    if text != "-0":  # the one JSON integer whose int prints otherwise
        return int(text)
    number = Number(-0.0)
    number.text = text
    return number


def _unique_pairs(pairs):
    value = dict(pairs)
    if len(value) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(f"the key {json.dumps(key, ensure_ascii=False)[:80]} appears twice in an object",
                                   "", 0)
            seen.add(key)
    return value


def _marked(value, mark, numbers):
    """`value` with each Number replaced by the string mark+index, listed
    in `numbers`; a part holding none is the same object, not a copy."""
    if isinstance(value, Number):
        numbers.append(value)
        return f"{mark}{len(numbers) - 1}"
    if isinstance(value, dict):
        found = len(numbers)
        out = {k: _marked(v, mark, numbers) for k, v in value.items()}
        return out if len(numbers) > found else value
    if isinstance(value, list):
        found = len(numbers)
        items = [_marked(v, mark, numbers) for v in value]
        return items if len(numbers) > found else value
    return value


# A JSON text's tokens that matter to refused_at: strings (skipped whole, so
# a bracket or a word inside one is no token), brackets, the constants and
# numbers.  No branch can match what another does: linear.  Compiled where
# it is used (re keeps it): a hook that imports this module never needs it.
_TOKEN = r'"(?:[^"\\]|\\.)*"|[\[\]{}]|-?Infinity|NaN|-?[0-9][0-9.eE+-]*'


def refused_at(text, max_depth=None):
    """The offset in `text` (JSON that parsed up to there) of the first
    value `loads` refuses (NaN, Infinity, a float out of a float's range,
    an integer too long to read), or of the first bracket opening a level
    past `max_depth`; None when there is none.  The parse hooks that refuse
    a value are given no position: this one linear pass finds it."""
    depth = 0
    for m in re.finditer(_TOKEN, text):
        token = m.group()
        first = token[0]
        if first == '"':
            continue
        if first in "[{":
            depth += 1
            if max_depth is not None and depth > max_depth:
                return m.start()
        elif first in "]}":
            depth -= 1
        elif token.lstrip("-")[0] in "IN" or _out_of_range(token):
            return m.start()
    return None


def _out_of_range(token):
    """Whether `loads` refuses this number: a float past a float's range,
    an integer only when too long to read (one of 400 digits is read and
    written back as it is)."""
    if not any(c in token for c in ".eE"):
        limit = _int_digits()
        return limit > 0 and len(token.lstrip("-")) > limit
    try:
        return not float(token) - float(token) == 0
    except ValueError:  # not a number after all: the parse refused it as malformed
        return False


def refused_place(text, max_depth=None):
    """(line, column), both from 1, of what refused_at finds; (None, None)
    when it finds nothing."""
    offset = refused_at(text, max_depth)
    if offset is None:
        return None, None
    return text.count("\n", 0, offset) + 1, offset - text.rfind("\n", 0, offset)


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


def _placed(text):
    """The DuplicateKey of `text` at its object, read by the Python scanner
    (the only one that calls parse_object); None when that reader cannot
    say (nested past its recursion limit)."""
    decoder = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float)
    decoder.parse_object = _unique_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # the C scanner would not call it
    try:
        decoder.decode(text)
    except DuplicateKey as exc:
        return exc
    except (ValueError, RecursionError):
        return None
    return None


def _no_constant(name):
    raise ValueError(f"{name} is not JSON; write it as a string or null")


def _finite_float(text):
    value = float(text)
    if value - value != 0:  # written back, it would become Infinity, which is not JSON
        raise ValueError(f"the number {text[:40]} is out of range for JSON readers (it would become Infinity); "
                         "write it as a string or a smaller number")
    return value
