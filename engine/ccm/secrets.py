"""What is never written to the cache: output in which a secret pattern
(the protect categories named by `secret_categories`) matches.  Command
lines kept in metadata have each match replaced by `redaction`.

Speed: a pattern that opens with a lookbehind cannot use the regex
engine's literal prefix search, and scans 10 MB in about a second.  Each
pattern is therefore searched without its opening lookbehind (a fast literal
search), and every candidate is confirmed with the whole pattern at that
position, so what matches is exactly what the whole pattern matches.
"""

import re

_LEADING_LOOKBEHIND = re.compile(r"^(\(\?[a-zA-Z]+\))?\(\?<[!=](?:[^()\\]|\\.|\[(?:[^\]\\]|\\.)*\])*\)")


class Secrets:
    def __init__(self, settings):
        self._redaction = settings.get("redaction", "[REDACTED]")
        self._str, self._bytes = [], []
        for p in settings.get("secret_patterns") or []:
            fast = _LEADING_LOOKBEHIND.sub(lambda m: m.group(1) or "", p, count=1)
            self._str.append((re.compile(fast), re.compile(p)))
            self._bytes.append((re.compile(fast.encode()), re.compile(p.encode())))
        self._all = re.compile("|".join(f"(?:{p})" for p in settings.get("secret_patterns") or []) or "(?!)")

    def found_in(self, text):
        """True when text (str or bytes) holds a secret."""
        pairs = self._bytes if isinstance(text, (bytes, bytearray)) else self._str
        for fast, whole in pairs:
            for m in fast.finditer(text):
                if whole.match(text, m.start()):
                    return True
        return False

    def redact(self, text):
        if not text or not self._str:
            return text
        return self._all.sub(self._redaction, text)
