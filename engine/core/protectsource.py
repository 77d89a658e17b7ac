"""A protect category (protect/*.yaml) as its scanners read it.

Its secret rules and allow-lists are what a rule set reads
(engine/text/secretrules.py): each rule reduced to the keys that find (its
description and examples stay in the YAML), each rule and allow-list with
the defaults of schemas/protect.schema.json filled in.  That is done once,
where a category compiles (a profile, a message pipeline, `engine
validate`) or where the redactor's sources are made (engine/core/redact.py,
kept in the cache): a rule set is never given a key to default.
"""

from engine.text.protect import category_source

from . import defaults

# What a rule set needs of a rule (`ignorecase`: a category's plain pattern
# made a rule by the redactor, as its `case_sensitive` says).
RULE_KEYS = ("id", "pattern", "keywords", "starts", "entropy", "allow", "ignorecase")
_RULE = "/properties/rules/items"
_ALLOW = "/properties/allow/items"


def _filled(pointer, value):
    root = defaults.schema("protect")
    return defaults.fill(defaults.at(root, pointer), value, root)


def rule(spec):
    """A rule of `rules` (or a plain pattern made one) as a rule set takes it."""
    return _filled(_RULE, {k: spec[k] for k in RULE_KEYS if k in spec})


def allow_list(spec):
    """An allow-list of `allow` as a rule set takes it."""
    return _filled(_ALLOW, spec)


def source(data, prefix):
    """The CategorySource of a valid protect document."""
    rules = [rule(r) for r in data.get("rules", ())]
    return category_source(data, prefix, rules, [allow_list(a) for a in data.get("allow", ())])
