"""Path-scoped rules: a rule file whose frontmatter names globs (`paths:`) is
injected only when the session has touched a file those globs match.

The agent loads such a rule only while it works on matching files, so a
refresh that injected it everywhere would spend the budget on rules the
agent itself would not load.  The files touched are read from the tool
inputs of the session's transcript (main chain only), and only when a
refresh is due: this module is never imported on the quiet path.

Globs follow the agent's (picomatch-like) rules, relative to the project:
`**` spans folders (also none), `*` and `?` stay inside one folder name,
`[...]` is a class and `{a,b}` alternatives.  Matching takes time linear in
the path for each glob (a state-set simulation, no backtracking regex), and
a glob is bounded in length and in stars (globs in
pipelines/settings/engine.yaml): a rule's frontmatter is a repository's.  A rule whose `paths:` cannot be
read is injected as if it had none (a broken scope must not lose a rule) and
said so in the log and in `engine refresh preview`.

A project's rules may hold any number of globs, each tried against every
touched path: 10,000 globs in one rule file took a refresh past its
deadline, the user's rules with it.  So the work of a project's globs is
counted in each refresh (globs.max_project_work: a path's characters times
a glob's parts, for each glob tried on each path, and its compile); past
it, a project's scoped rule not yet decided counts as unscoped, as a broken
scope does.  The user's own rules come first in every order and are never
counted.
"""

import os

from .sources import frontmatter


class Scope:
    """What the frontmatter says: `globs` (None: not path-scoped) and a
    `problem` when the key is there but cannot be read."""

    def __init__(self, globs=None, problem=""):
        self.globs = globs
        self.problem = problem


def _split_top(value, sep=","):
    """Split at `sep` outside braces, brackets and quotes."""
    parts, depth, quote, cur = [], 0, None, []
    for ch in value:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if quote or depth:
        return None
    parts.append("".join(cur))
    return parts


def _unquote(item):
    item = item.strip()
    if len(item) >= 2 and item[0] == item[-1] and item[0] in "\"'":
        return item[1:-1]
    if item[:1] in "\"'" or item[-1:] in "\"'":
        return None  # an opening quote without its closing one
    return item


def _items(raw):
    """Globs from a flow value: `a`, `"a"`, `a, b` or `[a, "b"]`; None if malformed."""
    raw = raw.strip()
    if raw.startswith("["):
        if not raw.endswith("]"):
            return None
        raw = raw[1:-1]
    parts = _split_top(raw)
    if parts is None:
        return None
    out = []
    for p in parts:
        if not p.strip():
            continue
        g = _unquote(p)
        if g is None:
            return None
        out.append(g)
    return out


def scope_of(text, key):
    """The Scope of a rule file's text."""
    fm = frontmatter(text)
    if not fm:
        return Scope()
    lines = fm[0].replace("\r\n", "\n").split("\n")
    for i, line in enumerate(lines):
        if not line.startswith(key):
            continue
        rest = line[len(key):].lstrip(" \t")
        if not rest.startswith(":"):
            continue
        value = rest[1:]
        hash_at = value.find(" #")
        if hash_at >= 0:
            value = value[:hash_at]
        value = value.strip()
        if value:
            globs = _items(value)
        else:  # a block list on the following lines
            globs = []
            for nxt in lines[i + 1:]:
                s = nxt.strip()
                if not s or s.startswith("#"):
                    continue
                if not s.startswith("-"):
                    if nxt[:1] in " \t":
                        globs = None  # an indented line that is not a list item: a mapping, not globs
                    break
                item = s[1:]
                hash_at = item.find(" #")
                g = _unquote(item[:hash_at] if hash_at >= 0 else item)
                if g is None:
                    globs = None
                    break
                if g:
                    globs.append(g)
        if globs is None:
            return Scope(None, f"{key}: cannot read {value or 'the list below it'!r} as globs "
                               "(a glob, a comma-separated line, [a, b] or a - list); injected as if unscoped")
        if not globs:
            return Scope(None, f"{key}: names no glob; injected as if unscoped")
        return Scope(globs)
    return Scope()


def expand_braces(pattern, limit):
    """{a,b} alternatives, nested, up to `limit` patterns: the frontmatter is
    the user's, and a{1,2}{3,4}... doubling must not eat the hook's deadline."""
    out, todo = [], [pattern]
    while todo:
        p = todo.pop()
        start = p.find("{")
        if start < 0:
            out.append(p)
        else:
            depth, end, cuts = 0, -1, []
            for j in range(start, len(p)):
                if p[j] == "{":
                    depth += 1
                elif p[j] == "}":
                    depth -= 1
                    if depth == 0:
                        end = j
                        break
                elif p[j] == "," and depth == 1:
                    cuts.append(j)
            if end < 0 or not cuts:  # no closing brace or no comma: the braces are literal
                head = p[: start + 1].replace("{", "\0")
                todo.append(head + p[start + 1:])
                continue
            bounds = [start] + cuts + [end]
            for a, b in zip(bounds, bounds[1:]):
                todo.append(p[:start] + p[a + 1:b] + p[end + 1:])
        if len(out) + len(todo) > limit:
            raise ValueError(f"{pattern!r} expands to more than {limit} patterns")
    return [p.replace("\0", "{") for p in out]


# Tokens of a compiled glob (see Glob).
_LIT, _ONE, _CLASS, _STAR, _ALL, _DIR_OPEN, _DIR_BODY = range(7)


def _class(body):
    """(negated, ranges) of a [...] body: ranges as (low, high) characters."""
    neg = body[:1] in ("!", "^")
    body = body[1:] if neg else body
    ranges, k = [], 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            ranges.append((body[k], body[k + 2]))
            k += 3
        else:
            ranges.append((body[k], body[k]))
            k += 1
    return neg, tuple(ranges)


def _tokens(glob):
    """The glob as tokens: `**` spanning folders (all of the rest, or any
    number of whole folders), `*` and `?` inside one folder name, [...]
    classes, the rest literal."""
    i, n, out = 0, len(glob), []
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i) and (i == 0 or glob[i - 1] == "/"):
                j = i + 2
                if j == n:
                    out.append((_ALL, None))
                    i = j
                    continue
                if glob[j] == "/":
                    out.append((_DIR_OPEN, None))
                    out.append((_DIR_BODY, None))
                    i = j + 1
                    continue
            while i < n and glob[i] == "*":
                i += 1
            out.append((_STAR, None))
            continue
        if c == "?":
            out.append((_ONE, None))
        elif c == "[":
            j = glob.find("]", i + 2 if glob[i + 1:i + 2] in ("!", "^") else i + 1)
            if j < 0 or j == i + 1:
                out.append((_LIT, c))
            else:
                out.append((_CLASS, _class(glob[i + 1:j])))
                i = j + 1
                continue
        else:
            out.append((_LIT, c))
        i += 1
    return tuple(out)


class Glob:
    """One glob matched as a set of states over the path (a Thompson NFA):
    time O(len(path) * len(glob)) whatever the glob, since no choice is ever
    tried again (a backtracking regex takes exponential time on
    `*a*a*a*a...b` against `aaaa...`).  A path that lacks the glob's literal
    start or end (`src/`, `.py`) is told apart without the simulation."""

    def __init__(self, glob):
        self.tokens = _tokens(glob)
        self.end = len(self.tokens)
        self.head = _literal(self.tokens)
        self.tail = _literal(reversed(self.tokens))[::-1]

    def cost(self, path):
        """The work units of matching `path` (globs.max_project_work)."""
        return len(path) * (self.end + 1)

    def could_match(self, path):
        """False when `path` cannot match: it lacks the literal start or end."""
        return path.startswith(self.head) and path.endswith(self.tail)

    def _close(self, states):
        """States with every state reachable without reading a character."""
        todo, seen = list(states), set(states)
        while todo:
            i = todo.pop()
            if i >= self.end:
                continue
            kind = self.tokens[i][0]
            nxt = ()
            if kind in (_STAR, _ALL):
                nxt = (i + 1,)
            elif kind == _DIR_OPEN:
                nxt = (i + 1, i + 2)  # into the folders, or none at all
            for j in nxt:
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
        return seen

    def match(self, path):
        states = self._close({0})
        tokens = self.tokens
        for ch in path:
            nxt = set()
            for i in states:
                if i >= self.end:
                    continue
                kind, arg = tokens[i]
                if kind == _LIT:
                    if ch == arg:
                        nxt.add(i + 1)
                elif kind == _ONE:
                    if ch != "/":
                        nxt.add(i + 1)
                elif kind == _CLASS:
                    neg, ranges = arg
                    hit = any(lo <= ch <= hi for lo, hi in ranges)
                    if (not hit and ch != "/") if neg else hit:
                        nxt.add(i + 1)
                elif kind == _STAR:
                    if ch != "/":
                        nxt.add(i)
                elif kind == _ALL:
                    nxt.add(i)
                elif kind == _DIR_BODY:
                    nxt.add(i)
                    if ch == "/":
                        nxt.add(i + 1)
            if not nxt:
                return False
            states = self._close(nxt)
        return self.end in states


def _literal(tokens):
    """The literal characters the tokens begin with."""
    out = []
    for kind, arg in tokens:
        if kind != _LIT:
            break
        out.append(arg)
    return "".join(out)


# The work units of a look at a glob's literal start and end (Glob.could_match).
_LOOK = 2


class OutOfWork(Exception):
    """A project's globs reached globs.max_project_work in this refresh."""


class Work:
    """The work a project's globs may still take in one refresh
    (globs.max_project_work), and how many rules it left undecided."""

    def __init__(self, units):
        self.left = units
        self.undecided = 0

    def charge(self, units):
        if units > self.left:
            self.left = 0
            raise OutOfWork
        self.left -= units


_work = [None]  # the current refresh's Work (start_refresh); a fresh one for a process that started none


def start_refresh(bounds=None):
    """A new refresh: a project's globs get their whole allowance again."""
    if bounds is None:
        from engine.core.settings import glob_limits

        bounds = glob_limits()
    _work[0] = Work(bounds["max_project_work"])
    return _work[0]


def _current_work():
    return _work[0] if _work[0] is not None else start_refresh()


class Globs:
    """A rule's globs: a path matches when one of them matches it."""

    def __init__(self, globs):
        self.globs = globs

    def match(self, path, work=None):
        """Does one glob match `path`?  With `work`, each glob simulated is
        charged first (OutOfWork past the allowance)."""
        for g in self.globs:
            if work is not None:
                work.charge(_LOOK)
            if not g.could_match(path):
                continue
            if work is not None:
                work.charge(g.cost(path))
            if g.match(path):
                return True
        return False


def compile_globs(globs, limit, bounds=None, work=None):
    """The matcher of a rule's globs (paths relative to the project); None
    without any.  A glob longer than `max_chars` or with more `*` than
    `max_stars` (globs in pipelines/settings/engine.yaml) is a ValueError:
    the rule then counts as unscoped.  With `work`, each glob's patterns
    are charged as they are made (OutOfWork past the allowance)."""
    if bounds is None:
        from engine.core.settings import glob_limits

        bounds = glob_limits()
    out = []
    for g in globs:
        g = g.strip()
        if len(g) > bounds["max_chars"]:
            raise ValueError(f"a glob of {len(g)} characters is longer than {bounds['max_chars']} (globs.max_chars)")
        if g.count("*") > bounds["max_stars"]:
            raise ValueError(f"{g!r} has more than {bounds['max_stars']} '*' (globs.max_stars)")
        while g.startswith("./"):
            g = g[2:]
        g = g.lstrip("/")
        patterns = expand_braces(g, limit)
        if work is not None:
            work.charge(sum(len(e) + 1 for e in patterns))
        out.extend(Glob(e) for e in patterns)
    return Globs(out) if out else None


def relative(path, cwd):
    """A tool input's path as the globs see it: relative to the project when
    inside it (with forward slashes), else absolute."""
    if not isinstance(path, str) or not path or "\0" in path:
        return None
    p = os.path.expanduser(path)
    if cwd and not os.path.isabs(p):
        p = os.path.join(cwd, p)
    p = os.path.normpath(p)
    if cwd:
        root = os.path.normpath(cwd)
        if p == root:
            return "."
        if p.startswith(root.rstrip(os.sep) + os.sep):
            return p[len(root.rstrip(os.sep)) + 1:].replace(os.sep, "/")
    return p.replace(os.sep, "/")


def seen_from(rf, touched, cwd):
    """The touched paths (relative to the working folder `cwd`, else
    absolute) as the globs of rule file `rf` see them: relative to its
    base folder (sources.RuleFile.base) when that is another one."""
    base = getattr(rf, "base", None)
    if not base or not cwd or os.path.normpath(base) == os.path.normpath(cwd):
        return touched
    return [relative(t if os.path.isabs(t) else os.path.join(cwd, t), base) for t in touched]


def touched_in_transcript(path, cwd, settings, agent=None):
    """Project-relative paths named by the file tool calls of a transcript's
    main chain (the last `max_transcript_bytes` of it, read by the agent's
    reader), in order, without repeats: the path fields of its read, write
    and search tools (its YAML), and a glob tool's pattern under its folder.
    A missing, unreadable or half-written transcript gives what it can."""
    from engine.agents import DEFAULT_AGENT, table
    from engine.agents.transcripts import backwards
    from engine.core.settings import hook_bounds

    if not path:
        return []
    agent = agent or table.get(DEFAULT_AGENT)
    limit = min(settings["max_transcript_bytes"], hook_bounds()["max_transcript_bytes"])
    calls = [r for r in backwards(agent.data["transcript"]["reader"], path, limit, ("tool_call",), head_bytes=limit)
             if not r.sidechain]
    found = {}
    for call in reversed(calls):
        for rel in call_paths(agent, call.tool, call.input, cwd):
            found.setdefault(rel, None)
    return list(found)


def call_paths(agent, tool, inp, cwd):
    """The project-relative paths one file tool call names (a shell command
    that stands for a file tool's call: the paths it names)."""
    kind = agent.tool_kind(tool)
    if kind == "shell":
        command = agent.shell_command(inp)
        kind = agent.shell_kind(command)
        return [rel for rel in (relative(p, cwd) for p in agent.text_paths(kind, command)) if rel] if kind else []
    if kind not in ("read", "write", "search"):
        return []
    spec = agent.tools(kind)
    out = list(input_paths(inp, spec["path"], cwd))
    named = (p for text in agent.input_texts(kind, inp) for p in agent.text_paths(kind, text))  # a patch's files
    out.extend(rel for rel in (relative(p, cwd) for p in named) if rel)
    field = spec["glob"].get(tool)
    if field and isinstance(inp.get(field), str):
        # A glob call's pattern, under its folder, as written: a rule glob
        # that matches the pattern text covers what it lists.
        folder = next((inp[f] for f in spec["path"] if isinstance(inp.get(f), str)), cwd)
        rel = relative(os.path.join(folder or "", inp[field]), cwd)
        if rel:
            out.append(rel)
    return out


def input_paths(inp, fields, cwd):
    """The project-relative paths a tool input names in `fields`."""
    for f in fields:
        rel = relative(inp.get(f), cwd)
        if rel:
            yield rel


class Decision:
    __slots__ = ("path", "status", "reason")

    def __init__(self, path, status, reason):
        self.path = path
        self.status = status  # "in" or "out"
        self.reason = reason

    def __repr__(self):
        return f"Decision({self.path!r}, {self.status!r}, {self.reason!r})"

    def __eq__(self, other):
        return isinstance(other, Decision) and (self.path, self.status, self.reason) == (
            other.path, other.status, other.reason)


_compiled: dict = {}  # many rules share their globs: compile each set once per process


UNDECIDED = ("paths: not matched, as the project's path-scoped rules reached globs.max_project_work in this "
             "refresh (pipelines/settings/engine.yaml); injected as if unscoped")


def decide(globs, touched, limit, rf=None):
    """(status, reason) of one path-scoped rule for the touched paths; the
    work of a project's rule (`rf`, a sources.RuleFile, not the user's own)
    is counted against the refresh's globs.max_project_work."""
    work = _current_work() if rf is not None and getattr(rf, "origin", None) != "user" else None
    try:
        return _decide(globs, touched, limit, work)
    except OutOfWork:
        work.undecided += 1
        return "in", UNDECIDED


def matched(globs, touched, limit, rf=None):
    """Does a touched path match the rule's globs (decide), as far as the
    refresh's work allows: a project's rule left undecided matched nothing
    (it is not in view through a touch)."""
    status, reason = decide(globs, touched, limit, rf)
    return status == "in" and reason is not UNDECIDED


def _decide(globs, touched, limit, work):
    key = (tuple(globs), limit)
    try:
        rx = _compiled[key] if key in _compiled else _compiled.setdefault(key, compile_globs(globs, limit, work=work))
    except ValueError as exc:
        return "in", f"paths: {exc}; injected as if unscoped"
    shown = ", ".join(globs)
    for t in touched:
        # a file outside the project keeps its absolute path: no glob (all relative) names it
        if rx is not None and not t.startswith("/") and rx.match(t, work):
            return "in", f"{t} matches {shown}"
    if not touched:
        return "out", f"no file touched yet; paths: {shown}"
    return "out", f"none of the {len(touched)} touched file(s) matches {shown}"


def scope_for(rf, default_key):
    """The Scope of a rule file, by its source's scope key (Copilot's
    applyTo, Cursor's globs) or the handler's (`paths`); a file whose
    source's always key is true in its frontmatter applies everywhere."""
    folder = getattr(rf, "folder_scope", None)
    if folder:  # an instruction file below the working folder: the files under its folder
        return Scope([folder + "/**"])
    always = getattr(rf, "always_key", None)
    if always:
        from .sources import field_of

        if str(field_of(rf.text, always) or "").strip().lower() == "true":
            return Scope()
    scope = scope_of(rf.text, getattr(rf, "scope_key", None) or default_key)
    every = getattr(rf, "everywhere", None)
    if scope.globs and all(g.strip() in every if every is not None else matches_every_file(g) for g in scope.globs):
        return Scope()  # `applyTo: "**"`: every file, so no scope (loaded at the start, as the agent does)
    if scope.globs and getattr(rf, "names_anywhere", False):
        # after the check above: `paths: "*"` stays scoped, loaded after a read (measured with 2.1.332)
        scope = Scope([anywhere(g) for g in scope.globs], scope.problem)
    return scope


def anywhere(glob):
    """A glob as gitignore reads it: one without a slash names a file in any
    folder (`*.py` is `**/*.py`); one with a slash is from the base folder."""
    g = glob.strip()
    return g if "/" in g else "**/" + g


def matches_every_file(glob):
    """A glob that matches every file of the project: `**` segments only,
    or `**` segments then a last `*` (`**`, `**/*`, `**/**/*`)."""
    parts = glob.strip("/").split("/")
    head, last = parts[:-1], parts[-1]
    return all(p == "**" for p in head) and (last == "**" or (last == "*" and bool(head)))


def select(files, settings, touched, log, cwd=None):
    """(kept files, decisions): rule files without a scope are kept as they
    are; a path-scoped one is kept only when a touched file (relative to
    `cwd`) matches.  A new refresh: its project's globs get their allowance
    (globs.max_project_work), and one line says when they reached it."""
    work = start_refresh()
    kept, decisions = [], []
    for rf in files:
        scope = scope_for(rf, settings["key"])
        if scope.problem:
            log(f"rule file {rf.path}: {scope.problem}")
            decisions.append(Decision(rf.path, "in", scope.problem))
            kept.append(rf)
            continue
        if scope.globs is None:
            kept.append(rf)
            continue
        status, reason = decide(scope.globs, seen_from(rf, touched, cwd), settings["max_brace_expansions"], rf)
        decisions.append(Decision(rf.path, status, reason))
        if status == "in":
            kept.append(rf)
    if work.undecided:
        log(f"{work.undecided} path-scoped rule file(s) of the project injected as if unscoped: matching the "
            "project's globs reached globs.max_project_work in this refresh (pipelines/settings/engine.yaml)")
    return kept, decisions
