"""Whether an agent will run the hooks `engine install` wrote: each agent
keeps its own record of what its user trusted, and its YAML says where and
how (`install.trust_check`, one of the kinds below).  Read only, bounded,
never an exception: a record that cannot be read is an answer ("unknown").

- codex_hook_hashes: a hash per hook in a TOML file (Codex CLI:
  `[hooks.state."<file>:<event label>:<group>:<handler>"] trusted_hash`),
  the hash of the hook as the agent computes it (sha256 of its identity as
  canonical JSON); a project's hooks also need the project trusted.
- folder_map: {folder: level} in a JSON file (Gemini CLI's trustedFolders.json).
- folder_list: a list of folders under one of some keys of a JSON file
  (Copilot CLI's config.json).
"""

import json
import os

from engine.base.digest import sha256
from engine.base.jsonc import blank_comments
from engine.base.paths import inside

from . import entries

MAX_BYTES = 4 << 20  # a trust record larger than this is not read


def _read(path):
    from engine.base.files import read_regular

    try:  # a FIFO or a device is not waited on or read (its size says 0)
        return read_regular(path, MAX_BYTES).decode("utf-8", "replace"), None
    except FileNotFoundError:
        return "", None
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror}"
    except ValueError as exc:
        return None, f"{path} is not read: {exc}"


def read_json(path):
    text, why = _read(path)
    if text is None:
        return None, why
    if not text.strip():
        return {}, None
    try:
        return json.loads(blank_comments(text)), None
    except (ValueError, RecursionError):
        return None, f"{path} is not JSON the engine can read"


def folder_map(agent, spec, project, **_):
    path = agent.expand(os.environ.get(spec["env"]) or spec["file"]) if spec.get("env") else agent.expand(spec["file"])
    data, why = read_json(path)
    if data is None or not isinstance(data, dict):
        return {"state": "unknown", "why": why or f"{path} is not a JSON object"}
    best = None  # of the rules that cover the folder, the longest rule path decides (its own, not its parent's)
    for folder, level in data.items():
        meaning = spec["levels"].get(level) if isinstance(level, str) else None
        root = os.path.dirname(folder) if meaning == "parent" else folder
        if meaning and inside(os.path.realpath(project), os.path.realpath(root)) and (best is None or len(folder) > len(best[0])):
            best = (folder, meaning)
    if best is None or best[1] == "never":
        return {"state": "untrusted", "why": f"{project} is not trusted in {path}"}
    return {"state": "trusted", "why": f"trusted in {path}"}


def folder_list(agent, spec, project, **_):
    path = agent.expand(spec["file"])
    data, why = read_json(path)
    if data is None or not isinstance(data, dict):
        return {"state": "unknown", "why": why or f"{path} is not a JSON object"}
    listed = [f for key in spec["keys"] for f in (data.get(key) or []) if isinstance(f, str)]
    here = os.path.realpath(project)
    below = spec.get("covers") == "subfolders"  # a listed folder trusts the folders below it
    if any(inside(here, real) if below else real == here for real in map(os.path.realpath, listed)):
        return {"state": "trusted", "why": f"listed in {path}"}
    return {"state": "untrusted", "why": f"{project} is not among the trusted folders of {path}"}


def read_toml(path):
    text, why = _read(path)
    if text is None:
        return None, why
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return None, "reading the agent's TOML settings needs Python 3.11 or later (tomllib)"
    try:
        return tomllib.loads(text.removeprefix("\ufeff")), None  # Codex reads a file with a BOM (tomllib does not)
    except (ValueError, RecursionError):
        return None, f"{path} is not TOML the engine can read"


def value_at(data, keys):
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def hook_hash(spec, label, group, handler, matcher_key, cap=None):
    """The agent's hash of one hook: sha256 of its identity as canonical JSON
    (with the timeout the agent gives it: at most `cap`, its timeout_caps)."""
    from engine.agents.answer import fill

    timeout = handler.get("timeout")
    if cap is not None and isinstance(timeout, int) and timeout > cap:
        timeout = cap  # the agent cut it, and hashes what it runs
    identity = fill(spec["identity"], {"label": label, "command": handler.get("command"), "timeout": timeout})
    if matcher_key and isinstance(group, dict) and matcher_key in group:
        identity[matcher_key] = group[matcher_key]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + sha256(text.encode("utf-8")).hexdigest()


def codex_hook_hashes(agent, spec, project, settings, data, scope):
    path = agent.expand(spec["file"])
    config, why = read_toml(path)
    if config is None:
        return {"state": "unknown", "why": why}
    if scope == "project" and not _project_trusted(config, spec["project_trust"], project):
        return {"state": "untrusted", "why": f"the project {project} is not trusted in {path}"}
    states = value_at(config, spec["table"]) or {}
    matcher_key = (agent.data["install"].get("matcher") or {}).get("key")
    lists = entries.event_lists(agent, data) or {}
    counts = {"trusted": 0, "modified": 0, "untrusted": 0}
    for event, gi, hi, handler in entries.ours(agent, data):
        label = spec["labels"].get(event, event)
        key = spec["key"].format(settings=settings, label=label, group=gi, handler=hi)
        stored = value_at(states, [key, spec["field"]]) if isinstance(states, dict) else None
        now = hook_hash(spec, label, lists[event][gi], handler, matcher_key, agent.data["timeout_caps"].get(event))
        counts["untrusted" if stored is None else "trusted" if stored == now else "modified"] += 1
    return _summary(counts, path)


def _project_trusted(config, pt, project):
    """Whether the agent's config trusts the project: its folder by real
    path, or (covers: repository) a folder above it up to the root of its
    git repository, each named as written."""
    from engine.base.project import root_of

    folder = os.path.realpath(project)
    top = root_of(folder) if pt["covers"] == "repository" else folder
    while True:
        if value_at(config, [*pt["table"], folder, pt["field"]]) == pt["value"]:
            return True
        if folder == top or os.path.dirname(folder) == folder:
            return False
        folder = os.path.dirname(folder)


def _summary(counts, path):
    total = sum(counts.values())
    if total and counts["trusted"] == total:
        return {"state": "trusted", "why": f"every hook's hash is trusted in {path}"}
    if counts["modified"]:
        return {"state": "modified", "why": f"{counts['modified']} of {total} hooks changed since you trusted them "
                                            f"({path}); trust them again"}
    if counts["trusted"]:
        return {"state": "partly", "why": f"{counts['trusted']} of {total} hooks trusted in {path}"}
    return {"state": "untrusted", "why": f"no hook of ours is trusted in {path}"}


KINDS = {"codex_hook_hashes": codex_hook_hashes, "folder_map": folder_map, "folder_list": folder_list}


def check(agent, scope, project, settings, data):
    """{"state": trusted|untrusted|modified|partly|unknown|not needed, "why"}."""
    spec = agent.data["install"].get("trust_check")
    if not spec or scope not in spec["scopes"]:
        return {"state": "not needed", "why": f"{agent.data['display']} runs these hooks without asking"}
    return KINDS[spec["kind"]](agent, spec, project, settings=str(settings), data=data, scope=scope)
