"""An optional external classifier: a command (argv list) that reads one
message as JSON on stdin and prints `preserve` or `compress` (or a JSON
object with "decision").  It runs once per message reaching it, under
timeout_ms; a timeout, a crash or an answer it cannot read lets the message
fall through (counted in the stats as classifier_errors), never stops the run.

mode hybrid: the heuristics (hard structure) run first; full: steps that
list `full` in skip_in_classifier_modes are skipped, the classifier decides."""

import json
import subprocess

from .base import PRESERVE, Decision, Step


class ClassifierStep(Step):
    def __init__(self, spec, ctx):
        super().__init__(spec, ctx)
        self.command = list(spec.command)
        self.mode = spec.mode
        self.timeout = spec.timeout_ms / 1000.0

    @property
    def active(self):
        return bool(self.command)

    def ask(self, message):
        from engine.base.strictjson import dumps_utf8

        # bytes both ways: a lone surrogate in a message (valid JSON) goes as
        # its JSON escape, and an answer that is not UTF-8 is no answer, not a crash
        try:
            done = subprocess.run(self.command, input=dumps_utf8(message).encode("utf-8"), capture_output=True,
                                  timeout=self.timeout)
        except (OSError, subprocess.SubprocessError):
            return None
        if done.returncode != 0:
            return None
        out = done.stdout.decode("utf-8", "replace").strip()
        try:
            data = json.loads(out)
            out = data.get("decision", "") if isinstance(data, dict) else str(data)
        except ValueError:
            pass
        word = out.split()[0].lower() if out.split() else ""
        return word if word in ("preserve", "compress") else None

    def decide(self, v, run):
        if not self.active:
            return None
        run.count("classifier_calls")
        answer = self.ask(run.message(v))
        if answer is None:
            run.count("classifier_errors")
            return None
        if answer == "preserve":
            run.count("classifier_preserved")
            return Decision(PRESERVE, self.name, "classifier")
        return None
