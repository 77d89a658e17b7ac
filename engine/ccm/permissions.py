"""Would the agent's own permission flow have run this Bash command without
asking?  Read from the permission rules of the settings files the agent
reads (managed, user, project, local).  Only a yes that can be proved
counts: a compound command, a rule form not understood or any deny/ask rule
that could match makes the answer "not proved", and the caller then passes
the call through untouched (or asks, if configured so).
"""

import os

# Where the agent reads permission rules (its interface, not a setting).
MANAGED = ("/etc/claude-code/managed-settings.json", "/Library/Application Support/ClaudeCode/managed-settings.json")
# Characters that make a command more than one simple command (the agent
# checks each part of a compound command on its own; we do not try to).
COMPOUND = set(";&|<>`$()\n{}")


def settings_files(cwd):
    home = os.path.expanduser("~")
    files = list(MANAGED) + [os.path.join(home, ".claude", "settings.json")]
    if cwd:
        files += [os.path.join(cwd, ".claude", "settings.json"), os.path.join(cwd, ".claude", "settings.local.json")]
    return files


def bash_rules(cwd):
    """{'allow': [...], 'deny': [...], 'ask': [...]}: the Bash rule bodies
    (None for a rule covering every command); None when a file is unreadable."""
    from ..hooks.fastjson import loads

    rules = {"allow": [], "deny": [], "ask": []}
    for path in settings_files(cwd):
        try:
            with open(path, "rb") as fh:
                data = loads(fh.read().decode("utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError, UnicodeDecodeError):
            return None  # a file we cannot read may hold a deny rule
        perms = data.get("permissions") if isinstance(data, dict) else None
        if not isinstance(perms, dict):
            continue
        for kind in rules:
            for rule in perms.get(kind) or []:
                if not isinstance(rule, str):
                    return None
                rule = rule.strip()
                if rule in ("Bash", "Bash(*)"):
                    rules[kind].append(None)
                elif rule.startswith("Bash(") and rule.endswith(")"):
                    rules[kind].append(rule[5:-1])
    return rules


def is_simple(command):
    return bool(command.strip()) and not (set(command) & COMPOUND)


def matches(body, command):
    """Does one rule body match a simple command?"""
    command = " ".join(command.split())
    if body is None:
        return True
    body = " ".join(body.split())
    if body.endswith(":*"):
        prefix = body[:-2]
        return command == prefix or command.startswith(prefix + " ")
    if "*" in body:
        from fnmatch import fnmatchcase

        return fnmatchcase(command, body)
    return command == body


def runs_without_asking(command, cwd, mode_policy):
    """'yes' (provably auto-run), 'no' (a deny or ask rule may apply: leave it
    alone) or 'unsure'.  `mode_policy`: rewrite (the mode runs everything) or rules."""
    rules = bash_rules(cwd)
    if rules is None:
        return "no"
    simple = is_simple(command)
    for kind in ("deny", "ask"):
        if rules[kind] and (not simple or any(matches(b, command) for b in rules[kind])):
            return "no"
    if mode_policy == "rewrite":
        return "yes"
    if simple and any(matches(b, command) for b in rules["allow"]):
        return "yes"
    return "unsure"
