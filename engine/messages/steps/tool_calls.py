"""A tool call must reach the API unchanged: messages holding one stay."""

from .base import PRESERVE, Decision, Step


class ToolCallsStep(Step):
    def decide(self, v, run):
        if v.has_tool_call:
            return Decision(PRESERVE, self.name)
        return None
