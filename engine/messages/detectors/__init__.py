"""The registry of detector kinds.  A detector document
(pipelines/messages/detectors/*.yaml) names a kind and gives it parameters;
nothing here knows a pattern, a word or a threshold of its own."""

from .category import CategoryDetector
from .char_ratio import CharRatioDetector
from .json_kind import JsonDetector
from .keywords import KeywordsDetector
from .line_variance import LineVarianceDetector
from .lines import LinesDetector
from .pattern import PatternDetector

KINDS = {
    "category": CategoryDetector,
    "pattern": PatternDetector,
    "lines": LinesDetector,
    "char_ratio": CharRatioDetector,
    "line_variance": LineVarianceDetector,
    "keywords": KeywordsDetector,
    "json": JsonDetector,
}
