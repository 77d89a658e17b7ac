# TEMPORARY shim while tests move to engine.pipeline; removed before commit
from .pipeline import *  # noqa
from .pipeline import compress, split_line_endings, join_line_endings, Result, Change  # noqa
