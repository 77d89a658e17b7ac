"""The logging hook (loghook.py) as each agent installs it, and its log read
back.

    hook = LogHook(tmp_path, answers={"*": {...}})
    hook.command("PostToolUse")        # the command line an agent runs for one event
    hook.calls()                       # [{"event", "stdin", "env"}, ...] in call order
    hook.events()                      # ["SessionStart", "UserPromptSubmit", ...]
"""

import json
import shlex
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("loghook.py")


def context_answer(text="CTX_{event}_MARK"):
    """The answer shape Claude Code, Codex and Gemini take for added context."""
    return {"hookSpecificOutput": {"hookEventName": "{event}", "additionalContext": text}}


class LogHook:
    def __init__(self, folder, answers=None):
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / "hook-calls.jsonl"
        self.answers = folder / "hook-answers.json"
        self.answers.write_text(json.dumps(answers if answers is not None else {}), encoding="utf-8")

    def command(self, event):
        """The shell command that logs one call of `event` and prints its answer."""
        return " ".join(shlex.quote(str(p)) for p in (sys.executable, SCRIPT, self.log, self.answers, event))

    def calls(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines() if line.strip()]

    def events(self):
        return [c["event"] for c in self.calls()]

    def payloads(self, event):
        return [c["stdin"] for c in self.calls() if c["event"] == event]
