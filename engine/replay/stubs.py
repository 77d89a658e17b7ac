"""A shell output and the content cache's stub for it.  The agent's payload
is read as the hooks read it (engine/agents/event.Event: its shell tool's
`output:` in pipelines/agents/NAME.yaml); a replaced output is the hooks'
neutral one ({text, command}).

- `original_text`: what the shell printed, as the agent gave it to its
  hooks (stdout, then stderr);
- `stub_text`: the text of a replaced output the hooks answered;
- `wrapper_stubs`: what `engine cache run` would have printed for a call
  the hooks rewrote to run through it: each stream over the content cache's
  threshold stored (in the world's cache) and replaced by its stub; nothing
  is run.
"""


def _event(agent, payload):
    """The payload as the hooks read it (the seam's one reader of payloads)."""
    from engine.agents.event import Event

    return Event(agent, payload)


def original_text(agent, payload):
    """What the shell printed: stdout, then stderr (as the content cache
    stores it, engine/hooks/handlers/ccm_output.stored_bytes)."""
    from engine.hooks.handlers.ccm_output import stored_bytes

    return stored_bytes(_event(agent, payload).output_streams() or ("", "")).decode("utf-8", "surrogatepass")


def stub_text(value):
    """The text the model reads instead, from the answer's neutral replaced output ({text, command})."""
    if isinstance(value, str):
        return value
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) else ""


def wrapper_stubs(agent, event, payload):
    """[(original text, stub)] per stream over the threshold (each stream
    judged on its own, as engine/ccm/runner.py does), stored in the world's
    content cache."""
    from engine.ccm import config
    from engine.ccm.store import Store
    from engine.ccm.stub import render

    settings = config.load()
    ev = _event(agent, payload)
    command = ev.command or ""
    status = ev.exit_status()
    store, out = None, []
    for text in ev.output_streams() or ():
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= settings["intercept"]["bash"]["threshold_bytes"]:
            continue
        store = store or Store(settings, log=lambda _m: None)
        source = {"tool": ev.tool or event.get("tool"), "command": command, "cwd": event.get("cwd") or "",
                  "exit": status, "tool_use_id": event.get("tool_use_id")}
        key = store.put(data, source, session=str(event.get("session") or "") or None)
        if key is not None:
            out.append((text, render(settings, "template", key, store, store.meta(key), status, command) + "\n"))
    return out
