"""The registry of transform kinds.  Levels name a kind and give it parameters;
nothing here knows a word, a pattern or a threshold of its own."""

from .regex_replace import RegexReplace
from .tables import FlattenTables
from .vowels import RemoveVowels
from .words import RemoveWords, Substitute

KINDS = {
    "regex": RegexReplace,
    "remove_words": RemoveWords,
    "substitute": Substitute,
    "flatten_tables": FlattenTables,
    "remove_vowels": RemoveVowels,
}
