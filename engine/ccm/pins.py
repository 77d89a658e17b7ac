"""Pins: directives in the user's prompt and what they leave behind.

`ccm:pin last [level=L] [reason="..."]` pins the session's latest cached
output; `ccm:pin next ...` the next one; `ccm:pin start ...` every one until
`ccm:pin end`.  The pending `next`/range and the session's last key live in
pins/<session>.json inside the CCM folder (0600), updated under the same
kind of lock as a sidecar.
"""

import hashlib
import json
import os
import shlex

from .store import PIN_LEVELS, _atomic_write

ACTIONS = ("last", "next", "start", "end")


def expand_command(prompt, commands, typed):
    """The prompt typed as one of the engine's slash commands (`commands`:
    {name: text}, pins.slash_commands) as that command's text, its
    arguments filled in as the agent fills them; any other prompt as it is.
    The agent hands its hook what was typed and only the model the text
    (`typed`: install.slash_typed of its YAML, how a typed command reads)."""
    words = prompt.strip().split(None, 1)
    if not words or not words[0].startswith(typed["prefix"]):
        return prompt
    name = words[0][len(typed["prefix"]):]
    if "namespace_separator" in typed:  # a plugin's command, typed with the plugin's name before it
        name = name.rpartition(typed["namespace_separator"])[2]
    text = commands.get(name)
    if text is None:
        return prompt
    return text.replace(typed["arguments"], words[1].strip() if len(words) > 1 else "")


def parse(prompt, directive):
    """The directives in a prompt, in order: [(action, level or None, reason)]."""
    out = []
    for line in prompt.splitlines():
        at = line.find(directive)
        if at < 0:
            continue
        try:
            words = shlex.split(line[at + len(directive):])
        except ValueError:
            words = line[at + len(directive):].split()
        if not words or words[0] not in ACTIONS:
            continue
        level, reason = None, ""
        for w in words[1:]:
            k, _, v = w.partition("=")
            if k == "level" and v in PIN_LEVELS:
                level = v
            elif k == "reason":
                reason = v
        out.append((words[0], level, reason))
    return out


class SessionPins:
    def __init__(self, store, session):
        self.store = store
        name = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:32]  # a session id never becomes a path as it is
        self.folder = os.path.join(store.root, "pins")
        self.path = os.path.join(self.folder, name + ".json")
        self._took_next = None  # the pending `next` take() consumed (give_back returns it)

    def _locked(self, change):
        from engine.base.files import Locked

        with Locked(self.path + ".lock"):
            try:
                with open(self.path, "rb") as fh:
                    state = json.loads(fh.read())
            except (FileNotFoundError, ValueError):
                state = {}
            result = change(state)
            _atomic_write(self.path, json.dumps(state).encode())
            return result

    def apply(self, directives, default_level, project=None):
        """Handle the directives of one prompt in `project` (a real path, as
        origin.project_of finds it; None: any); what was done, as short lines."""
        from .origin import belongs

        done = []

        def change(state):
            for action, level, reason in directives:
                pin = {"level": level or default_level, "reason": reason}
                if action == "last":
                    key = state.get("last")
                    meta = self.store.meta(key) if key else None
                    # a session id met in two projects (a resumed session) pins only this project's output
                    if meta is not None and (project is None or belongs(meta, project)):
                        pin_key(self.store, key, pin["level"], pin["reason"])
                        done.append(f"pinned {key[:12]} ({pin['level']})")
                    else:
                        done.append("no cached output to pin yet")
                elif action == "next":
                    state["next"] = pin
                    done.append(f"the next cached output will be pinned ({pin['level']})")
                elif action == "start":
                    state["range"] = pin
                    done.append(f"cached outputs are pinned ({pin['level']}) until ccm:pin end")
                elif action == "end":
                    state.pop("range", None)
                    done.append("pin range ended")

        self._locked(change)
        return done

    def take(self):
        """The pin for an output being stored now (consumes a pending `next`;
        `give_back` returns it when the output is not stored after all)."""
        def change(state):
            pending = state.pop("next", None)
            self._took_next = pending
            return pending or state.get("range")

        return self._locked(change)

    def give_back(self):
        """The output `take` was for was not cached (it held a secret): a
        `next` it consumed waits for the next cached output again."""
        pending = self._took_next
        if not pending:
            return

        def change(state):
            state.setdefault("next", pending)

        self._took_next = None
        self._locked(change)

    def stored(self, key):
        def change(state):
            state["last"] = key

        self._locked(change)


def pin_key(store, key, level, reason):
    def change(meta):
        if meta is None:
            return None
        meta["pin"] = {"level": level, "reason": reason}
        return meta

    if store.update_meta(key, change) is None:
        return False
    store.audit("pin", key, level=level, reason=reason)
    return True
