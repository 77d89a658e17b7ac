"""What each `engine` subcommand does (argument parsing lives in cli.py)."""

import json
import sys

from .errors import UserError


def _read_input(name, profile):
    """The input text, read with the profile's size cap (the profile is loaded
    first: /dev/zero costs the cap, not all memory)."""
    from .sizes import read_input

    return read_input(profile, name)


def _write_output(text, path):
    if path is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    import os
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    tmp = None
    try:
        try:
            mode = os.stat(path).st_mode & 0o7777  # replacing a file keeps its permissions
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".engine-")
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        raise UserError(f"cannot write: {exc.strerror}; nothing was changed", path) from None


def _profile(args, level=None):
    from .profile import load_profile

    return load_profile(getattr(args, "profile", None), level or getattr(args, "level", None))


def cmd_compress(args):
    from .pipeline import compress

    profile = _profile(args)
    text = _read_input(args.file, profile)
    if not args.json:
        _write_output(compress(profile, text).text, args.output)
        return 0
    tok = args.tokenizer or profile.tokenizer
    result = compress(profile, text, tokenizers=(tok,))
    if args.output:
        _write_output(result.text, args.output)
    fig = {
        "file": args.file,
        "profile": profile.name,
        "level": result.level,
        "objective": profile.objective,
        "tokenizer": tok,
        "chars_before": result.chars_before,
        "chars_after": result.chars_after,
        "tokens_before": result.tokens_before[tok],
        "tokens_after": result.tokens_after[tok],
        "protected_spans": len(result.protected),
        "text": result.text if not args.output else None,
    }
    json.dump(fig, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
    return 0


def cmd_validate(args):
    from .validate import validate_paths

    problems = validate_paths(args.files, profile=args.profile)
    for p in problems:
        print(str(p), file=sys.stderr)
    return 1 if problems else 0


def cmd_diff(args):
    from .pipeline import compress
    from .report import figures_line, unified_diff

    profile = _profile(args)
    text = _read_input(args.file, profile)
    result = compress(profile, text, tokenizers=(profile.tokenizer,))
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    sys.stdout.write(unified_diff(text, result.text, args.file, f"{args.file} ({result.level})", color))
    print(figures_line(result, profile.tokenizer))
    return 0


def cmd_explain(args):
    from .pipeline import compress
    from .report import explain

    profile = _profile(args)
    text = _read_input(args.file, profile)
    result = compress(profile, text, explain=True)
    sys.stdout.write(explain(args.file, text, result, profile))
    return 0


def cmd_stats(args):
    from .report import stats

    levels = [lv.strip() for lv in args.levels.split(",") if lv.strip()]
    return stats(args.paths, levels, args.profile, args.tokenizer, args.json)


def cmd_golden(args):
    from .golden import run_golden

    return run_golden(args.dir, args.update)


def cmd_profile(args):
    import yaml

    from .profile import resolve

    resolved, _ = resolve(args.name, args.level)
    yaml.safe_dump(resolved.show(), sys.stdout, sort_keys=False, allow_unicode=True, width=100)
    return 0


def cmd_hook(args):
    from .hooks.dispatch import main

    return main(args.profile)


def _scope(args):
    return "user" if getattr(args, "user", False) else "project"


def cmd_install(args):
    from .hooks.install import install
    from .profile import load_profile

    profile = load_profile(args.profile)
    hooks = profile.hooks
    events = [e for e, hs in hooks.get("events", {}).items() if any(h.get("enabled", True) is not False for h in hs)]
    path, changed, backup = install(_scope(args), events, args.profile, hooks["install_timeout_seconds"])
    if changed:
        print(f"{path}: hooks added for {', '.join(events)}" + (f" (backup: {backup})" if backup else ""))
    else:
        print(f"{path}: already installed; nothing changed")
    return 0


def cmd_uninstall(args):
    from .hooks.install import uninstall

    path, changed, backup = uninstall(_scope(args))
    print(f"{path}: hooks removed (backup: {backup})" if changed else f"{path}: no hooks of ours; nothing changed")
    return 0


def cmd_refresh(args):
    from .hooks.preview import preview

    return preview(args.profile, args.turn, args.cwd, args.text)
