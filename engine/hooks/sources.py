"""Rule files for a refresh: where they are, their priority, their order.
A rule file (CLAUDE.md included) is never read past the engine's cap.
os.path and string methods only (no pathlib, dataclasses or `re`): this runs
in every injecting hook process."""

import os


class RuleFile:
    """One rule file as read: where (`path` as found, `real` path), whose
    (`origin`: origin.USER or origin.PROJECT, with the project's real path),
    and which content (`digest`: sha256 of its bytes, 16 hex digits).  Its
    identity is (real, digest), never its base name."""

    def __init__(self, path, name, priority, text="", real=None, origin="project", project="", digest="",
                 scope_key=None, always_key=None, folder_scope=None, base=None, names_anywhere=False,
                 everywhere=None):
        self.path = path
        self.everywhere = everywhere  # the globs its agent takes as every file (None: pathscope.matches_every_file)
        self.names_anywhere = names_anywhere  # a glob without a slash names a file in any folder
        self.base = base  # the folder its `paths:` globs are relative to (None: the working one)
        self.scope_key = scope_key  # the frontmatter key of its source's scope (None: the handler's)
        self.always_key = always_key  # the frontmatter key that makes it apply everywhere
        self.folder_scope = folder_scope  # a folder (relative to the working one) whose every file it covers
        self.name = name
        self.priority = priority
        self.text = text
        self.real = real or path
        self.origin = origin
        self.project = project
        self.digest = digest


def expand(template, cwd):
    """~ and {project} (the event's working directory) in a configured path."""
    return os.path.expanduser(template.replace("{project}", cwd or os.getcwd()))


def frontmatter(text):
    """(inner text, end offset) of a leading YAML frontmatter block, or None.

    The block opens with `---` on the first line (after an optional BOM) and
    closes at the first later line that is `---` or `...`; blanks may follow
    either marker, and lines may end in CRLF."""
    i = 1 if text.startswith("\ufeff") else 0
    if not text.startswith("---", i):
        return None
    nl = text.find("\n", i + 3)
    if nl < 0:
        return None
    opening = text[i + 3:nl]
    if opening.endswith("\r"):
        opening = opening[:-1]
    if opening.strip(" \t"):
        return None
    start = nl + 1
    p = start - 1
    while True:
        p = text.find("\n", p + 1)
        if p < 0:
            return None
        q = p + 1
        if not text.startswith(("---", "..."), q):
            continue
        r = q + 3
        while r < len(text) and text[r] in " \t":
            r += 1
        if r == len(text):
            end = r
        elif text[r] == "\n":
            end = r + 1
        elif text.startswith("\r\n", r):
            end = r + 2
        else:
            continue
        inner_end = p - 1 if p - 1 >= start and text[p - 1] == "\r" else p
        return text[start:inner_end], end


def body(text):
    """The rule without its frontmatter: metadata for the agent's loader
    (globs, description), noise in a refresh."""
    fm = frontmatter(text)
    return text[fm[1]:] if fm else text


def _field(inner, key):
    """The raw value of the first `key:` line of a frontmatter block (a
    trailing `# comment` and blanks removed), or None."""
    for line in inner.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if not line.startswith(key):
            continue
        rest = line[len(key):].lstrip(" \t")
        if not rest.startswith(":") or "\r" in rest:
            continue
        value = rest[1:].lstrip(" \t")
        hash_at = value.find("#")
        if hash_at >= 0:
            value = value[:hash_at]
        return value.rstrip(" \t")
    return None


def field_of(text, key):
    """The raw value of `key:` in a rule file's frontmatter, or None."""
    fm = frontmatter(text)
    return _field(fm[0], key) if fm else None


def priority_of(text, key, default, max_digits):
    """(priority, problem): the frontmatter's whole-number priority, else the
    default with a note saying why when the key is there but not a number
    of at most `max_digits` digits (hooks.max_priority_digits: int() of
    thousands of digits raises, and a project's file must not fail the handler)."""
    fm = frontmatter(text)
    if not fm:
        return default, ""
    raw = _field(fm[0], key)
    if raw is None:
        return default, ""
    value = raw.strip("'\"")
    digits = value[1:] if value[:1] in ("+", "-") else value
    if not digits.isdecimal():
        return default, f"{key}: {raw} is not a whole number (lower comes first); using the default {default}"
    if len(digits) > max_digits:
        return default, (f"{key}: a number of {len(digits)} digits is longer than hooks.max_priority_digits "
                         f"({max_digits}); using the default {default}")
    return int(value), ""


def _matches(name, pattern):
    """fnmatch's rules; the common `*.md` without compiling a pattern."""
    if pattern.startswith("*") and not any(c in pattern[1:] for c in "*?["):
        return name.endswith(pattern[1:])
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


def _realpath(path, folders):
    """os.path.realpath, resolving each folder once: a folder of 10,000 rule
    files costs one lstat per file, not one per path component."""
    folder, name = os.path.split(path)
    real_folder = folders.get(folder)
    if real_folder is None:
        real_folder = folders[folder] = os.path.realpath(folder)
    candidate = os.path.join(real_folder, name)
    return os.path.realpath(candidate) if os.path.islink(candidate) else candidate


def source_folders(spec, cwd, agent=None):
    """[(folder, glob, source)] of a handler's `sources`: each `{dir, glob}`
    as written, and `{agent: rules}` as the rule folders the agent reads
    (engine/agents/instructions.py), with their scope keys."""
    out = []
    for src in spec["sources"]:
        if src.get("agent") == "below":
            continue  # files, not folders: _listed finds them from the touched paths
        if src.get("agent") == "rules":
            if agent is not None:
                from engine.agents.instructions import base_of, folders

                out.extend((f, g, dict(e, glob_base=base_of(e, f))) for f, g, e in folders(agent, cwd))
            continue
        out.append((expand(src["dir"], cwd), src["glob"], src))
    return out


def source_files(spec, cwd, agent=None):
    """[(path, source)] of a handler's `files`: each path as written, and
    `{agent: files}` as the single files the agent reads for `cwd` (its
    AGENTS.md chain, its CLAUDE.md or GEMINI.md ...)."""
    out = []
    for f in spec["files"]:
        if isinstance(f, dict):
            if f.get("agent") == "files" and agent is not None:
                from engine.agents.instructions import files

                out.extend((p, e) for p, e in files(agent, cwd))
            continue
        out.append((expand(f, cwd), {}))
    return out


def _listed(spec, cwd, log, agent=None, touched=None):
    """(path, rule folder, source) of every candidate file, in the spec's
    order: each source's matches sorted by name, then the named files.
    `touched()`: the paths the session touched (relative to `cwd`), for
    `{agent: below}`."""
    out = _below(spec, cwd, agent, touched)
    for folder, pattern, src in source_folders(spec, cwd, agent):
        if os.path.isdir(folder):
            out.extend((p, folder, src) for p in _in_folder(folder, pattern, log))
        elif os.path.lexists(folder):
            log(f"rules folder {folder} is not a folder (or a broken link); left out")
        # a folder that does not exist is normal (most people have only one of them)
    for p, src in source_files(spec, cwd, agent):
        if os.path.isfile(p):
            out.append((p, os.path.dirname(os.path.abspath(p)), src))
        elif os.path.islink(p):
            log(f"{p} is a broken link; left out")
    return out


def _in_folder(folder, pattern, log):
    """The paths of `folder` that `pattern` matches, sorted, at most
    hooks.max_rule_files_per_folder of them (the first by name; a glob
    across folders: the first found, then sorted), the cut logged once."""
    from engine.core.settings import hook_bounds

    bounds = hook_bounds()
    most = bounds["max_rule_files_per_folder"]
    if pattern.startswith("**/") and "/" not in pattern[3:]:  # a name in the folder and its subfolders
        name = pattern[3:]
        paths = _walk(folder, lambda path: _matches(os.path.basename(path), name), most + 1,
                      bounds["max_rule_folder_entries"], log)
    elif "/" in pattern or "**" in pattern:  # a glob across folders (`docs/**/*.md`): pathlib's rules, bounded
        parts = pattern.split("/")
        paths = _walk(folder, lambda path: _path_matches(os.path.relpath(path, folder).split(os.sep), parts),
                      most + 1, bounds["max_rule_folder_entries"], log)
    else:
        paths = _flat(folder, pattern, bounds["max_rule_folder_entries"], log)
    if len(paths) > most:
        log(f"rules folder {folder} holds more than {most:,} rule files; the first {most:,} are read, the rest left out "
            "(hooks.max_rule_files_per_folder in pipelines/settings/engine.yaml)")
    return paths[:most]


def _flat(folder, pattern, entries, log):
    """The files of `folder` whose name matches `pattern`, sorted, from no
    more than `entries` of its entries (the first it lists): Copilot's
    .github/instructions of 3,000,000 empty files took 3 s to list whole, in
    each folder of the chain from the repository's root down."""
    from itertools import islice

    try:
        with os.scandir(folder) as it:
            names = [e.name for e in islice(it, entries + 1)]
    except OSError:
        return []
    if len(names) > entries:
        names = names[:entries]
        log(f"rules folder {folder} holds more than {entries:,} files and folders; the rest are left out "
            "(hooks.max_rule_folder_entries in pipelines/settings/engine.yaml)")
    return [os.path.join(folder, n) for n in sorted(n for n in names if _matches(n, pattern))]


def _path_matches(names, parts):
    """Does a relative path (its `names`) match a glob's `parts` as pathlib
    reads one: `**` is any number of folders (none too), any other part
    fnmatch's rules for one name; a glob that ends in `**` names folders,
    never a file.  Linear in names x parts."""
    if parts[-1] == "**":
        return False
    ok = [True] + [False] * len(names)  # ok[j]: the parts so far match names[:j]
    for part in parts:
        if part == "**":
            for j in range(1, len(names) + 1):
                ok[j] = ok[j] or ok[j - 1]
        else:
            ok = [False] + [ok[j - 1] and _matches(names[j - 1], part) for j in range(1, len(names) + 1)]
    return ok[-1]


def _walk(folder, accept, most, entries, log):
    """The files under `folder` whose path `accept` takes, sorted, at most
    `most`, looking at no more than `entries` entries (each folder's by
    name, its subfolders after its files); links to folders are not
    followed.  A folder with more entries is cut there, logged: a glob of
    your own (`docs/**/*.md`) walks a cloned repository's tree too."""
    from itertools import islice

    found, stack, seen = [], [folder], 0
    while stack and len(found) < most:
        here = stack.pop()
        try:
            with os.scandir(here) as it:  # a folder of millions of entries is not listed whole
                listed = sorted(islice(it, entries + 1), key=lambda e: e.name)
        except OSError:
            continue
        seen += len(listed)
        cut = seen > entries
        if cut:
            listed = listed[: len(listed) - (seen - entries)]
        # as a listing names them: a broken link too (collect says why it is left out)
        found.extend(e.path for e in listed if not e.is_dir(follow_symlinks=False) and accept(e.path))
        if cut:
            log(f"rules folder {folder} holds more than {entries:,} files and folders; the rest are left out "
                "(hooks.max_rule_folder_entries in pipelines/settings/engine.yaml)")
            break
        stack.extend(reversed([e.path for e in listed if e.is_dir(follow_symlinks=False)]))
    return sorted(found[:most])


def _below(spec, cwd, agent, touched):
    """`{agent: below}`: the agent's instruction files it never loads itself
    in the folders between the working one and a touched file, each scoped
    to its folder (engine/agents/instructions.py below)."""
    if agent is None or touched is None or not any(src.get("agent") == "below" for src in spec["sources"]):
        return []
    from engine.agents.instructions import below

    src = next(s for s in spec["sources"] if s.get("agent") == "below")
    return [(p, os.path.dirname(p), dict(src, folder_scope=rel)) for p, rel in below(agent, cwd, touched)]


def _read(p, real, cap, room, log):
    """The bytes of a rule file, read through its checked real path, or None
    (logged) when it is too large, larger than the `room` the refresh's
    reads have left, grows while read or cannot be read."""
    try:
        with open(real, "rb") as fh:  # the path just checked, not the link (which could change)
            # The size is checked before anything is read: a 1 GB file of
            # spaces (a few MB gzipped in a repository) costs a stat.
            size = os.fstat(fh.fileno()).st_size
            if size > cap:
                log(f"rule file {p} is larger than {cap:,} bytes; left out unread "
                    "(hooks.max_rule_file_bytes in pipelines/settings/engine.yaml)", once=("unread", real, size))
                return None
            if size > room:
                log(f"rule file {p} left out unread: the rule files read before it reach the refresh's "
                    "hooks.max_rule_bytes_read (pipelines/settings/engine.yaml)")
                return None
            data = fh.read(cap + 1)
    except OSError as exc:
        log(f"rule file {p} cannot be read ({exc.strerror}); left out")
        return None
    if len(data) > cap:
        log(f"rule file {p} grew past {cap:,} bytes while read; left out")
        return None
    return data


def _breaks_lines(path):
    """Why a rule file at `path` is left out for its name, or "": a line
    break or another control character in it (legal in a file or folder
    name, and in git) would read as lines of the delivery that names the
    file, such as a heading of a rule of the user's own."""
    if path.isprintable():
        return ""
    import unicodedata

    if any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in path):
        return "its path holds a line break or another control character, which would read as lines of the delivery"
    return ""


def _users_first(listed, origins):
    """(path, folder, source, real path, (origin, project)) of each listed
    file, the user's own first (in their listed order): they are read, and
    take the refresh's bytes, before any project's."""
    from .origin import rank

    folders = {}
    found = []
    for p, folder, src in listed:
        real = _realpath(p, folders)
        found.append((p, folder, src, real, origins.of(p, real, src.get("origin"))))
    found.sort(key=lambda row: rank(row[4][0]))  # stable
    return found


def collect(spec, cwd, log, trust=None, skipped=None, agent=None, touched=None):
    """RuleFiles for a handler: its `sources` (dir + glob) or its `files`,
    the user's own first (origin.py), then by priority and file name for
    sources, in the order given for files; unreadable, non-UTF-8, empty,
    oversized (hooks.max_rule_file_bytes of pipelines/settings/engine.yaml,
    checked before reading) and skipped files are left out, and so is a
    file the trust model (trust.py) does not let this profile read: logged
    and listed in `skipped` as (path, reason)."""
    from engine.base.digest import sha256
    from engine.core.settings import hook_bounds

    from .origin import Origins, order_key, rank

    skip = set(spec["skip"])
    pri = spec["priority"]
    bounds = hook_bounds()
    cap, room = bounds["max_rule_file_bytes"], bounds["max_rule_bytes_read"]
    origins = Origins(cwd)
    seen, out = set(), []
    for p, folder, src, real, (origin, project) in _users_first(_listed(spec, cwd, log, agent, touched), origins):
        name = os.path.basename(p)
        if real in seen or name in skip:
            continue
        reason = _breaks_lines(p) or (trust.why_not(str(p), real, folder, src.get("origin")) if trust is not None else None)
        if reason:
            log(f"rule file {p} left out: {reason}")
            if skipped is not None:
                skipped.append((str(p), reason))
            continue
        if not os.path.isfile(real):
            log(f"rule file {p} is not a readable file (a broken link?); left out")
            continue
        seen.add(real)
        data = _read(p, real, cap, room, log)
        if data is None:
            continue
        room -= len(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            log(f"rule file {p} is not UTF-8; left out (convert it with iconv -t UTF-8)")
            continue
        if not (body(text) if spec["strip_frontmatter"] else text).strip():
            continue  # nothing to deliver: blank, or frontmatter alone once it is stripped
        priority, problem = priority_of(text, pri["key"], pri["default"], bounds["max_priority_digits"])
        if problem:
            log(f"rule file {p}: {problem}")
        folder_scope = src.get("folder_scope")
        if folder_scope:  # svc/AGENTS.md, not AGENTS.md: where it applies is part of what it says
            name = f"{folder_scope}/{name}"
        out.append(RuleFile(p, name, priority, text, real, origin, project, sha256(data).hexdigest()[:16],
                            src.get("scope_key"), src.get("always_key"), folder_scope, src.get("glob_base"),
                            bool(src.get("names_anywhere")), src.get("everywhere")))
    if spec["files"]:
        out.sort(key=lambda r: rank(r.origin))  # a list of files keeps its order within an origin
    else:
        out.sort(key=order_key)  # rule files: the user's first, then most important first
    return out
