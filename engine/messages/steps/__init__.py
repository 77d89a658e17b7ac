"""The registry of step kinds.  A message pipeline (pipelines/messages/*.yaml)
orders named steps of these kinds and gives them parameters; the first step
that decides a message wins."""

from .classifier import ClassifierStep
from .code_split import CodeSplitStep
from .detect import DetectStep
from .duplicates import DuplicatesStep
from .patterns import PatternsStep
from .recency import RecencyStep
from .roles import RolesStep
from .short import ShortStep
from .summarize import SummarizeStep
from .tool_calls import ToolCallsStep

KINDS = {
    "roles": RolesStep,
    "recency": RecencyStep,
    "tool_calls": ToolCallsStep,
    "short": ShortStep,
    "detect": DetectStep,
    "duplicates": DuplicatesStep,
    "code_split": CodeSplitStep,
    "patterns": PatternsStep,
    "classifier": ClassifierStep,
    "summarize": SummarizeStep,
}
