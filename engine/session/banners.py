"""Which of the engine's handlers a hook's added text came from: the
report style's banners (`refreshes.banners`, one pattern per handler's
first line) found in the text, each refresh running up to the next banner.

A text the agent recorded as a hook's (`via` "attachment") that no banner
names is listed all the same, under `refreshes.unmatched`: every injection
shows, whoever made it.  A text found inside a message (`via` "text") is
listed only where a banner names it.  A closing tag of one of the style's
`wrappers` at a refresh's end is the agent's, not the injection's.
"""

import re


class Banners:
    def __init__(self, refreshes):
        self._rx = [(b["handler"], re.compile(b["pattern"])) for b in refreshes["banners"]]
        self._closing = tuple("</" + w[1:] for w in refreshes["wrappers"] if w.startswith("<"))
        self._unmatched = refreshes.get("unmatched") or ""

    def refreshes(self, text, via):
        """[{handler, turn, chars, via, text}] of one added text, in order
        (`text`: the refresh itself, for its tokens to be counted)."""
        found = sorted((m.start(), handler, m) for handler, rx in self._rx for m in rx.finditer(text))
        if not found:
            if via == "attachment" and self._unmatched and text.strip():
                body = text.rstrip()
                return [{"handler": self._unmatched, "turn": None, "chars": len(body), "via": via, "text": body}]
            return []
        out = []
        for i, (start, handler, m) in enumerate(found):
            end = found[i + 1][0] if i + 1 < len(found) else len(text)
            body = text[start:end].rstrip()
            for tag in self._closing:
                if body.endswith(tag):
                    body = body[: -len(tag)].rstrip()
            turn = m.groupdict().get("turn")
            out.append({"handler": handler, "turn": int(turn) if turn and turn.isdigit() else None,
                        "chars": len(body), "via": via, "text": body})
        return out
