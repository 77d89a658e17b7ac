"""`engine cache ...`: the content cache from the command line, a thin
layer over store, prune, gc, pins, learned and runner."""

import json
import sys

from engine.base.errors import UserError


def add_parser(sub):
    from .argparser import amount, folder

    p = sub.add_parser("cache", help="the content cache of large tool outputs (CCM)",
                       description="Large tool outputs stored by key (a keyed sha256), each with its project: list, show, pin "
                       "and unpin see the working folder's project only, unless --all; settings in "
                       "pipelines/settings/content_cache.yaml, $ENGINE_CONTENT_CACHE or ~/.config/rules-engine/content_cache.yaml.")
    s = p.add_subparsers(dest="cache_command", metavar="SUBCOMMAND")
    s.required = True
    x = s.add_parser("stats", help="entries, bytes stored and on disk, pins")
    x.add_argument("--json", action="store_true")
    x = s.add_parser("list", help="this project's entries, newest first")
    x.add_argument("--pinned", action="store_true", help="only pinned entries")
    x.add_argument("--json", action="store_true")
    _all(x)
    x = s.add_parser("show", help="print one of this project's cached outputs, byte-exact")
    x.add_argument("key", help="sha256:KEY or KEY")
    x.add_argument("--lines", metavar="A:B", help="only lines A to B (1-based, inclusive; A: or :B open)")
    _all(x)
    x = s.add_parser("stub", help="print the stub that replaced one of this project's cached outputs "
                     "(what an agent runs to put the stub in the output's place: Gemini CLI's tail call)")
    x.add_argument("key", help="sha256:KEY or KEY")
    x.add_argument("--source", type=int, metavar="N",
                   help="the entry's source (command and exit status) the stub names: its index; default the newest")
    x = s.add_parser("pin", help="pin an entry (prune keeps hard pins, and soft ones while it can)")
    x.add_argument("key")
    x.add_argument("--level", choices=("none", "soft", "hard"), required=True)
    x.add_argument("--reason", default="")
    _all(x)
    x = s.add_parser("unpin", help="remove an entry's pin")
    x.add_argument("key")
    _all(x)
    x = s.add_parser("prune", help="delete by age and size: unpinned oldest first, then soft pins, never hard; "
                     "never what a transcript names or what was stored or read within gc.grace_seconds")
    x.add_argument("--max-age-days", type=amount, metavar="N", help="default: the settings' prune.max_age_days")
    x.add_argument("--max-size-mb", type=amount, metavar="N", help="default: the settings' prune.max_size_mb")
    x.add_argument("--dry-run", action="store_true", help="say what would go; delete nothing")
    x = s.add_parser("gc", help="delete entries no transcript references (stored or read before the grace period; "
                     "pins stay)")
    x.add_argument("--dry-run", action="store_true")
    x.add_argument("--grace-seconds", type=amount, metavar="N",
                   help="keep unreferenced entries younger than this (default: the settings' gc.grace_seconds)")
    x.add_argument("--transcripts", action="append", metavar="DIR",
                   help="a folder (or transcript) to search as well (always searched: every agent's session folders, "
                   "Claude Code's, Codex's, Gemini's and Copilot's, the settings' gc.transcripts and "
                   "every transcript engine purge rewrote)")
    x = s.add_parser("learned", help="commands learned to have large output (the working folder's project's, unless "
                     "--all or --project DIR)")
    x.add_argument("--project", nargs="?", const=".", metavar="DIR", help="the project of DIR (default: the working folder)")
    _all(x)
    x = s.add_parser("run", help="run a command; print its output, or a stub when it is over the threshold "
                     "(what an intercepted Bash call runs)")
    x.add_argument("--cwd", type=folder)
    x.add_argument("--session")
    x.add_argument("--tool-use-id")
    x.add_argument("shell_command", nargs="+", metavar="COMMAND",
                   help="after --: one shell string (`-- 'make test | tail'`, as the hook writes it), or a command "
                        "and its arguments, each kept as it is (`-- sh -c 'seq 1 20000'`)")


def _all(parser):
    parser.add_argument("--all", action="store_true",
                        help="every project's entries (default: the project of the working folder only)")


def _shell_string(words):
    """One word is a shell string as it is; several are a command and its
    arguments, each quoted (joined bare, `sh -c 'seq 1 9'` ran `sh -c seq`)."""
    import shlex

    return words[0] if len(words) == 1 else shlex.join(words)


def run(args):
    from engine.ccm import config
    from engine.ccm.store import Store

    settings = config.load()
    cmd = args.cache_command
    if cmd == "run":
        from engine.ccm.runner import run as run_command
        from engine.hooks.projectenv import received

        # the command runs with the variables the agent's shell gave, the project's included
        return run_command(_shell_string(args.shell_command), args.cwd, args.session, args.tool_use_id, settings,
                           env=received())
    store = Store(settings)
    if cmd == "stats":
        return _stats(store, args)
    if cmd == "list":
        return _list(store, args)
    if cmd == "show":
        return _show(store, args)
    if cmd == "stub":
        return _stub(store, settings, args)
    if cmd in ("pin", "unpin"):
        return _pin(store, args, cmd)
    if cmd == "prune":
        from engine.ccm.prune import prune

        p = settings["prune"]
        res = prune(store, p["max_age_days"] if args.max_age_days is None else args.max_age_days,
                    p["max_size_mb"] if args.max_size_mb is None else args.max_size_mb, args.dry_run)
        verb = "would delete" if args.dry_run else "deleted"
        print(f"{verb} {len(res['deleted'])} entr{'y' if len(res['deleted']) == 1 else 'ies'}; "
              f"blobs on disk: {res['bytes_before']} -> {res['bytes_after']} bytes; "
              f"{verb} {res['orphans']} orphan blob(s) and {res['temp_files']} temporary file(s) "
              f"({res['temp_bytes']} bytes)")
        return 0
    if cmd == "gc":
        return _gc(store, settings, args)
    if cmd == "learned":
        import os

        from engine.ccm.learned import all_projects, read
        from engine.ccm.origin import project_of

        conf = settings["learned"]
        if args.all:
            projects = all_projects(store.root, conf)
        else:
            project = project_of(os.path.abspath(args.project or "."))
            projects = {project: read(store.root, project, conf)}
        for project, pats in sorted(projects.items()):
            print(project)
            for pat, e in sorted(pats.items()):
                print(f"  {pat}\t{e['count']} run(s), up to {e['max_bytes']} bytes")
        return 0
    raise AssertionError(cmd)


def _pin(store, args, cmd):
    from engine.ccm.keys import parse
    from engine.ccm.pins import pin_key

    key = parse(args.key)
    level, reason = (args.level, args.reason) if cmd == "pin" else ("none", "")
    if not _in_scope(store, key, args) or not pin_key(store, key, level, reason):
        raise UserError(f"no entry sha256:{key} in {_scope_name(args)} (see engine cache list)")
    print(f"sha256:{key}: pin {level}" + (f" ({reason})" if reason else ""))
    return 0


def _gc(store, settings, args):
    from engine.ccm.gc import gc
    from engine.ccm.refs import roots

    grace = settings["gc"]["grace_seconds"] if args.grace_seconds is None else args.grace_seconds
    given = _transcript_folders(args.transcripts)
    # --transcripts adds to what is searched, never replaces it: an entry the
    # agent's own transcripts or a purged one names stays, whatever is named.
    res = gc(store, roots(list(settings["gc"]["transcripts"]) + given, store), grace, args.dry_run)
    verb = "would delete" if args.dry_run else "deleted"
    freed = "would be freed" if args.dry_run else "freed"
    print(f"{verb} {len(res['deleted'])} unreferenced entr{'y' if len(res['deleted']) == 1 else 'ies'} "
          f"({res['referenced']} referenced), {res['orphans']} orphan blob(s) and {res['temp_files']} "
          f"temporary file(s); {res['freed_bytes']} bytes {freed}")
    return 0


def _transcript_folders(named):
    """The --transcripts folders, each an existing folder or transcript file:
    a mistyped one would search nothing and say nothing."""
    import os

    for path in named or ():
        if not (os.path.isdir(path) or os.path.isfile(path)):
            raise UserError(f"--transcripts {path}: no such folder or file; name a folder of transcripts "
                            "(nothing was deleted)")
    return list(named or ())


def _entries(store, every=True):
    """Sidecars, newest first: every entry, or (`every` off) only those of
    the working folder's project (engine/ccm/origin.py)."""
    from engine.ccm.origin import belongs, project_of

    project = None if every else project_of()
    out = []
    for key in store.keys():
        meta = store.meta(key)
        if meta is not None and (every or belongs(meta, project)):
            out.append(meta)
    out.sort(key=lambda m: m.get("created", 0), reverse=True)
    return out


def _in_scope(store, key, args):
    from engine.ccm.origin import belongs, project_of

    return args.all or belongs(store.meta(key), project_of())


def _scope_name(args):
    return "the cache" if args.all else "this project's cache (--all: every project's)"


def _stats(store, args):
    metas = _entries(store)
    pins = {"none": 0, "soft": 0, "hard": 0}
    for m in metas:
        pins[m["pin"]["level"]] = pins.get(m["pin"]["level"], 0) + 1
    temps = store.temp_files()
    res = {"folder": store.root, "entries": len(metas), "bytes": sum(m["bytes"] for m in metas),
           "disk_bytes": store.disk_bytes(), "pins": pins, "temp_files": len(temps),
           "temp_bytes": sum(t[1] for t in temps), "max_size_mb": store.settings["store"]["max_size_mb"]}
    if args.json:
        print(json.dumps(res))
    else:
        print(f"{res['folder']}: {res['entries']} entries, {res['bytes']} bytes in {res['disk_bytes']} bytes on disk; "
              f"pins: {pins['hard']} hard, {pins['soft']} soft; "
              f"temporary files: {res['temp_files']} ({res['temp_bytes']} bytes; prune and gc remove those idle "
              f"{store.settings['store']['temp_grace_seconds']} s)")
    return 0


def _list(store, args):
    from engine.base.controls import one_line
    from engine.ccm.origin import origin

    metas = [m for m in _entries(store, args.all) if not args.pinned or m["pin"]["level"] != "none"]
    if args.json:
        print(json.dumps(metas))
        return 0
    for m in metas:
        src = (m.get("sources") or [{}])[0]
        what = src.get("command") or src.get("path") or src.get("tool") or ""
        where = f"  [{origin(m) or 'before origins'}]" if args.all else ""
        # one row an entry: a command of several lines (a heredoc) is one line, its newlines escaped
        print(f"sha256:{m['key']}  {m['bytes']:>10}  {m['lines']:>7} lines  {m['pin']['level']:<4}  "
              f"{one_line(what[:80])}{one_line(where)}")
    return 0


def _stub(store, settings, args):
    from engine.ccm.keys import parse
    from engine.ccm.stub import render

    from .output import product

    key = parse(args.key)
    args.all = False  # a stub is read back in its own project only
    meta = store.meta(key) if _in_scope(store, key, args) else None
    sources = (meta or {}).get("sources") or []
    if not sources:
        raise UserError(_not_here(settings, key, "this project's cache"))
    index = len(sources) - 1 if args.source is None else args.source
    if not 0 <= index < len(sources):
        raise UserError(f"--source {args.source}: entry sha256:{key} has sources 0 to {len(sources) - 1}")
    src = sources[index]
    product(render(settings, "template", key, store, meta, src.get("exit", ""), src.get("command") or ""))
    return 0


def _show(store, args):
    from engine.ccm.keys import parse

    key = parse(args.key)
    first, last = 1, None
    if args.lines:
        a, sep, b = args.lines.partition(":")
        try:
            first = int(a) if a else 1
            last = int(b) if b else None
        except ValueError:
            raise UserError(f"--lines {args.lines}: expected A:B, for example 1:200") from None
        if not sep or first < 1 or (last is not None and last < first):
            raise UserError(f"--lines {args.lines}: expected A:B with 1 <= A <= B, for example 1:200")
    # Another project's entry is answered as an absent one: no project learns what another cached.
    absent = _not_here(store.settings, key, _scope_name(args))
    if not _in_scope(store, key, args):
        raise UserError(absent)
    sys.stdout.flush()
    # streamed in chunks after a check pass: memory stays bounded whatever the size
    if not store.write_to(key, sys.stdout.buffer, first, last):
        raise UserError(absent)
    sys.stdout.buffer.flush()
    _touch(store, key)
    return 0


def _not_here(settings, key, scope):
    """Why `key` reads back nothing, said alike for an output never stored
    here, one another project stored and one removed since (no project
    learns whether another's existed): the removals that may have taken
    it, with the settings that keep outputs longer, and what to do."""
    import os

    from engine.base.errors import display
    from engine.base.paths import config_dir_str
    from engine.ccm import config

    size = settings["store"]["max_size_mb"]
    chosen = config.chosen_path()
    where = display(os.path.join(config_dir_str(), config.NAME) if chosen == config.builtin_path() else chosen)
    return (f"no readable entry sha256:{key} in {scope}. An output stored here may have been removed "
            f"since: by engine cache gc once nothing named it for gc.grace_seconds ({settings['gc']['grace_seconds']} s), "
            f"by engine cache prune (prune.max_age_days: {settings['prune']['max_age_days']}) or by the size bound "
            f"(store.max_size_mb: {'none' if size is None else size}); or its blob is damaged. To read the output, "
            "run its command again (the cache keeps it anew). To keep outputs longer, raise gc.grace_seconds and "
            f"store.max_size_mb in {where}, or pin an output you need (engine cache pin KEY --level hard)")


def _touch(store, key):
    """Record the read (gc's grace period starts again).  The output was
    read whole: a cache folder that cannot be written (read-only, full) is a
    note on stderr, not a failed read."""
    from engine.base.errors import display

    try:
        store.touch(key)
    except OSError as exc:
        where = display(exc.filename) if exc.filename else "the cache folder"
        print(f"engine: note: the read was not recorded, so gc's grace period for sha256:{key} did not start "
              f"again (cannot write to {where}: {exc.strerror or exc})", file=sys.stderr)
