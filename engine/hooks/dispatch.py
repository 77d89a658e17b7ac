"""`engine hook`: one agent event in (stdin JSON), one JSON object out.

A hook never breaks the agent: any internal problem is written as one line to
the hook log and the process exits 0 printing nothing.  The path of an event
that injects nothing imports no YAML, JSON Schema, Jinja2 or tokenizer: it
reads the compiled profile from the cache, counts the turn and leaves.
"""

import os
import sys
import time

from ..paths import state_dir_str

# Events whose hookSpecificOutput may carry additionalContext (the agent's contract).
CONTEXT_EVENTS = {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"}
# Every event the agent sends (its interface, not a setting).
KNOWN_EVENTS = CONTEXT_EVENTS | {"SubagentStop", "PreCompact", "SessionEnd", "Notification", "SubagentStart", "PermissionRequest"}


class Log:
    def __init__(self, event=None):
        self.event = event or {}

    def __call__(self, message):
        line = "{} {} session={} {}\n".format(
            time.strftime("%Y-%m-%dT%H:%M:%S"),
            self.event.get("hook_event_name", "?"),
            str(self.event.get("session_id", "?"))[:64],
            message.replace("\n", " "),
        )
        try:
            folder = state_dir_str()
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, "hook.log"), "a", encoding="utf-8") as fh:
                fh.write(line)
        except OSError:
            pass  # a full or read-only disk must not break the agent either


def read_event(raw, log):
    if not raw.strip():
        log("empty stdin; nothing to do")
        return None
    from .fastjson import loads

    try:
        event = loads(raw)
    except ValueError as exc:
        log(f"stdin is not JSON ({exc}); nothing to do")
        return None
    if not isinstance(event, dict) or not isinstance(event.get("hook_event_name"), str):
        log("event has no hook_event_name; nothing to do")
        return None
    return event


def handle(event, profile_ref, log):
    """The JSON object to print for one event, or None to print nothing."""
    from ..profile import load_hooks
    from .handlers import Context, build
    from .state import StateError, open_state

    hooks = load_hooks(profile_ref, cwd=event.get("cwd") or None)
    name = event["hook_event_name"]
    registry, by_event = build(hooks)
    handlers = by_event.get(name, [])
    counting = name == "UserPromptSubmit" and bool(by_event.get("UserPromptSubmit"))
    if name not in KNOWN_EVENTS:
        log(f"unknown event {name!r}; nothing to do")
        return None
    if not handlers and not counting:
        return None
    session = str(event.get("session_id") or "")
    if not session:
        log("event has no session_id; state is not kept")
    state, turn = None, 0
    try:
        if session:
            state = open_state(session, hooks["state"], log)
            if name == "SessionStart":
                from .state import FileState

                FileState(session, int(hooks["state"]["ttl_hours"] * 3600)).prune()
            turn = state.bump_turn() if counting else int(state.get().get("turn", 0) or 0)
    except StateError as exc:
        # No counting this time, but an event that needs no count (after a
        # compaction) still re-injects.
        log(f"state unavailable ({exc}); this event runs without it")
        state = None
    ctx = Context(event, state, turn, profile_ref, hooks, log)
    texts, marks = [], {}
    cap = hooks["max_injection_chars"]
    used = 0
    for h in handlers:
        if not h.due(ctx):
            continue
        try:
            text, m = h.run(ctx)
        except Exception as exc:  # one broken handler must not silence the others
            log(f"handler {h.name} failed: {type(exc).__name__}: {exc}")
            continue
        if text and used + len(text) + 2 > cap and texts:
            marks[f"pending:{h.name}"] = 1  # no room in this event: inject on the next one
            log(f"handler {h.name} deferred: this event already carries {used} characters")
            continue
        if m:
            marks.update(m)
        if text:
            texts.append(text)
            used += len(text) + 2
    if marks and state is not None and name != "SessionEnd":
        try:
            state.update(marks)
        except StateError as exc:
            log(f"state not saved ({exc})")
    if not texts or name not in CONTEXT_EVENTS:
        return None
    return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": "\n\n".join(texts)}}


def main(profile_ref=None, stdin=None, stdout=None):
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    log = Log()
    try:
        raw = stdin.buffer.read() if hasattr(stdin, "buffer") else stdin.read()
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", errors="replace")
        event = read_event(raw, log)
        if event is None:
            return 0
        log.event = event
        out = handle(event, profile_ref, log)
        if out is not None:
            from .fastjson import dumps

            stdout.write(dumps(out))
            stdout.write("\n")
            stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - the agent must never see a hook crash
        if isinstance(exc, KeyboardInterrupt):
            return 0
        try:
            log(f"internal error: {type(exc).__name__}: {exc}")
        except Exception:
            pass
    return 0


if __name__ == "__main__":
    os._exit(main())
