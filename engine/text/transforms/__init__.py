"""The registry of transform kinds.  Levels name a kind and give it parameters;
nothing here knows a word, a pattern or a threshold of its own."""

from .headings import HeadingLabels
from .lists import Lists
from .mermaid import MermaidEdges
from .regex_replace import RegexReplace
from .tables import FlattenTables
from .vowels import RemoveVowels
from .words import WordRules

KINDS = {
    "regex": RegexReplace,
    "words": WordRules,
    "flatten_tables": FlattenTables,
    "remove_vowels": RemoveVowels,
    "mermaid_edges": MermaidEdges,
    "heading_labels": HeadingLabels,
    "lists": Lists,
}
