"""What a CCM key is: 64 lowercase hex digits, written `sha256:<key>` in
stubs.  A key is checked here before it is ever joined to a path, so `../x`
or a key of the wrong length never reaches the file system.

How a key is made (`KEYED`): HMAC-SHA256, under the per-user secret
(userkey.py), of the entry's project (its origin, a real path) and its
bytes.  Nobody without the secret can tell from a content what its key
would be, so a guessed content cannot be confirmed as cached, and the same
bytes from two projects are two entries.  Entries stored before keys were
keyed (`LEGACY`: the plain sha256 of the bytes, a sidecar without
`key_scheme`) keep their keys and are still checked that way: a stub in an
old transcript still reads back.
"""

import hashlib
import hmac

from engine.base.errors import UserError

HEX = frozenset("0123456789abcdef")
LENGTH = 64
PREFIX = "sha256:"
KEYED = "hmac-sha256-project"
LEGACY = "sha256"
# Separates what is hashed (the scheme's name, the project, the bytes): a
# path never holds a NUL byte.
_DOMAIN = b"rules-engine ccm key v1\0"


def hasher(scheme, secret=None, project=None):
    """A hash object (update / hexdigest) for a key of `scheme`."""
    if scheme == LEGACY:
        return hashlib.sha256()
    if scheme != KEYED or secret is None or not project:
        raise ValueError(f"no key can be made with scheme {scheme!r} without a secret and a project")
    h = hmac.new(secret, _DOMAIN, hashlib.sha256)
    h.update(project.encode("utf-8", "surrogateescape") + b"\0")
    return h


def key_of(data, secret, project):
    """The key `data` is stored under for `project`."""
    h = hasher(KEYED, secret, project)
    h.update(data)
    return h.hexdigest()


def scheme_of(meta):
    """How the key of an entry (its sidecar) was made."""
    return (meta or {}).get("key_scheme", LEGACY)


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
