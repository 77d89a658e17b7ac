"""A stand-in hook for the offline agents: it appends what the agent gave it
on stdin to a log and prints an answer.

    python loghook.py LOG ANSWERS EVENT

LOG gets one JSON line per call: {"event": EVENT, "stdin": <the parsed
payload, or the raw text>, "env": {the GEMINI_/CODEX_/COPILOT_/CLAUDE_
variables the hook saw}}. EVENT is the name the hook was installed under
(Copilot's payload names no event). ANSWERS is a JSON file mapping an event
name (or "*") to the object to print; every "{event}" in its strings becomes
EVENT. An entry {"if_stdin_has": TEXT, "answer": OBJECT} answers only when
the payload's text holds TEXT (a hook that answers a Gemini AfterTool with a
tail call must not answer the tail call's own AfterTool). No answer for the
event: it prints nothing. Stdlib only, no engine.
"""

import json
import os
import sys


def _fill(value, event):
    if isinstance(value, str):
        return value.replace("{event}", event)
    if isinstance(value, list):
        return [_fill(v, event) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, event) for k, v in value.items()}
    return value


def read_payload():
    """(the raw text on stdin, its JSON value or the text itself)."""
    raw = sys.stdin.read()
    try:
        return raw, json.loads(raw)
    except ValueError:
        return raw, raw


def main(log, answers, event):
    raw, payload = read_payload()
    seen = {k: v for k, v in os.environ.items() if k.startswith(("GEMINI_", "CODEX_", "COPILOT_", "CLAUDE_"))}
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"event": event, "stdin": payload, "env": seen}) + "\n")
    with open(answers, encoding="utf-8") as fh:
        table = json.load(fh)
    answer = table.get(event, table.get("*"))
    if isinstance(answer, dict) and "if_stdin_has" in answer:
        answer = answer["answer"] if answer["if_stdin_has"] in raw else None
    if answer is not None:
        print(json.dumps(_fill(answer, event)))


if __name__ == "__main__":
    main(*sys.argv[1:4])
