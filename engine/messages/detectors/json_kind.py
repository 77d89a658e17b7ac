"""Fires when the whole text parses as a JSON object or array."""

import json

from .base import Detector


class JsonDetector(Detector):
    def fires(self, text, memo):
        s = text.strip()
        if not s or s[0] not in "[{":
            return False
        try:
            json.loads(s)
        except ValueError:
            return False
        return True
