"""Checking the secret rules of a protect document (`rules`, `allow`) before
they are used: every pattern compiles under the engine's rules and does not
run away, ids are unique, and each rule's own examples hold: the rule alone
finds the example's secret, and its `starts` find what a search of the
whole text finds (so trying it only there loses nothing)."""

from engine.text import regexutil

from . import protectsource
from .patterncheck import pattern_problems


def pattern_errors(doc):
    """Compile errors of every rule and allow-list pattern (cheap: run when a profile compiles)."""
    errors = []
    data = doc.data
    for path, pattern in _patterns(data):
        try:
            regexutil.check(pattern)
        except regexutil.PatternError as exc:
            errors.append(doc.error(str(exc), path))
    return errors


def _patterns(data):
    for i, a in enumerate(data.get("allow", ())):
        for j, p in enumerate(a.get("patterns", ())):
            yield ("allow", i, "patterns", j), p
    for i, rule in enumerate(data.get("rules", ())):
        yield ("rules", i, "pattern"), rule["pattern"]
        for j, a in enumerate(rule.get("allow", ())):
            for k, p in enumerate(a.get("patterns", ())):
                yield ("rules", i, "allow", j, "patterns", k), p


def rule_problems(doc):
    """Everything `engine validate` checks of a document's rules."""
    errors = pattern_errors(doc)
    if errors:
        return errors
    data = doc.data
    seen = {}
    allow = [protectsource.allow_list(a) for a in data.get("allow", ())]
    for i, rule in enumerate(data.get("rules", ())):
        if rule["id"] in seen:
            errors.append(doc.error(f"rule id {rule['id']!r} is used twice (rules[{seen[rule['id']]}] too); "
                                    "give each rule its own", ("rules", i, "id")))
        seen.setdefault(rule["id"], i)
        probes = [ex["text"] for ex in rule["examples"]]
        errors.extend(pattern_problems(doc, rule["pattern"], ("rules", i, "pattern"), probes))
        errors.extend(_example_problems(doc, i, rule, allow))
    return errors


def _example_problems(doc, i, rule, allow):
    from engine.text.secretrules import RuleSet

    spec = protectsource.rule(rule)
    alone = RuleSet([spec], allow)
    everywhere = RuleSet([dict(spec, starts=[])], allow)  # tried at every place
    errors = []
    for j, ex in enumerate(rule["examples"]):
        text = ex["text"]
        found = [text[s:e] for _, _, s, e, _ in alone.findings(text)]
        whole = [text[s:e] for _, _, s, e, _ in everywhere.findings(text)] if rule.get("starts") else found
        if found != whole:
            errors.append(doc.error(f"self-test: in {text!r} a match begins with none of `starts`; add where "
                                    "its matches begin, or remove `starts`", ("rules", i, "starts")))
        elif ex["secret"] not in found:
            got = ", ".join(repr(f) for f in found) or "nothing"
            errors.append(doc.error(f"self-test: in {text!r} the rule should find the secret {ex['secret']!r}, "
                                    f"but finds {got}", ("rules", i, "examples", j)))
    return errors
