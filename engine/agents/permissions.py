"""Would the agent's own permission flow have run this shell command without
asking?  Read from the permission rules of the settings files the agent
reads, in its order (`permissions.files` of its YAML; Claude Code's:
managed settings and their drop-ins, the user's settings.json, the project
root's .claude/settings.json and settings.local.json), the project root
being the folder the agent names in its hooks' environment
(`permissions.project_env`), never the event's `cwd` (it moves with `cd`)
nor a subfolder's settings (a cloned repository's `vendor/x/.claude` is not
read by the agent, so it proves nothing).  The rule syntax read is Claude
Code's (`Tool(body)`, `prefix:*`, `*` wildcards): the one agent whose
rules the engine reads.

The rule kept: only a yes that can be proved counts.  Any doubt is "no":
no project root, a file that exists but cannot be read, a permissions block
or rule of a form not understood, a compound command, a deny or ask rule
that could match (matched generously: its first word anywhere in the
command), managed settings that restrict which rules count.  An allow rule
proves a yes only when it matches strictly (exact, `prefix:*`, or `*`
wildcards over the whole command).  A file the agent may or may not read
(the user's `settings.local.json`) is read for deny and ask rules only: it
can only make the answer more careful.
"""

import os

# Characters that make a command more than one simple command (the agent
# checks each part of a compound command on its own; we do not try to).
COMPOUND = set(";&|<>`$()\n{}")
# Characters inside a rule body whose meaning to the agent we do not model:
# such a deny/ask rule is doubt, such an allow rule proves nothing.
UNMODELLED = set("?[]{}\\")
# The only characters bash splits words on (its IFS; a newline is COMPOUND).
# Python's str.split() also splits on \x1c-\x1f, \x0b, U+00A0, U+2028...,
# which bash keeps inside a word: `./run.sh<U+001C>test` is one word to bash.
SEPARATORS = " \t"
KINDS = ("allow", "deny", "ask")


class Doubt(Exception):
    """The rules cannot be read with certainty."""


def settings_sources(agent, environ=None):
    """[(path, kinds read from it)] in the agent's order; raises Doubt with
    no project root.  A path that does not exist is skipped by the reader."""
    environ = os.environ if environ is None else environ
    spec = agent.data["permissions"]
    project = environ.get(spec["project_env"])
    if not project or not os.path.isabs(project):
        raise Doubt(f"no ${spec['project_env']}: the project's settings cannot be found")
    files = []
    for entry in spec["files"]:
        kinds = tuple(entry.get("kinds", KINDS))
        if "dir" in entry:
            folder = agent.expand(entry["dir"], project, environ)
            try:
                names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise Doubt(f"{folder}: {exc}") from None
            files += [(os.path.join(folder, n), kinds) for n in names]
        else:
            files.append((agent.expand(entry["path"], project, environ), kinds))
    return files


def _read_settings(path):
    """A settings file's bytes, never more than hooks.max_agent_settings_bytes:
    a project's settings.json is the project's, and a link to /dev/zero or
    a FIFO there must cost the hook nothing.  Anything else than a regular
    file within the cap is a Doubt."""
    from engine.base.files import read_regular
    from engine.core.settings import hook_bounds

    try:
        return read_regular(path, hook_bounds()["max_agent_settings_bytes"])
    except ValueError as exc:
        raise Doubt(f"{path}: {exc} (hooks.max_agent_settings_bytes)") from None


def shell_rules(agent, environ=None):
    """{'allow': [...], 'deny': [...], 'ask': [...]}: the shell tool's rule
    bodies (None for a rule covering every command); None on any doubt."""
    try:
        spec = agent.data["permissions"]
        return _shell_rules(settings_sources(agent, environ), spec["tool"], spec.get("only_managed_key"))
    except Doubt:
        return None


def _shell_rules(sources, tool, only_managed_key):
    from engine.base.fastjson import loads

    rules = {k: [] for k in KINDS}
    for path, kinds in sources:
        try:
            data = loads(_read_settings(path).decode("utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            raise Doubt(f"{path}: unreadable") from None  # it may hold a deny rule
        if not isinstance(data, dict):
            raise Doubt(f"{path}: not an object")
        if only_managed_key and data.get(only_managed_key):
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
                body = _body(rule.strip(), tool)
                if body is False:
                    continue  # another tool's rule
                if kind in kinds:
                    rules[kind].append(body)
    return rules


def _body(rule, tool):
    """None for every command of `tool`, the body of `Tool(body)`, False for
    another tool's rule; raises Doubt for a rule of `tool` of unknown form."""
    if rule in (tool, f"{tool}(*)", f"{tool}()"):
        return None
    if rule.startswith(tool + "(") and rule.endswith(")"):
        return rule[len(tool) + 1:-1]
    if rule.startswith(tool):
        raise Doubt(f"rule {rule!r}: form not understood")
    return False


def words(text):
    """`text` split as bash splits a command's words (space and tab), or
    None when it holds any other whitespace or control character: bash
    would read its words otherwise than we do, so nothing is proved."""
    plain = text.replace("\t", " ")
    if not plain.isprintable():  # every other whitespace and every control character
        return None
    return [w for w in plain.split(" ") if w]


def is_simple(command):
    return bool(command.strip()) and not (set(command) & COMPOUND) and words(command) is not None


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


def allow_rule(agent, command):
    """An allow rule of the agent's that proves `command` and the commands
    that go on from it (`Bash(make:*)`), as the user would write it."""
    return f"{agent.data['permissions']['tool']}({command}:*)"


def proves(body, command):
    """Does an allow rule surely match this simple command?"""
    said = words(command)
    if said is None:
        return False
    if body is None:
        return True
    allowed = words(body)
    if allowed is None:
        return False  # a rule with a character bash keeps in a word: what it allows is not modelled
    command, body = " ".join(said), " ".join(allowed)
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


def runs_without_asking(agent, command, mode_policy, environ=None):
    """'yes' (provably auto-run), 'no' (a deny or ask rule may apply, or any
    doubt: leave it alone) or 'unsure'.  `mode_policy`: rewrite (the mode
    runs everything) or rules.  The event's folder is not used to find
    settings: the agent does not either."""
    rules = shell_rules(agent, environ)
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
