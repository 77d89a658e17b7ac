"""The hook log: one line per problem, in the user's state folder.

Everything that goes into a line is escaped first: an event field holding a
newline or a control character cannot forge a second line, and a lone
surrogate (valid in JSON, not in UTF-8) is written as `\\udXXX` instead of
making the logger itself fail.  The folder is created 0700 and the file 0600
(a log may name the user's files), by the helpers every engine write uses
(engine/base/files.py); past `hooks.log.max_bytes` it moves to
hook.log.1.  A message may quote an event (an error, a command, a URL): it
is passed through the engine's redactor (engine/core/redact.py) before it is
written, and a message that cannot be redacted is not written.  No imports
beyond os and time until a line is written: the hot path loads this.
"""

import os
import time

from engine.base.files import open_append, private_dir, rotate_past
from engine.base.paths import state_dir_str

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def clean(value, limit=None):
    """One printable line: control characters, line separators and lone
    surrogates escaped."""
    s = value if isinstance(value, str) else str(value)
    if limit is not None:
        s = s[:limit]
    if s.isprintable() and "\\" not in s:
        return s
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable() and not ("\ud800" <= ch <= "\udfff"):
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return "".join(out)


def _redacted(value):
    """The value with every secret replaced; a line that cannot be redacted
    says so instead of what it held."""
    s = value if isinstance(value, str) else str(value)
    try:
        from .redact import redact

        return redact(s)
    except Exception as exc:  # a log line must never fail, nor carry a secret
        return f"[log message withheld: it could not be redacted ({type(exc).__name__})]"


class Log:
    def __init__(self):
        self.event_name = "?"  # the event and session each line names, once they are known
        self.session = "?"
        self.max_bytes = None  # known once the profile's hooks settings are read

    def about(self, event_name, session):
        """Name the event (as the agent calls it) and session in every later line."""
        self.event_name = event_name if isinstance(event_name, str) and event_name else "?"
        self.session = session if isinstance(session, str) and session else "?"

    def __call__(self, message):
        line = "{} {} session={} {}\n".format(
            time.strftime("%Y-%m-%dT%H:%M:%S"),
            clean(_redacted(self.event_name), 80),
            clean(_redacted(self.session), 64),
            clean(_redacted(message)),
        )
        try:
            folder = state_dir_str()
            private_dir(folder)
            path = os.path.join(folder, "hook.log")
            fd = open_append(path)
            try:
                os.write(fd, line.encode("utf-8", "backslashreplace"))  # one write: lines of parallel hooks never mix
                rotate_past(path, fd, self.max_bytes)
            finally:
                os.close(fd)
        except OSError:
            pass  # a full or read-only disk must not break the agent either
