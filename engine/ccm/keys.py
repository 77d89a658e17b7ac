"""What a CCM key is: the lowercase hex sha256 of the content.  A key is
checked here before it is ever joined to a path, so `../x` or a key of the
wrong length never reaches the file system."""

import hashlib

from engine.base.errors import UserError

HEX = frozenset("0123456789abcdef")
LENGTH = 64
PREFIX = "sha256:"


def key_of(data):
    return hashlib.sha256(data).hexdigest()


def is_key(text):
    return isinstance(text, str) and len(text) == LENGTH and all(c in HEX for c in text)


def parse(text):
    """A key from user input (`sha256:` optional, any case); UserError if it is not one."""
    raw = text.strip()
    if raw.lower().startswith(PREFIX):
        raw = raw[len(PREFIX):]
    raw = raw.lower()
    if not is_key(raw):
        raise UserError(f"{text!r} is not a cache key: expected sha256: and 64 hex digits (see engine cache list)")
    return raw
