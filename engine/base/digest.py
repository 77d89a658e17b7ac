"""sha256 without hashlib.

Importing hashlib loads OpenSSL: 3-4 ms of a hook process (measured on
CPython 3.11, 3.12 and 3.13), more than most of what a quiet event does.
The bare C module gives the same digests: `_sha2` from CPython 3.12,
`_sha256` before it; hashlib only where neither exists.
"""

try:
    from _sha2 import sha256  # CPython 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256  # CPython 3.11 and earlier
    except ImportError:  # pragma: no cover - another Python
        from hashlib import sha256

__all__ = ["safe_key", "sha256"]


def safe_key(identifier):
    """A file name for an id the engine did not choose (an agent's session
    id): its first 80 safe characters and 12 hex digits of its sha256, so
    it never climbs out of its folder and two ids never share a name.
    (surrogatepass: a lone surrogate is valid in an event's JSON, not in UTF-8.)"""
    safe = "".join(c if (c.isascii() and c.isalnum()) or c in "_.-" else "_" for c in identifier[:80])
    return f"{safe}-{sha256(identifier.encode('utf-8', 'surrogatepass')).hexdigest()[:12]}"
