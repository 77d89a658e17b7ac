"""The engine's redactor as a git revision had it: that revision's
engine/core/redact.py run on its protect/secrets.yaml (both read from git),
so a figure of this checkout can be set beside the same figure before a
change (bench/secret_shapes.py, bench/redact_speed.py)."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)


def _show(rev, path):
    return subprocess.run(["git", "-C", REPO, "show", f"{rev}:{path}"], capture_output=True, text=True,
                          check=True).stdout


def redactor_at(rev):
    """A Redactor of revision `rev`; None: this checkout's own (engine.core.redact)."""
    import yaml

    if rev is None:
        from engine.core.redact import redactor

        return redactor()
    doc = yaml.load(_show(rev, "protect/secrets.yaml"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    ns = {"__name__": "engine.core._redact_at", "__package__": "engine.core"}
    exec(compile(_show(rev, "engine/core/redact.py"), f"{rev}:engine/core/redact.py", "exec"), ns)
    if "rules" in doc:  # a rule set (engine/text/secretrules.py), read as this checkout reads one
        from engine.core.protectsource import allow_list, rule

        return ns["Redactor"]([rule(r) for r in doc["rules"]], doc["redaction"],
                              [allow_list(a) for a in doc.get("allow", ())])
    ignorecase = not doc.get("case_sensitive", False)
    return ns["Redactor"]([[p, ignorecase] for p in doc["patterns"]], doc["redaction"])
