"""`engine install` / `engine uninstall` for one agent: the engine's hook
entries in that agent's settings file (user or project), as its YAML
declares them (entries.py).  Merged with what is there, a backup written
before any change, idempotent, and removable exactly: uninstall takes out
only our entries (and the extras install wrote, extras.py), removes a file
and the folders install created once they hold nothing else, and gives a
file back byte for byte when its content is what it was before install.
A settings file install cannot read as the agent does is a one-line error
and nothing is changed (settingsfile.py); so is a project's file a link
would carry out of the project (stays_inside)."""

import os
import sys
from pathlib import Path
from typing import NamedTuple, Optional

from engine.agents import DEFAULT_AGENT
from engine.base.controls import one_line
from engine.base.errors import UserError, display
from engine.base.paths import inside
from engine.base.project import project_folder

from . import entries, extras, settingsfile
from .hookcmd import hook_command


class Done(NamedTuple):
    """What install or uninstall did: the settings file, whether it changed,
    its backup (or None), and every file written or removed, as (path, what)
    pairs in the order they happened, for the command to list; the agent,
    the profile's events it lacks, the agent's events written, what the
    user must still do before the hooks run, and the agent's events where
    an edit of the engine's hook runs the engine already (none written there)."""
    path: Path
    changed: bool
    backup: Optional[Path]
    files: list
    agent: str = DEFAULT_AGENT
    skipped: tuple = ()
    events: tuple = ()
    todo: tuple = ()
    edited: tuple = ()


def agent_named(name):
    from engine.agents.table import get, names

    try:
        return get(name)
    except KeyError:
        raise UserError(f"no agent named {name!r}; the agents: {', '.join(names())}") from None


def settings_path(scope, cwd=None, agent=DEFAULT_AGENT):
    """The agent's hook settings file for `scope` (user or project)."""
    spec = agent_named(agent) if isinstance(agent, str) else agent
    template = spec.data["install"].get(scope)
    if not template:
        other = "project" if scope == "user" else "user"
        raise UserError(f"{spec.data['display']} has no {scope} hook settings the engine installs into; "
                        f"use --{other}")
    return Path(spec.expand(template, project=str(Path(cwd or os.getcwd()).absolute())))


def todo(agent, scope, cwd=None):
    """What the user must still do before the installed hooks run (the
    agent's install.trust lines for the scope)."""
    lines = (agent.data["install"].get("trust") or {}).get(scope) or ()
    project = str(Path(cwd or os.getcwd()).absolute())
    return tuple(line.replace("{agent_home}", agent.home()).replace("{project}", project) for line in lines)


class OwnHooks(NamedTuple):
    """A project's own hook files (projects_own_hooks): those holding hooks
    not the engine's, those too large to read, and the patterns that
    matched more files than were read."""
    found: list
    too_large: list
    too_many: list


def projects_own_hooks(agent, cwd=None):
    """The project's files, inside it, whose hooks not the engine's the agent
    runs once the user trusts the folder (install.folder_runs), as the
    trust lines ask: a cloned repository's own hooks, to read before trusting
    it.  Bounded (install.max_folder_hook_files, max_folder_hook_bytes): a
    file is stat'ed before it is read, and what was not read is said."""
    from engine.core.settings import folder_hook_limits

    project = str(Path(cwd or os.getcwd()).absolute())
    root = os.path.realpath(project_folder(project))
    most, cap = folder_hook_limits()
    own = OwnHooks([], [], [])
    for pattern in agent.data["install"]["folder_runs"]:
        paths = _first_matches(project, pattern, most)
        if len(paths) > most:
            own.too_many.append(pattern)
        for path in paths[:most]:
            real = os.path.realpath(path)
            if not inside(real, root):
                continue  # a link out of the project is never read
            if _size(real) > cap:
                own.too_large.append(path)
            elif _holds_others(path, root):
                own.found.append(path)
    return own


def _first_matches(project, pattern, most):
    """The first `most` + 1 paths found that `pattern` names in the project, sorted."""
    import glob
    from itertools import islice

    return sorted(islice(glob.iglob(os.path.join(glob.escape(project), pattern)), most + 1))


def _size(path):
    """A file's size, before it is read (0 when it cannot be stat'ed: it runs nothing)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def planted(command, root):
    """The programs inside the project (`root`, real) that a hook command of
    the engine's shape runs, unless it is this engine's: a cloned
    repository's own bin/engine-hook is its hook, not the engine's."""
    from .hookcmd import programs, this_engines

    theirs = [p for p in programs(command) if inside(os.path.realpath(p), root)]
    return [] if this_engines(command) else theirs


def edited_events(spec, scope, cwd, data):
    """The agent's events in `data` where an edit of the engine's hook
    (entries.is_edited) naming this agent runs the engine: one of a
    project's that runs a program of the project's runs no engine."""
    root = os.path.realpath(project_folder(cwd or os.getcwd())) if scope == "project" else None
    found = []
    for event, _, _, handler in entries.edited(spec, data):
        runs = not (root and planted(entries.command_of(spec, handler), root))
        if runs and entries.named_agent(spec, handler) == spec.name and event not in found:
            found.append(event)
    return found


def _engines(value, root):
    """A command of the engine's: its shape, and no program of the project's
    (a repository's own bin/engine-hook is its hook) unless it is this engine's."""
    from .hookcmd import runs_this_engine

    return runs_this_engine(value) and not planted(value, root)


def _holds_others(path, root):
    """Does this hook file hold a hook with no command of the engine's in it?"""

    try:
        data, _ = settingsfile.load(Path(path), rewrite=False, comments=True)
    except UserError:
        return False  # a file the agent cannot read runs nothing
    for groups in (data.get("hooks") or {}).values():
        for group in groups if isinstance(groups, list) else ():
            inner = group.get("hooks") if isinstance(group, dict) else None
            for handler in inner if isinstance(inner, list) else [group]:
                values = handler.values() if isinstance(handler, dict) else ()
                if not any(_engines(v, root) for v in values):
                    return True
    return False


def others_line(spec, scope, cwd):
    """The line naming the project's own hooks that trusting the folder runs too (none for --user, or to trust)."""
    if scope != "project" or not todo(spec, scope, cwd):
        return ()
    own = projects_own_hooks(spec, cwd)
    lines = []
    if own.found:
        lines.append(f"Trusting the folder runs the project's own hooks too, not only the engine's: read them in "
                     f"{', '.join(display(f) for f in own.found)} first.")
    if own.too_large or own.too_many:
        lines.append(_unread_line(own))
    return tuple(lines)


def _unread_line(own):
    """The line naming the project's hook files install did not read (OwnHooks)."""
    from engine.core.settings import folder_hook_limits

    most, cap = folder_hook_limits()
    parts = [f"{display(f)} (larger than {cap:,} bytes)" for f in own.too_large]
    parts += [f"all but the first {most:,} files found of {one_line(p)} (more match)" for p in own.too_many]
    return (f"Not read, and may hold hooks of the project's own as well: {'; '.join(parts)} (install."
            "max_folder_hook_files and max_folder_hook_bytes in pipelines/settings/engine.yaml): read them "
            "yourself before trusting the folder.")


def profile_events(hooks):
    """The neutral events the profile runs an enabled handler at, in the
    profile's order (a key in an agent's words counts as its neutral event)."""
    from .handlers import events_of

    return [e for e, hs in events_of(hooks).items() if any(h.get("enabled") is not False for h in hs)]


def idle_events(hooks, agent):
    """The profile's events where no enabled handler can act for `agent`
    (an Agent; its kinds' acts_for): install writes no hook there, an entry
    to trust and a process for nothing (Codex CLI's PreCompact takes no
    answer and starts no background summary)."""
    from .handlers import events_of, kind_class

    def acts(e, h):
        return h.get("enabled") is not False and kind_class(h["kind"]).acts_for(agent, e, h)

    return frozenset(e for e, hs in events_of(hooks).items() if not any(acts(e, h) for h in hs))


def installed_events(hooks, agent):
    """The profile's events install writes a hook for, for `agent`."""
    idle = idle_events(hooks, agent)
    return [e for e in profile_events(hooks) if e not in idle]


def agent_events(hooks, agent=None):
    """The agent's names of the events install writes for the profile, in
    the profile's order (an event the agent lacks is left out)."""
    spec = agent_named(agent or DEFAULT_AGENT)
    wanted, _ = entries.plan(spec, installed_events(hooks, spec))
    return [name for _, name in wanted]


def tool_events(agent=None):
    """The agent's event names whose groups take a tool matcher."""
    spec = agent_named(agent or DEFAULT_AGENT)
    matcher = spec.data["install"].get("matcher")  # none: no event's groups take one
    return {name for neutral in matcher["events"] for name in spec.agent_events(neutral)} if matcher else set()


def _container(agent):
    return tuple(agent.data["install"]["container"][:-1])


def reads_comments(agent):
    """Does the agent read comments in its settings file (install.comments)?"""
    return agent.data["install"]["comments"]


def _groups(spec, events, profile_ref, cwd, timeout, idle=frozenset()):
    """([(the agent's event, our group)], the profile's events it lacks);
    none at an `idle` event (idle_events)."""
    wanted, skipped = entries.plan(spec, events)
    wanted = [(neutral, name) for neutral, name in wanted if neutral not in idle]
    by_event = spec.data["install"].get("event_arg")  # the payload does not name its event: the command does
    groups = [(name, entries.group_for(spec, neutral, name,
                                       hook_command(profile_ref, cwd, spec.name, name if by_event else None), timeout))
              for neutral, name in wanted]
    return groups, skipped


def _autocompact(spec, new, path, pct):
    """(value written or None, the variable's name or None); a note about the user's own value on stderr."""
    value, note, variable = extras.set_env(spec, new, path, pct)
    if note:
        print(f"{path}: {note}", file=sys.stderr)
    return value, variable


def stays_inside(scope, cwd=None, agent=DEFAULT_AGENT, installing=True):
    """A project's install writes only inside the project: a cloned
    repository is hostile, and its links (.claude/settings.json ->
    ~/.claude/settings.json, .claude/commands -> a folder of yours) must not
    carry a write or a removal out of it.  Every file and folder install (or
    uninstall) would write, create or remove is checked, links followed,
    before anything is written; a link that stays inside is followed.  The
    user's own settings (--user) go through their links as they are."""
    if scope != "project":
        return
    if installing:
        not_home(cwd)
    spec = agent_named(agent) if isinstance(agent, str) else agent
    root = project_folder(cwd or os.getcwd())
    path = settings_path(scope, cwd, spec)
    targets = [path, *extras.slash_targets(spec, path, installing)]
    if not installing:
        targets += settingsfile.created_folders(path)
    for target in targets:
        real = os.path.realpath(target)  # every link followed, a dangling one too
        if not inside(real, root):
            raise UserError(f"a link leads this outside the project, to {display(real)}; engine install and "
                            "uninstall change nothing outside a project: remove the link or make it point inside "
                            "the project (nothing was changed)", str(target))


def home_or_above(folder):
    """Is `folder` the user's home folder or one above it (no project's)?"""
    return inside(os.path.realpath(os.path.expanduser("~")), os.path.realpath(folder))


def not_home(cwd=None):
    """A project install in the home folder (or above it) is refused: its
    "project" settings are the user's own for every folder below (Gemini
    CLI's and Codex CLI's are the very files --user writes), and the trust
    it asks for (Gemini CLI, Copilot CLI: trust the folder) would trust
    every project under it, cloned repositories and their hooks included."""
    folder = os.path.realpath(cwd or os.getcwd())
    if home_or_above(folder):
        raise UserError(f"the working folder, {one_line(folder)}, is your home folder or above it, not a project: a "
                        "project install here "
                        "would make your own settings for every folder below, and trusting it, as an agent then asks, "
                        "would trust every project in it; use --user, or run it in the project's folder (nothing "
                        "was changed)")


def check_first(scope, cwd=None, agent=DEFAULT_AGENT, installing=True):
    """What install (or uninstall) refuses before it writes anything: a link
    out of a project, a settings file it cannot read as the agent does.
    With several agents (--detect) each is checked before the first is
    written, so one agent's broken file leaves every agent as it was."""
    spec = agent_named(agent) if isinstance(agent, str) else agent
    stays_inside(scope, cwd, spec, installing)
    settingsfile.load(settings_path(scope, cwd, spec), _container(spec), comments=reads_comments(spec))


def install(scope, events, profile_ref=None, timeout=10, cwd=None, keep=3, autocompact_pct=0, agent=DEFAULT_AGENT,
            idle=frozenset()):
    """Add our entries for the profile's `events` but the `idle` ones (and
    the agent's extras); returns a Done.  One install or uninstall at a time
    (records_locked)."""
    with settingsfile.records_locked():
        return _install(scope, events, profile_ref, timeout, cwd, keep, autocompact_pct, agent, idle)


def _install(scope, events, profile_ref, timeout, cwd, keep, autocompact_pct, agent, idle):
    spec = agent_named(agent)
    stays_inside(scope, cwd, spec)
    path = settings_path(scope, cwd, spec)
    data, original = settingsfile.load(path, _container(spec), comments=reads_comments(spec))
    new = entries.without_ours(spec, data)
    if original is None:
        new = {**spec.data["install"]["file"], **new}
    value, variable = _autocompact(spec, new, path, autocompact_pct)
    groups, skipped = _groups(spec, events, profile_ref, cwd, timeout, idle)
    edited = tuple(e for e in edited_events(spec, scope, cwd, new) if e in dict(groups))
    groups = [(name, group) for name, group in groups if name not in edited]  # a second would run it twice
    entries.add(spec, new, groups)
    done = dict(agent=spec.name, skipped=tuple(skipped), events=tuple(n for n, _ in groups),
                todo=todo(spec, scope, cwd) + others_line(spec, scope, cwd), edited=edited)
    if new == data:
        return Done(path, False, None, extras.install_slash(spec, path), **done)
    backup, made = settingsfile.write(path, new, original, keep, comments=reads_comments(spec))
    what = f"hook entries for {len(groups)} events" + (f", and {variable}={value}" if value else "")
    what += f" (none at {len(edited)} where an edited one runs the engine)" if edited else ""
    files = [(path, what if original is not None else f"created, with {what}")]
    files += [(backup, "backup of the settings file as it was")] if backup is not None else []
    files += extras.install_slash(spec, path)
    rec = settingsfile.created(path, True, made) if original is None else None
    if rec:
        files.append((rec, "record that install created the settings file (uninstall may remove it)"))
    rec = extras.env_record(path, value) if variable else None
    if rec:
        files.append((rec, f"record of the {variable} value install wrote"))
    return Done(path, True, backup, files, **done)


def uninstall(scope, cwd=None, keep=3, agent=DEFAULT_AGENT):
    """Remove our entries and the extras install wrote; returns a Done.  A
    file that install created and that now holds nothing else is removed
    (backup None), and so are the folders install created for it, when empty."""
    with settingsfile.records_locked():
        return _uninstall(scope, cwd, keep, agent)


def _uninstall(scope, cwd, keep, agent):
    spec = agent_named(agent)
    stays_inside(scope, cwd, spec, installing=False)
    path = settings_path(scope, cwd, spec)
    data, original = settingsfile.load(path, _container(spec), comments=reads_comments(spec))
    new = entries.without_ours(spec, data)
    files = extras.uninstall_slash(spec, path)
    removed_env = extras.withdraw_env(spec, new, path)
    done = dict(agent=spec.name)
    if new == data:
        return Done(path, False, None, files, **done)
    rec = extras.env_record(path, None) if removed_env else None
    what = "our hook entries" + (f" and {removed_env}" if removed_env else "")
    if entries.is_empty(spec, new) and settingsfile.created(path):
        files[:0] = _remove_created(path, original, what)
        files += [(r, "install's record: this file's entry forgotten") for r in (rec,) if r]
        return Done(path, True, None, files, **done)
    backup, _ = settingsfile.write(path, new, original, keep, exact=_as_it_was(path, new, reads_comments(spec)),
                                   comments=reads_comments(spec))
    files.insert(0, (path, what))
    if backup is not None:
        files.insert(1, (backup, "backup of the settings file as it was"))
    files += [(r, "install's record: this file's entry forgotten") for r in (rec,) if r]
    return Done(path, True, backup, files, **done)


def _remove_created(path, original, what):
    """Remove a settings file install created (and its empty folders); the lines to list."""
    target = Path(os.path.realpath(path))
    if settingsfile.current(target) != original:
        raise UserError("settings file changed while it was being updated (another program wrote it); "
                        "run the command again, nothing was changed", str(path))
    folders = settingsfile.created_folders(path)
    try:
        target.unlink()
    except OSError as exc:
        raise UserError(f"cannot remove the settings file: {exc.strerror}", str(path)) from None
    gone = settingsfile.remove_empty(folders)
    files = [(path, f"{what}, and the file (install had created it, and it held nothing else)")]
    files += [(f, "a folder install had created (it held nothing else)") for f in gone]
    rec = settingsfile.created(path, False, folders)
    if rec:
        files.append((rec, "install's record: this file's entry forgotten"))
    return files


def _as_it_was(path, new, with_comments=False, max_bytes=1 << 20):
    """The bytes of the newest backup whose content is `new` (the file as it
    was before install, its layout and comments included), or None."""
    import json
    import stat

    from engine.base.files import read_regular
    from engine.base.jsonc import blank_comments

    for backup in sorted(settingsfile.backups(path), key=lambda p: p.lstat().st_mtime_ns, reverse=True):
        try:
            # install writes regular files: a project's link (to /dev/zero, a
            # FIFO, a file outside) is not one of them, and is never read
            if not stat.S_ISREG(backup.lstat().st_mode):
                continue
            raw = read_regular(backup, max_bytes)
            text = raw.decode("utf-8")
            if json.loads(blank_comments(text) if with_comments else text) == new:
                return raw
        except (OSError, ValueError):
            continue
    return None
