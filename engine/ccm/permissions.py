"""Would the agent's own permission flow have run this Bash command without
asking?  Read from the permission rules of the settings files the agent
reads, in its order, as the agent finds them:

- managed settings (`/etc/claude-code/managed-settings.json`, its
  `managed-settings.d/*.json` drop-ins, the macOS path);
- the user's `settings.json` in `$CLAUDE_CONFIG_DIR` (default `~/.claude`);
- the project root's `.claude/settings.json` and `.claude/settings.local.json`,
  the project root being `$CLAUDE_PROJECT_DIR` (the folder the session
  started in, set by the agent for its hooks), never the event's `cwd` (it
  moves with `cd`) nor a subfolder's `.claude` (a cloned repository's
  `vendor/x/.claude` is not read by the agent, so it proves nothing).

The rule kept: only a yes that can be proved counts.  Any doubt is "no":
no `$CLAUDE_PROJECT_DIR`, a file that exists but cannot be read, a
permissions block or rule of a form not understood, a compound command,
a deny or ask rule that could match (matched generously: its first word
anywhere in the command), managed settings that restrict which rules count.
An allow rule proves a yes only when it matches strictly (exact, `prefix:*`,
or `*` wildcards over the whole command).  A file the agent may or may not
read (the user's `settings.local.json`) is read for deny and ask rules only:
it can only make the answer more careful.
"""

import os

# Where the agent reads permission rules (its interface, not a setting).
MANAGED = ("/etc/claude-code/managed-settings.json", "/Library/Application Support/ClaudeCode/managed-settings.json")
MANAGED_DROPINS = ("/etc/claude-code/managed-settings.d", "/Library/Application Support/ClaudeCode/managed-settings.d")
# Characters that make a command more than one simple command (the agent
# checks each part of a compound command on its own; we do not try to).
COMPOUND = set(";&|<>`$()\n{}")
# Characters inside a rule body whose meaning to the agent we do not model:
# such a deny/ask rule is doubt, such an allow rule proves nothing.
UNMODELLED = set("?[]{}\\")
KINDS = ("allow", "deny", "ask")


class Doubt(Exception):
    """The rules cannot be read with certainty."""


def config_dir():
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return os.path.expanduser(env) if env else os.path.join(os.path.expanduser("~"), ".claude")


def settings_sources(environ=None):
    """[(path, kinds read from it)] in the agent's order; raises Doubt with
    no project root.  A path that does not exist is skipped by the reader."""
    environ = os.environ if environ is None else environ
    project = environ.get("CLAUDE_PROJECT_DIR")
    if not project or not os.path.isabs(project):
        raise Doubt("no $CLAUDE_PROJECT_DIR: the project's settings cannot be found")
    files = [(p, KINDS) for p in MANAGED]
    for folder in MANAGED_DROPINS:
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise Doubt(f"{folder}: {exc}") from None
        files += [(os.path.join(folder, n), KINDS) for n in names]
    user = config_dir()
    files.append((os.path.join(user, "settings.json"), KINDS))
    files.append((os.path.join(user, "settings.local.json"), ("deny", "ask")))
    files.append((os.path.join(project, ".claude", "settings.json"), KINDS))
    files.append((os.path.join(project, ".claude", "settings.local.json"), KINDS))
    return files


def bash_rules(environ=None):
    """{'allow': [...], 'deny': [...], 'ask': [...]}: the Bash rule bodies
    (None for a rule covering every command); None on any doubt."""
    try:
        return _bash_rules(settings_sources(environ))
    except Doubt:
        return None


def _bash_rules(sources):
    from engine.base.fastjson import loads

    rules = {k: [] for k in KINDS}
    for path, kinds in sources:
        try:
            with open(path, "rb") as fh:
                data = loads(fh.read().decode("utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            raise Doubt(f"{path}: unreadable") from None  # it may hold a deny rule
        if not isinstance(data, dict):
            raise Doubt(f"{path}: not an object")
        if data.get("allowManagedPermissionRulesOnly"):
            raise Doubt(f"{path}: only managed rules count")  # the user's allow rules would prove nothing
        perms = data.get("permissions")
        if perms is None:
            continue
        if not isinstance(perms, dict):
            raise Doubt(f"{path}: permissions is not an object")
        for kind in KINDS:
            listed = perms.get(kind)
            if listed is None:
                continue
            if not isinstance(listed, list):
                raise Doubt(f"{path}: permissions.{kind} is not a list")
            for rule in listed:
                if not isinstance(rule, str):
                    raise Doubt(f"{path}: a rule that is not a string")
                body = _bash_body(rule.strip())
                if body is False:
                    continue  # another tool's rule
                if kind in kinds:
                    rules[kind].append(body)
    return rules


def _bash_body(rule):
    """None for every Bash command, the body of `Bash(body)`, False for
    another tool's rule; raises Doubt for a Bash rule of unknown form."""
    if rule in ("Bash", "Bash(*)", "Bash()"):
        return None
    if rule.startswith("Bash(") and rule.endswith(")"):
        return rule[5:-1]
    if rule.startswith("Bash"):
        raise Doubt(f"rule {rule!r}: form not understood")
    return False


def is_simple(command):
    return bool(command.strip()) and not (set(command) & COMPOUND)


def _wild(body, command):
    """`*` matches any run of characters, over the whole command (linear:
    each literal piece is found once, left to right)."""
    pieces = body.split("*")
    if len(pieces) == 1:
        return command == body
    if not command.startswith(pieces[0]):
        return False
    pos = len(pieces[0])
    for piece in pieces[1:-1]:
        i = command.find(piece, pos)
        if i < 0:
            return False
        pos = i + len(piece)
    last = pieces[-1]
    return len(command) - pos >= len(last) and command.endswith(last)


def proves(body, command):
    """Does an allow rule surely match this simple command?"""
    command = " ".join(command.split())
    if body is None:
        return True
    body = " ".join(body.split())
    if set(body) & UNMODELLED:
        return False
    if body.endswith(":*"):
        prefix = body[:-2]
        if "*" in prefix or ":" in prefix:
            return False
        return command == prefix or command.startswith(prefix + " ")
    if ":" in body and "*" in body:
        return False  # a form the agent may read otherwise
    return _wild(body, command)


def could_match(body, command):
    """Could a deny or ask rule match this command?  Generous: its first
    word anywhere among the command's words (wrappers such as `timeout N`,
    `env X=1` or `nice` do not hide it), or any form not modelled."""
    if body is None:
        return True
    words = body.split()
    if not words:
        return True
    first = words[0].split(":", 1)[0]
    if not first or "*" in first or set(first) & UNMODELLED:
        return True
    return first in command.split() or any(w.endswith("/" + first) for w in command.split())


def runs_without_asking(command, cwd, mode_policy, environ=None):
    """'yes' (provably auto-run), 'no' (a deny or ask rule may apply, or any
    doubt: leave it alone) or 'unsure'.  `mode_policy`: rewrite (the mode
    runs everything) or rules.  `cwd` is not used to find settings (the
    agent does not either); it is kept for the callers' signature."""
    rules = bash_rules(environ)
    if rules is None:
        return "no"
    simple = is_simple(command)
    for kind in ("deny", "ask"):
        if rules[kind] and (not simple or any(could_match(b, command) for b in rules[kind])):
            return "no"
    if mode_policy == "rewrite":
        return "yes"
    if simple and any(proves(b, command) for b in rules["allow"]):
        return "yes"
    return "unsure"
