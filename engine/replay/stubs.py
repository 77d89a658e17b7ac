"""A shell output and the content cache's stub for it, in the agent's own
shapes (its shell tool's `output:` in pipelines/agents/NAME.yaml: streams
`stdout`/`stderr`, or one `text` at a path, empty for the whole output).

- `original_text`: what the shell printed, as the agent gave it to its
  hooks (stdout, then stderr);
- `stub_text`: the text of a replaced output the hooks answered;
- `wrapper_stubs`: what `engine cache run` would have printed for a call
  the hooks rewrote to run through it: each stream over the content cache's
  threshold stored (in the world's cache) and replaced by its stub; nothing
  is run.
"""


def _at(value, path):
    for key in path.split(".") if path else ():
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _streams(agent, output):
    """[(stream name, text)] of a shell output in the agent's shape."""
    spec = agent.tools("shell").get("output") or {"stdout": "stdout", "stderr": "stderr"}
    if "text" in spec:
        text = _at(output, spec["text"])
        return [("stdout", text if isinstance(text, str) else "")]
    out = []
    for stream in ("stdout", "stderr"):
        text = _at(output, spec.get(stream) or stream)
        out.append((stream, text if isinstance(text, str) else ""))
    return out


def _payload_output(agent, payload):
    path = _path(agent, "tool_output")
    return _at(payload, path) if path else None


def _path(agent, field):
    spec = agent.data["payload"].get(field)
    return spec if isinstance(spec, str) else (spec or {}).get("path")


def original_text(agent, payload):
    """What the shell printed: stdout, then stderr (a newline between them
    when stdout does not end with one)."""
    streams = dict(_streams(agent, _payload_output(agent, payload)))
    stdout, stderr = streams.get("stdout", ""), streams.get("stderr", "")
    sep = "\n" if stdout and stderr and not stdout.endswith("\n") else ""
    return stdout + sep + stderr


def stub_text(agent, value):
    """The text the model reads instead, from the answer's replaced output."""
    if isinstance(value, str):
        return value
    streams = _streams(agent, value) if isinstance(value, dict) else []
    return streams[0][1] if streams else ""


def wrapper_stubs(agent, event, payload):
    """[(original text, stub)] per stream over the threshold (each stream
    judged on its own, as engine/ccm/runner.py does), stored in the world's
    content cache."""
    from engine.ccm import config
    from engine.ccm.store import Store
    from engine.ccm.stub import render

    settings = config.load()
    shell = agent.tools("shell")
    tool_input = _at(payload, _path(agent, "tool_input"))
    tool_input = tool_input if isinstance(tool_input, dict) else {}
    command = tool_input.get(shell.get("command") or "command")
    command = command if isinstance(command, str) else ""
    output = _payload_output(agent, payload)
    status = _at(output, (shell.get("output") or {}).get("exit_code", "")) if (shell.get("output") or {}).get(
        "exit_code") else None
    status = str(status) if status not in (None, "") else "0"
    store, out = None, []
    for _stream, text in _streams(agent, output):
        data = text.encode("utf-8", "surrogatepass")
        if len(data) <= settings["intercept"]["bash"]["threshold_bytes"]:
            continue
        store = store or Store(settings, log=lambda _m: None)
        source = {"tool": _at(payload, _path(agent, "tool")) or event.get("tool"), "command": command, "cwd": event.get("cwd") or "", "exit": status,
                  "tool_use_id": event.get("tool_use_id")}
        key = store.put(data, source, session=str(event.get("session") or "") or None)
        if key is not None:
            out.append((text, render(settings, "template", key, store, store.meta(key), status, command) + "\n"))
    return out
