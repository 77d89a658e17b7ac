"""The names the agent's shell snapshots define, and whether a command calls
one of them.

The agent (Claude Code) sources a snapshot of its user's shell before each
Bash command: functions, aliases, shell options, PATH, and its own
stand-ins (`rg`, `find`, `grep` when it brings them).  `engine cache run`
runs the command in a plain bash, which has none of them: `command not
found`, or another program than the user's alias names.  So PreToolUse
leaves alone a command whose simple commands start with such a name.

Which snapshots: the newest `shell_snapshots.max_files` files matching
`pattern` in `folder` of the agent's config folder, each read up to
`max_bytes` (every running session has one; a name in any of them counts:
leaving a command alone never breaks it).  The forms read, as the agent
writes them (its snapshot script, read in the 2.1.330 binary; a comment
there says older versions wrote each function as base64):
`alias -- NAME=...` and `alias NAME=...`; `NAME () {` and
`function NAME {` at a line's start (zsh's `typeset -f`, the agent's own
stand-ins); `eval $'NAME () ...'` and `eval -- $'...'` (bash's
`declare -f`, quoted with %q); `eval "$(echo 'BASE64' | base64 -d)"`.
No `re`: this runs on the PreToolUse path.
"""

import os

# Words of the shell that may come before a command's name (its grammar).
_BEFORE = frozenset(("!", "{", "(", "then", "do", "else", "elif", "if", "while", "until", "time", "exec", "nohup"))
# What separates simple commands (outside quotes).
_SEPARATORS = frozenset(";&|\n(){}`")
_NAME_END = frozenset(" \t\n=(){}|&;<>'\"\\$`")


def names(settings, config_dir):
    """Every function and alias name the newest snapshots define."""
    conf = settings["intercept"]["bash"]["shell_snapshots"]
    found = set()
    for path in _newest(os.path.join(config_dir, conf["folder"]), conf["pattern"], conf["max_files"]):
        try:
            with open(path, "rb") as fh:
                text = fh.read(conf["max_bytes"]).decode("utf-8", "replace")
        except OSError:
            continue
        found |= names_in(text)
    return found


def _newest(folder, pattern, count):
    try:
        entries = [e for e in os.scandir(folder) if matches(e.name, pattern) and e.is_file()]
    except OSError:
        return []
    entries.sort(key=lambda e: e.stat().st_mtime, reverse=True)
    return [e.path for e in entries[:count]]


def matches(name, pattern):
    """Does `name` match `pattern`, whose `*` stands for any text (fnmatch
    would import `re`)?"""
    parts = pattern.split("*")
    if len(parts) == 1:
        return name == pattern
    if not name.startswith(parts[0]) or not name.endswith(parts[-1]) or len(name) < len(parts[0]) + len(parts[-1]):
        return False
    pos, end = len(parts[0]), len(name) - len(parts[-1])
    for middle in parts[1:-1]:
        found = name.find(middle, pos, end)
        if found < 0:
            return False
        pos = found + len(middle)
    return True


def names_in(text):
    """The names a snapshot's text defines."""
    out = set()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        line = line.strip()
        if line.startswith("alias "):
            out.add(_name(_after_options(line[len("alias "):])))
        elif line.startswith("function "):
            out.add(_name(line[len("function "):].lstrip()))
        elif line.startswith("eval "):
            out |= _eval_names(_after_options(line[len("eval "):]), lines, i)
        elif "()" in line:
            head = line.split("()", 1)[0].strip()
            if head and _name(head) == head:
                out.add(head)
    out.discard("")
    return out


def _after_options(rest):
    rest = rest.lstrip()
    return rest[2:].lstrip() if rest.startswith("-- ") else rest


def _name(text):
    end = 0
    while end < len(text) and text[end] not in _NAME_END:
        end += 1
    return text[:end]


def _eval_names(rest, lines, i):
    if rest.startswith("$'") or rest.startswith("'"):
        body = rest[2:] if rest.startswith("$'") else rest[1:]
        head = body.split("()", 1)[0].strip() if "()" in body else ""
        return {head} if head and _name(head) == head else set()
    if rest.startswith('"$(echo \''):
        return _base64_names(rest, lines, i)
    return set()


def _base64_names(rest, lines, i):
    """`eval "$(echo 'B64' | base64 -d)"`, the text possibly wrapped over lines."""
    import binascii

    encoded = rest.split("echo '", 1)[1]
    j = i
    while "'" not in encoded and j + 1 < len(lines) and j - i < 10000:
        j += 1
        encoded += lines[j]
    try:
        decoded = binascii.a2b_base64(encoded.split("'", 1)[0]).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return set()
    return names_in(decoded)


def command_words(command):
    """The first word of each simple command in `command` (quotes honoured;
    assignments and the shell's leading words skipped)."""
    out = []
    for part in _simple_commands(command):
        for word in part.split():
            if word in _BEFORE or ("=" in word and _name(word) == word.split("=", 1)[0] and word[0] != "="):
                continue
            name = _name(word.lstrip("'\"\\"))
            if name:
                out.append(name)
            break
    return out


def _simple_commands(command):
    parts, cur, quote, escaped = [], [], None, False
    for ch in command:
        if escaped:
            escaped = False
        elif ch == "\\" and quote != "'":
            escaped = True
        elif quote == '"' and (ch in "`)" or (ch == "(" and cur and cur[-1] == "$")):
            parts.append("".join(cur))  # a substitution runs inside double quotes too
            cur = []
            continue
        elif quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in _SEPARATORS:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def calls_snapshot_name(command, settings, config_dir):
    """Does `command` call a function or alias of the agent's shell snapshot?"""
    words = set(command_words(command))
    return bool(words) and bool(words & names(settings, config_dir))
