"""Where each agent keeps its transcripts, and which transcript an argument
names: one place for `engine session report`, `engine replay`, `engine
purge` and `engine cache gc` alike.

The rule it keeps: transcripts are found as the agent finds them, from the
agent's declaration (pipelines/agents/NAME.yaml, `home` and `transcript`):
- `sessions`: a glob of its session files under its folder ({agent_home});
- `search`: where a session id is looked for (default: `sessions`);
- `session_id`: a pattern of a file's path under {agent_home} whose first
  group is the session id (or its first `session_id_chars` characters);
- `project_sessions` and `project_folder`: the folder of one project's
  sessions, named after the project's path (Claude Code: every character
  other than an ASCII letter or digit replaced by `-`); without them a
  project's sessions are those whose records name the project (a reader's
  `project_key`).

An agent is named by its name, or EVERY ("*") for all of them (the session
report's default); without one, Claude Code (purge reads only its
transcripts; gc searches every agent's, engine/ccm/refs.py).  A target is:
- a path to a file: that file;
- `--current`: the newest transcript of the working folder's project, of
  the agent named, or of every agent;
- a session id, or a unique prefix of one: in the project's folder first,
  else anywhere the agent keeps them.  A prefix naming several sessions is
  an error listing them; of one session's several files (an agent that
  names a file by the minute it began, resumed in a later one), the one
  written last.
"""

import glob
import os
import re

from engine.agents import DEFAULT_AGENT
from engine.base.errors import UserError

EVERY = "*"  # every agent


def _agent(agent):
    from .agent import named

    return named(agent or DEFAULT_AGENT) if agent is None or isinstance(agent, str) else agent


def _agents(agent):
    """The agents a lookup goes through: the one named (default: Claude
    Code), or every one, Claude Code first."""
    if agent != EVERY:
        return [_agent(agent)]
    from engine.agents import table

    names = table.names()
    return [_agent(n) for n in [DEFAULT_AGENT] + [n for n in names if n != DEFAULT_AGENT]]


def _spec(agent):
    return agent.data["transcript"]


def mangle(cwd, agent=None):
    """The name of a project's folder of sessions (Claude Code's:
    /home/me/my.app -> -home-me-my-app)."""
    rule = _spec(_agent(agent)).get("project_folder") or {"keep": "[A-Za-z0-9]", "replace": "-"}
    keep = re.compile(rule["keep"])
    return "".join(c if c.isascii() and keep.fullmatch(c) else rule["replace"] for c in cwd)


def _static(pattern):
    """The part of a glob before its first component with a wildcard."""
    parts = []
    for part in pattern.split("/"):
        if glob.has_magic(part) or "{" in part:
            break
        parts.append(part)
    return os.path.join(*parts) if parts else ""


def sessions_root(agent=None):
    """The folder the agent writes its transcripts into now."""
    agent = _agent(agent)
    return os.path.join(agent.home(), _static(_spec(agent).get("sessions", "")))


def homes(agent=None):
    """The agent's folder, and its default folder when its variable points
    elsewhere (a user who set it later still has sessions there)."""
    agent = _agent(agent)
    out = [agent.home()]
    default = os.path.expanduser(agent.data["home"]["default"])
    if os.path.abspath(default) != os.path.abspath(out[0]):
        out.append(default)
    return out


def transcript_roots(agent=None):
    """Every folder the agent (or EVERY agent) may have written transcripts
    into (under each of `homes`).  gc keeps what any of them names:
    deleting is the one thing that cannot be undone."""
    return [os.path.join(h, _static(_spec(a).get("sessions", ""))) for a in _agents(agent) for h in homes(a)]


def projects_root():
    """Claude Code's folder of project folders (kept for its callers)."""
    return sessions_root()


def project_dir(cwd, agent=None):
    """The folder of one project's sessions, or None when the agent keeps none."""
    agent = _agent(agent)
    pattern = _spec(agent).get("project_sessions")
    if not pattern:
        return None
    folder = pattern.replace("{project_folder}", mangle(os.path.abspath(cwd), agent))
    return os.path.join(agent.home(), os.path.dirname(folder))


def _files(agent, key="sessions", home=None):
    pattern = _spec(agent).get(key) or _spec(agent).get("sessions")
    if not pattern:
        return []
    found = glob.glob(os.path.join(glob.escape(home or agent.home()), pattern), recursive="**" in pattern)
    return [p for p in found if os.path.isfile(p)]


def session_id(agent, path, home=None):
    """The session id a file's path gives (its first characters only, for
    an agent that names files so), or None."""
    spec = _spec(agent)
    pattern = spec.get("session_id")
    if not pattern:
        return os.path.splitext(os.path.basename(path))[0]
    rel = os.path.relpath(path, home or agent.home()).replace(os.sep, "/")
    m = re.search(pattern, rel[-4096:])
    return m.group(1) if m else None


def _matches(agent, files, target):
    head = int(_spec(agent).get("session_id_chars") or 0)
    out = []
    for p in files:
        sid = session_id(agent, p)
        if sid and (sid.startswith(target) or (head and len(target) > head and target[:head] == sid)):
            out.append(p)
    return sorted(out)


def _pick(agent, target, found, where):
    exact = [p for p in found if session_id(agent, p) == target]
    if len(exact) == 1:
        return exact[0]
    if len(found) > 1:
        found = _one_file_a_session(agent, found, target)
    if len(found) == 1:
        return found[0]
    if found:
        ids = sorted({_whole_id(agent, p) for p in found})
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        raise UserError(f"session {target!r} is ambiguous under {where}: {shown}; give more of the id")
    return None


def _whole_id(agent, path):
    """A file's session id whole: from its first records where its name
    holds only the id's first characters, else from its name."""
    if _spec(agent).get("session_id_chars"):
        return head(agent, path)[0] or session_id(agent, path)
    return session_id(agent, path)


def _one_file_a_session(agent, files, target):
    """Of files whose names hold only their session id's first characters:
    those of the sessions whose whole id begins with `target`, and of each
    session's files the one written last.  Gemini CLI 0.61.0 names a chat
    file by the minute it began: a resume in a later minute leaves a file
    with the session's start alone beside the session's own, which the
    resumed run goes on writing (pipelines/agents/gemini.yaml)."""
    if not _spec(agent).get("session_id_chars"):
        return files
    last = {}
    for _written, path in sorted(_by_time(files)):
        whole = _whole_id(agent, path)
        if whole and (whole.startswith(target) or target.startswith(whole)):
            last[whole] = path
    return sorted(last.values())


def written_last_beside(agent, path):
    """The other file of `path`'s session in its folder that was written
    last, or None: where a resume's SessionStart names a file holding only
    the session's start, the run it resumes is there (_one_file_a_session).
    Only that folder is listed; a file is the session's by its name (the
    agent's `transcript.session_id`) and its whole id."""
    folder, name = os.path.split(path)
    home = os.path.dirname(folder)  # ids are read from "<folder>/<file>", as the agent's pattern ends
    short, whole = session_id(agent, path, home), _whole_id(agent, path)
    if not short or not whole:
        return None
    try:
        with os.scandir(folder) as entries:
            beside = [e.path for e in entries if e.name != name and e.is_file(follow_symlinks=False)
                      and session_id(agent, e.path, home) == short]
    except OSError:
        return None
    same = [p for p in beside if _whole_id(agent, p) == whole]
    return _newest(same)


def _project_files(agent, cwd):
    folder = project_dir(cwd, agent)
    if folder is not None:
        pattern = os.path.basename(_spec(agent)["project_sessions"])
        return [p for p in glob.glob(os.path.join(glob.escape(folder), pattern)) if os.path.isfile(p)]
    return None


def find_session(target, cwd=None, agent=None):
    """The transcript of a session id or unique id prefix, or None."""
    for a in _agents(agent):
        here = _project_files(a, cwd or os.getcwd())
        if here:
            path = _pick(a, target, _matches(a, here, target), project_dir(cwd or os.getcwd(), a))
            if path:
                return path
        path = _pick(a, target, _matches(a, _files(a, "search"), target), sessions_root(a))
        if path:
            return path
    return None


def _by_time(paths):
    """(modification time, path) of the files still there, newest first."""
    stamped = []
    for p in paths:
        try:
            stamped.append((os.path.getmtime(p), p))
        except OSError:
            continue
    return sorted(stamped, reverse=True)


def _newest(paths):
    stamped = _by_time(paths)
    return stamped[0][1] if stamped else None


def _names_project(agent, path, cwd):
    """Whether the session file's first records name the project `cwd`, as
    a session's own (not a subagent's: is_subagents)."""
    from engine.agents.transcripts import reader

    key = reader(_spec(agent)["reader"]).project_key(os.path.abspath(cwd))
    found = _head_sessions(agent, path)
    return any(r.project == key for r in found) and not _name_a_parent(found)


def is_subagents(agent, path):
    """Whether a session file is a subagent's that the agent keeps beside its
    sessions (Codex's spawned agents), no session of its own."""
    return _name_a_parent(_head_sessions(agent, path))


def _name_a_parent(found):
    """Whether a file's first Session records name a parent session."""
    return any(r.parent for r in found)


def _head_sessions(agent, path):
    """The Session records of a file's first bytes (as many as the agent's
    version is looked for in, engine/agents/version.py)."""
    from engine.agents.transcripts import head_records
    from engine.core.settings import agent_facts

    return list(head_records(_spec(agent)["reader"], path, agent_facts()["version"]["head_bytes"], ("session",)))


def head(agent, path):
    """(session id, project) a session file's first records name, each None when they do not."""
    return _id_and_project(_head_sessions(agent, path))


def _id_and_project(found):
    sid = project = None
    for r in found:
        sid, project = sid or r.id, project or r.cwd or r.project
        if sid and project:
            break
    return sid, project


def sessions(agent):
    """(path, session id, project) of every main session file of an agent:
    the id and project from its folder and name where the agent keeps a
    folder per project (Claude Code), else from its first records."""
    agent = _agent(agent)
    by_folder = bool(_spec(agent).get("project_sessions"))
    for home in homes(agent):
        for path in _files(agent, home=home):
            if by_folder:
                yield path, session_id(agent, path, home), os.path.basename(os.path.dirname(path))
                continue
            found = _head_sessions(agent, path)
            if not _name_a_parent(found):  # else a subagent's file: no session of its own
                sid, project = _id_and_project(found)
                yield path, sid or session_id(agent, path, home), project or ""


def _current_of(agent, cwd):
    here = _project_files(agent, cwd)
    if here is not None:
        return _newest(here)
    return next((p for _, p in _by_time(_files(agent)) if _names_project(agent, p, cwd)), None)


def current(cwd=None, agent=None):
    """The newest transcript of the project `cwd` (of the agent named, or of EVERY one)."""
    cwd = cwd or os.getcwd()
    agents = _agents(agent)
    found = [p for p in (_current_of(a, cwd) for a in agents) if p]
    path = _newest(found)
    if path is None:
        where = project_dir(cwd, agents[0]) or sessions_root(agents[0])
        others = "" if len(agents) == 1 else " nor in the other agents' folders"
        raise UserError(f"no session of this project ({cwd}) in {where}, the agent's folder for it{others}; "
                        "run it from the folder the agent was started in, or give a transcript file", None)
    return path


def find(target, current_, cwd, agent=None):
    if current_:
        return current(cwd, agent)
    if not target:
        raise UserError("name a session: a SESSION_ID, --current, or a transcript file (.jsonl)")
    if os.path.isfile(target):
        return target
    if os.path.isdir(target):
        raise UserError("this is a folder, not a transcript file; give a .jsonl file in it", target)
    looks_like_path = os.sep in target or target.endswith(".jsonl")
    if looks_like_path:
        raise UserError("no such transcript file; give the path of a .jsonl file", target)
    path = find_session(target, cwd, agent)
    if path is None:
        where = "the agents' folders" if agent == EVERY else sessions_root(agent)
        raise UserError(f"no session {target!r} under {where}; give its transcript file instead")
    return path


def subagent_files(agent, path):
    """A session's subagent transcripts, where the agent keeps them apart."""
    pattern = _spec(agent).get("subagents")
    if not pattern:
        return []
    stem = os.path.splitext(os.path.basename(path))[0]
    rel = pattern.replace("{session}", glob.escape(stem))
    return sorted(p for p in glob.glob(os.path.join(glob.escape(os.path.dirname(path)), rel)) if os.path.isfile(p))
