"""Import gitleaks' rule set (config/gitleaks.toml of github.com/gitleaks/gitleaks)
into protect/secrets.yaml, whole, as the engine's own YAML.

    python3 scripts/import_gitleaks.py PATH/TO/gitleaks.toml --tag v8.30.1 --commit SHA

Rewrites two regions of protect/secrets.yaml, between their BEGIN and END
lines: `allow` (gitleaks' global allow-list) and the gitleaks part of
`rules`.  The engine's own rules, above, are left as they are.  Each rule
keeps gitleaks' id, description, keywords, entropy and allow-lists; its Go
regex is translated (scripts/goregex.py) and gets a self-test example made
from the regex and checked against the rule (scripts/regex_examples.py).
What cannot apply to a text without a file name is left out and said so in
the region's header: path-only rules, allow-lists that hold only paths or
need one (condition AND).  Run `engine validate protect/secrets.yaml` after.
"""

import argparse
import json
import os
import sys

import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [HERE, REPO]

from goregex import drop_name_prefix, leading_literals, parse, to_python  # noqa: E402
from regex_examples import Example  # noqa: E402

# Upper bounds given to a rule's unbounded repetitions (goregex); a rule
# whose `.*` runs along a whole line gets a shorter one (linear, and cheap).
BOUND = 4096
BOUNDS = {"curl-auth-header": 256, "curl-auth-user": 256, "kubernetes-secret-yaml": 256}
LENGTHS = (16, 24, 32, 48, 64)
# Texts for the rules whose example cannot be made from the regex alone (a
# word boundary between two generated parts, say); checked all the same.
TEXTS = {
    "kubernetes-secret-yaml": "kind: Secret\ndata:\n  password: c2VjcmV0LXBhc3N3b3JkLTEyMw==\n",
}
SEEDS = range(12)


def allow_lists(lists):
    """gitleaks allow-lists as the engine's `allow` entries, without what needs a file name."""
    out = []
    for a in lists or ():
        if a.get("condition", "").upper() == "AND" and (a.get("paths") or a.get("commits")):
            continue  # the path or commit part can never hold here: the list never applies
        entry = {}
        if a.get("regexTarget", "secret") != "secret":
            entry["target"] = a["regexTarget"]
        if a.get("regexes"):
            entry["patterns"] = [to_python(p, bound=BOUND, captures=False) for p in a["regexes"]]
        if a.get("stopwords"):
            entry["stopwords"] = list(a["stopwords"])
        if "patterns" in entry or "stopwords" in entry:
            out.append(entry)
    return out


def translate(rule):
    bound = BOUNDS.get(rule["id"], BOUND)
    out = {"id": rule["id"], "description": rule["description"].strip(),
           "keywords": [k.lower() for k in rule.get("keywords", ())],
           "pattern": to_python(rule["regex"], rule.get("secretGroup", 0), bound)}
    if rule.get("path"):
        out["description"] += f" (gitleaks looks only in files whose path matches {rule['path']}; here: any text)"
    starts = leading_literals(rule["regex"])
    if starts:
        out["starts"] = starts
    if rule.get("entropy"):
        out["entropy"] = rule["entropy"]
    allow = allow_lists(rule.get("allowlists"))
    if allow:
        out["allow"] = allow
    return out


def example(rule, go_regex, global_allow):
    """{text, secret}: a text the rule finds a secret in, or None."""
    from engine.core import protectsource
    from engine.text.secretrules import RuleSet

    tree = drop_name_prefix(parse(go_regex))
    rules = RuleSet([protectsource.rule(rule)], [protectsource.allow_list(a) for a in global_allow])
    if rule["id"] in TEXTS:
        text = TEXTS[rule["id"]]
        found = [text[s:e] for _, _, s, e, _ in rules.findings(text)]
        return {"text": text, "secret": found[0]} if found else None
    for length in LENGTHS:
        for seed in SEEDS:
            text = Example(seed * 7919 + length, length).text(tree)
            if rule["keywords"] and not any(k in text.lower() for k in rule["keywords"]):
                text = f"{rule['keywords'][0]} {text}"  # the rule runs only where a keyword is
            for _, _, s, e, _ in rules.findings(text):
                return {"text": text, "secret": text[s:e]}
    return None


def quoted(text):
    """A YAML scalar: single-quoted when printable, else JSON's double quotes."""
    if text.isprintable():
        return "'" + text.replace("'", "''") + "'"
    return json.dumps(text)


def flow(items, indent, width=110):
    """A flow sequence of scalars, wrapped; lines after the first start at indent + 1."""
    lines, line = [], "["
    for i, item in enumerate(items):
        piece = quoted(item) + ("," if i < len(items) - 1 else "]")
        if line not in ("[", "") and indent + len(line) + len(piece) + 1 > width:
            lines.append(line)
            line = ""
        line += ("" if line in ("[", "") else " ") + piece
    lines.append(line if items else "[]")
    return ("\n" + " " * (indent + 1)).join(lines)


def render_allow(entries, indent):
    pad = " " * indent
    out = []
    for a in entries:
        first = True
        for key in ("target", "except_ids", "patterns", "stopwords"):
            if key not in a:
                continue
            lead = pad + ("- " if first else "  ")
            value = a[key] if key == "target" else flow(a[key], indent + 2 + len(key) + 2)
            out.append(f"{lead}{key}: {value}")
            first = False
    return "\n".join(out)


def render_rule(rule):
    lines = [f"  - id: {rule['id']}", f"    description: {quoted(rule['description'])}",
             f"    keywords: {flow(rule['keywords'], 14)}", f"    pattern: {quoted(rule['pattern'])}"]
    if rule.get("starts"):
        lines.append(f"    starts: {flow(rule['starts'], 12)}")
    if "entropy" in rule:
        lines.append(f"    entropy: {rule['entropy']}")
    if "allow" in rule:
        lines.append("    allow:")
        lines.append(render_allow(rule["allow"], 6))
    lines.append("    examples:")
    for ex in rule["examples"]:
        lines.append(f"      - {{text: {quoted(ex['text'])}, secret: {quoted(ex['secret'])}}}")
    return "\n".join(lines)


def replace_region(text, name, body):
    begin, end = f"# BEGIN {name}", f"# END {name}"
    head, found, rest = text.partition(begin)
    if not found or end not in rest:
        raise SystemExit(f"protect/secrets.yaml has no region `{begin}` ... `{end}`")
    first_line_end = rest.index("\n") + 1
    tail = rest[rest.index(end):]
    return head + begin + rest[:first_line_end] + body.rstrip("\n") + "\n" + tail


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("toml")
    ap.add_argument("--tag", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--yaml", default=os.path.join(REPO, "protect", "secrets.yaml"))
    args = ap.parse_args()
    with open(args.toml, "rb") as fh:
        config = tomllib.load(fh)
    # gitleaks' global allow-list is for its own rules: the engine's (engine-*) keep theirs
    global_allow = [dict(a, except_ids=["engine-"])
                    for a in allow_lists([config.get("allowlist", {})] + config.get("allowlists", []))]
    rules, skipped = [], []
    for r in config["rules"]:
        if "regex" not in r:
            skipped.append(f"{r['id']} (a file name, no content)")
            continue
        rule = translate(r)
        ex = example(rule, r["regex"], global_allow)
        if ex is None:
            raise SystemExit(f"{r['id']}: no example found; translate it by hand ({rule['pattern']})")
        rule["examples"] = [ex]
        rules.append(rule)
    left_out = ", ".join(skipped) or "none"
    head = (f"  # gitleaks {args.tag} (commit {args.commit}), config/gitleaks.toml: {len(rules)} rules,\n"
            f"  # written by scripts/import_gitleaks.py (edit there, not here).  Left out: {left_out}.\n")
    with open(args.yaml, encoding="utf-8") as fh:
        text = fh.read()
    text = replace_region(text, "gitleaks allow", render_allow(global_allow, 2) + "\n")
    text = replace_region(text, "gitleaks rules", head + "\n".join(render_rule(r) for r in rules) + "\n")
    with open(args.yaml, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"{len(rules)} rules written to {args.yaml}; left out: {', '.join(skipped) or 'none'}")


if __name__ == "__main__":
    main()
