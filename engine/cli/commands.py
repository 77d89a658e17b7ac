"""What each `engine` subcommand does (argument parsing lives in cli.py)."""

import os
import sys

from engine.base.errors import UserError, display, given

from .output import json_document


def _read_input(name, cap=None):
    """The input text (a file or `-`), read with a profile's size cap
    (max_input_bytes, profile name): /dev/zero costs the cap, not all memory."""
    from engine.base.textio import read_input

    if cap is None:
        return read_input(given(name))
    max_bytes, profile_name = cap
    return read_input(given(name), max_bytes, f"max_input_bytes (profile {profile_name!r})")


def _cap(profile):
    return profile.max_input_bytes, profile.name


def _write_output(text, path):
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    import os

    try:
        mode = os.stat(path).st_mode & 0o7777  # replacing a file keeps its permissions
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    from engine.base.textio import write_text_atomic

    write_text_atomic(path, text, mode)


def _profile(args, level=None):
    from engine.core.profile import choice, profile_of

    from .output import note_left_out

    if getattr(args, "profile", None):
        given(args.profile)
    chosen = choice(getattr(args, "profile", None))
    note_left_out(chosen)
    return profile_of(chosen, level or getattr(args, "level", None))


def use_color(choice, stream=None):
    """--color auto|always|never; auto means a terminal, and $NO_COLOR unset
    or empty (no-color.org: a flag given on the command line wins)."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    stream = stream or sys.stdout
    return stream.isatty() and os.environ.get("TERM") != "dumb"


def expand_inputs(names):
    """Files for the given names: `-`, files, and globs (for shells that did
    not expand them); a glob that matches nothing is an input that failed."""
    import glob

    out, failed = [], []
    for name in names:
        if name == "-" or os.path.exists(name) or not any(c in name for c in "*?["):
            out.append(name)
            continue
        matches = sorted(m for m in glob.glob(os.path.expanduser(name), recursive=True) if os.path.isfile(m))
        if matches:
            out.extend(matches)
        else:
            failed.append((name, UserError("the pattern matches no file", name)))
    return out, failed


def cmd_compress(args):
    from engine.core.textcache import Compressor

    from .output import note_left_out

    inputs, failed = expand_inputs(args.files)
    several = len(inputs) + len(failed) > 1
    outdir = _output_folder(args, inputs, several)
    comp = Compressor(args.profile and given(args.profile), args.level)
    note_left_out(comp.chosen)
    tok = args.tokenizer or (comp.info("tokenizer") if args.json else None)
    figures = []
    for name in inputs:
        try:
            text, out, result, target = _compress_one(args, comp, name, outdir)
        except UserError as exc:
            if not several:
                raise  # one input: its one-line error is the whole story
            failed.append((name, exc))
            continue
        if args.json:
            figures.append({
                "file": name, "profile": comp.info("name"), "level": comp.info("level"),
                "objective": comp.info("objective"), "tokenizer": tok,
                "chars_before": len(text), "chars_after": len(out),
                "tokens_before": comp.count(text, tok), "tokens_after": comp.count(out, tok),
                "protected_spans": len(result.protected), "output": target, "text": out if target is None else None,
            })
    if args.json and (several or figures):
        json_document(figures if several else figures[0])
    return _say_failed(inputs, failed, several)


def _output_folder(args, inputs, several):
    """The folder several inputs are written into (-o DIR, created), or None;
    a UserError for inputs and outputs that do not go together."""
    if "-" in inputs and args.in_place:
        raise UserError("--in-place cannot write back to standard input; give files, or -o FILE", "-")
    if inputs.count("-") > 1:
        raise UserError("standard input (-) can be read once only", "-")
    if not several or args.in_place:
        return None
    if not args.output:
        raise UserError("several files: give --in-place to replace each, or -o DIR to write them into a folder")
    outdir = args.output
    if os.path.exists(outdir) and not os.path.isdir(outdir):
        raise UserError("with several files, -o names a folder; this is a file", outdir)
    names = [os.path.basename(f) for f in inputs if f != "-"]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UserError(f"two inputs would be written to the same name in {outdir}: {', '.join(dup)}; "
                        "compress them in separate runs", outdir)
    if "-" in inputs:
        raise UserError("with -o DIR, standard input (-) has no name to be written under; give files", "-")
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create the folder: {exc.strerror}", outdir) from None
    return outdir


def _compress_one(args, comp, name, outdir):
    """Compress input `name` and write it where it goes: (its text, the
    compressed text, the pipeline's result (with --json) or None, the file
    written or None for standard output)."""
    from .fastpath import as_command

    text = _read_input(name, (comp.info("max_input_bytes"), comp.info("name")))
    result = None
    if args.json:  # the figures need the compiled profile (protected spans) anyway
        from engine.text.pipeline import compress

        result = as_command(compress, comp.profile, text)
        out = result.text
    else:
        out = as_command(comp.compress, text)
    if args.in_place:
        target = name
    elif outdir is not None:
        target = os.path.join(outdir, os.path.basename(name))
    else:
        target = args.output
    if target is not None and not (args.in_place and out == text):
        _write_output(out, target)
    elif target is None and not args.json:
        from .output import product

        product(out)
    return text, out, result, target


def _say_failed(inputs, failed, several):
    """The exit status: 1 when an input failed (each said on stderr, then a
    count); a glob that matched nothing, given alone, is raised."""
    if failed and not several:
        raise failed[0][1]
    if not failed:
        return 0
    from .output import print_error

    for _name, error in failed:
        print_error(error)
    total = len(inputs) + len(failed) - len([f for f in failed if f[0] in inputs])
    print(f"engine: {len(failed)} of {total} input(s) failed: {', '.join(display(n) for n, _ in failed)}",
          file=sys.stderr)
    return 1


def cmd_validate(args):
    from engine.core.validate import validate_paths

    for f in args.files:
        given(f)
    if args.profile:
        given(args.profile)
    problems = validate_paths(args.files, profile=args.profile)
    if not args.files:
        problems += _own_content_cache_problems()
    if args.json:
        rows = [{"file": display(p.file) if p.file is not None else None, "line": p.line, "col": p.col,
                 "message": p.message} for p in problems]
        json_document({"ok": not problems, "problems": rows})
    else:
        for p in problems:
            print(str(p), file=sys.stderr)
    if not problems and not args.files:
        _fit_warnings(args.profile)
    return 1 if problems else 0


def _own_content_cache_problems():
    """The content cache settings every hook reads, when they are the user's
    own file ($ENGINE_CONTENT_CACHE or the config folder's): checked too."""
    from engine.ccm import config
    from engine.core.validate import validate_paths

    chosen = config.chosen_path()
    if os.path.realpath(chosen) == os.path.realpath(config.builtin_path()):
        return []  # among the built-in files already
    return validate_paths([chosen])


def _fit_warnings(profile_ref):
    """Warn (stderr, the exit status unchanged) when the active rule set
    cannot fit one delivery of its refresh handler (engine/hooks/fitcheck.py)."""
    try:
        from engine.hooks.fitcheck import warnings

        found = warnings(profile_ref)
    except Exception as exc:  # noqa: BLE001 - a warning must never fail the command
        found = [f"could not check whether the rules fit one delivery ({type(exc).__name__}: {exc})"]
    for w in found:
        print(f"warning: {w}", file=sys.stderr)


def cmd_diff(args):
    from engine.core.report import figures_line, unified_diff
    from engine.text.pipeline import compress

    profile = _profile(args)
    text = _read_input(args.file, _cap(profile))
    result = compress(profile, text)
    tok = profile.tokenizer
    from engine.core.textcache import count_tokens

    result.tokens_before[tok] = count_tokens(text, tok, profile.cache)
    result.tokens_after[tok] = count_tokens(result.text, tok, profile.cache)
    changed = result.text != text
    if args.json:
        fig = {"file": args.file, "profile": profile.name, "level": result.level, "changed": changed,
               "diff": unified_diff(text, result.text, args.file, f"{args.file} ({result.level})", False),
               "tokenizer": tok, "chars_before": result.chars_before, "chars_after": result.chars_after,
               "tokens_before": result.tokens_before[tok], "tokens_after": result.tokens_after[tok],
               "protected_spans": len(result.protected)}
        json_document(fig)
    else:
        color = use_color(args.color)
        sys.stdout.write(unified_diff(text, result.text, args.file, f"{args.file} ({result.level})", color))
        print(figures_line(result, tok))
    return 1 if (args.exit_code and changed) else 0


def cmd_explain(args):
    from engine.core.report import explain, explain_data
    from engine.text.pipeline import compress

    profile = _profile(args)
    text = _read_input(args.file, _cap(profile))
    result = compress(profile, text, explain=True)
    if args.json:
        json_document(explain_data(args.file, text, result, profile))
    else:
        sys.stdout.write(explain(args.file, text, result, profile))
    return 0


def cmd_stats(args):
    from engine.core.report import stats

    # `--levels a b` and `--levels a,b` (and a mix) mean the same
    levels = [lv.strip() for word in args.levels for lv in word.split(",") if lv.strip()]
    if not levels:
        raise UserError("--levels names no level; give one or more: --levels light standard (or light,standard)")
    return stats(args.paths, levels, args.profile, args.tokenizer, args.json)


def cmd_golden(args):
    from engine.core.golden import run_golden

    return run_golden(args.dir, args.update)


def cmd_profile(args):
    import yaml

    from engine.core.profile import choice, resolve

    if args.name:
        given(args.name)
    chosen = choice(args.name)
    resolved, _ = resolve(level=args.level, chosen=chosen)
    # YAML comments: the output stays a YAML document
    print(f"# profile: {display(resolved.file)}")
    print(f"# chosen because: {chosen.why}")
    for line in chosen.notes():
        print(f"# {line}")
    if resolved.ignored:
        print(f"# machine-level keys of the project profile ignored (yours are used): {', '.join(resolved.ignored)}")
    shown = resolved.show()
    if args.with_defaults:
        from engine.hooks.compiled import compile_hooks

        print("# hooks: as a hook reads them, every default filled in (schemas/profile.schema.json)")
        shown["hooks"] = compile_hooks(resolved)
    # one write: the escaping stream (engine/cli/output.py) costs a call per write, the emitter writes per token
    sys.stdout.write(yaml.safe_dump(shown, sort_keys=False, allow_unicode=True, width=100))
    return 0


def cmd_hook(args):
    from engine.hooks.dispatch import main

    return main(args.profile, agent=args.agent, event_name=args.event)


def _scope(args):
    return "user" if getattr(args, "user", False) else "project"


def _agents(args):
    """The agents a command acts on: the one named (default claude-code), or every one found (--detect)."""
    from engine.hooks.install import agent_named

    if not getattr(args, "detect", False):
        from engine.agents import DEFAULT_AGENT

        return [agent_named(args.agent or DEFAULT_AGENT)]
    from engine.hooks.detect import found

    agents = found()
    if not agents:
        raise UserError("--detect found no agent on this machine (no agent's command on the PATH, no agent's "
                        "home folder); name one with --agent")
    return agents


def cmd_install(args):
    from engine.core.profile import load_profile, user_profile_ref
    from engine.hooks.install import check_first, idle_events, install, profile_events

    # --user writes into the user's own settings: only the user's own profile
    # may decide them, never a project profile found from the working folder.
    ref = args.profile or (user_profile_ref() if _scope(args) == "user" else None)
    hooks = load_profile(ref).hooks
    agents = _agents(args)
    for agent in agents:  # every agent's files checked before the first is written (check_first)
        check_first(_scope(args), agent=agent)
    for agent in agents:
        if args.detect:
            print(f"{agent.data['display']}:")
        plugin = _plugin_on(agent)
        if plugin and args.detect:  # the plugin answers this agent already: installing again runs every event twice
            print(f"{display(plugin)}: the engine's plugin is on; not installed again, or every event would run "
                  f"twice (engine install --agent {agent.name} installs anyway)")
            continue
        done = install(_scope(args), profile_events(hooks), args.profile, hooks["install_timeout_seconds"],
                       keep=hooks["install_backups_kept"], autocompact_pct=hooks["autocompact_pct"],
                       agent=agent.name, idle=idle_events(hooks, agent))
        _say_installed(done, agent)
        if plugin:
            print(f"note: the engine's plugin is on as well ({display(plugin)}): every event runs twice; keep one "
                  f"(engine uninstall --agent {agent.name} --{_scope(args)}, or turn the plugin off)", file=sys.stderr)
    _fit_warnings(ref)
    return 0


def _plugin_on(agent):
    """Where the agent records the engine's plugin as on, or None (engine/hooks/pluginstate.py)."""
    from engine.core.settings import plain
    from engine.hooks.pluginstate import plugin_state

    state = plugin_state(agent, plain()["doctor"]["plugin_name"], os.getcwd())
    return state["file"] if state and state["on"] else None


def _say_installed(done, agent):
    where = display(str(done.path))
    if done.changed:
        print(f"{where}: hooks added for {', '.join(done.events)}" if done.events else f"{where}: no hook added")
    else:
        print(f"{where}: hooks already installed" + ("" if done.files else "; nothing changed"))
    if done.skipped:
        print(f"skipped (events {agent.data['display']} does not have): {', '.join(done.skipped)}")
    if done.edited:
        print(_edited_note(done, agent), file=sys.stderr)
    _list_files("wrote", done.files)
    if done.todo:
        print("to do before the hooks run:")
        for line in done.todo:
            print(f"  {line}")


def _edited_note(done, agent):
    """The line for events where the user's edit of the engine's hook runs the engine already."""
    return (f"note: {display(str(done.path))}: at {', '.join(done.edited)} a hook of the engine's, edited (not as "
            "engine install writes it), runs the engine already: left as it is, and no second one added (the engine "
            "would run twice at each event); to have engine install's own there, remove that entry (or restore it as "
            f"engine install writes it) and run engine install --agent {agent.name} again")


def _list_files(title, files):
    """Every file install or uninstall wrote or removed, one a line: a user
    sees all that changed on their machine, records in the state folder too."""
    if not files:
        return
    print(title + ":")
    width = max((len(display(str(p))) for p, _ in files), default=0)
    for p, what in files:
        print(f"  {display(str(p)).ljust(width)}  {what}")


def cmd_uninstall(args):
    from engine.core.profile import load_profile
    from engine.hooks.install import check_first, uninstall

    try:
        keep = load_profile(None).hooks["install_backups_kept"]
    except (UserError, KeyError):  # a broken active profile must not block removing the hooks
        keep = load_profile("default").hooks["install_backups_kept"]
    agents = _agents(args)
    for agent in agents:  # every agent's files checked before the first is removed
        check_first(_scope(args), agent=agent, installing=False)
    for agent in agents:
        if args.detect:
            print(f"{agent.data['display']}:")
        done = uninstall(_scope(args), keep=keep, agent=agent.name)
        where = display(str(done.path))
        if done.changed and done.backup is None and not done.path.exists():
            print(f"{where}: hooks removed; the file held nothing else, and install had created it, so it is gone")
        else:
            print(f"{where}: hooks removed" if done.changed else f"{where}: no hooks of ours; nothing changed")
        _list_files("wrote or removed", done.files)
    return 0


def cmd_completion(args):
    from .completion import script

    sys.stdout.write(script(args.shell))
    return 0


def cmd_refresh(args):
    from engine.hooks.install import agent_named
    from engine.hooks.preview import preview

    agent = agent_named(args.agent).name if args.agent else None  # an unknown name is said, with the agents
    return preview(args.profile, args.turn, args.cwd, args.text, touched=getattr(args, "touched", None),
                   transcript=getattr(args, "transcript", None), agent=agent)
