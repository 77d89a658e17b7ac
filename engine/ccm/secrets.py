"""What is never written to the cache: output in which a secret pattern
(the protect categories named by `secret_categories`) matches.  Command
lines kept in metadata have each secret replaced by `redaction`.  Both go
through the engine's one redactor (engine/core/redact.py), built on first use so
a Store that writes nothing costs nothing."""


class Secrets:
    def __init__(self, settings):
        self._categories = tuple(settings["secret_categories"])  # required, validated (config.load)
        self._replacement = settings.get("redaction")
        self._redactor = None

    def _get(self):
        if self._redactor is None:
            from engine.core.redact import redactor

            self._redactor = redactor(self._categories, self._replacement)
        return self._redactor

    def found_in(self, text):
        """True when text (str or bytes) holds a secret, or when that cannot
        be told (no pattern, a broken category): then nothing is cached."""
        try:
            return self._get().found_in(text)
        except Exception:
            return True

    def redact(self, text):
        """The text with each secret replaced; when that cannot be done, the
        replacement alone (a command line is kept only if it is safe)."""
        if not text:
            return text
        try:
            return self._get().redact(text)
        except Exception:
            return self._replacement or ""
