"""`engine memory`: list and clear the tool memory, and preview what the
context-intelligence handlers would answer to an event.

- `engine memory list [--tool T] [--json]`
- `engine memory clear [--tool T]`
- `engine memory preview EVENT [--tool T] [--input JSON] [--transcript F]
  [--source S] [--effort E]`: the hook's answer to that event, computed
  without writing anything (the recording kinds are skipped and the session
  state is an empty one in memory).
"""

import os
import sys

from .parser import PROFILE_HELP

RECORDING = ("tool_memory_record", "tool_memory_scan", "clear_state")


def add_parser(sub):
    from .argparser import folder

    p = sub.add_parser("memory", help="tool memory (failed tool calls remembered across sessions), and a preview "
                       "of the context hooks")
    msub = p.add_subparsers(dest="memory_command", metavar="SUBCOMMAND")
    msub.required = True
    s = msub.add_parser("list", help="the remembered failures, newest first")
    s.add_argument("--tool", help="only this tool's")
    s.add_argument("--json", action="store_true", help="print a JSON list")
    s.add_argument("--profile", metavar="NAME|PATH", help=PROFILE_HELP)
    s = msub.add_parser("clear", help="forget the remembered failures (all, or one tool's)")
    s.add_argument("--tool", help="only this tool's")
    s.add_argument("--profile", metavar="NAME|PATH", help=PROFILE_HELP)
    s = msub.add_parser("preview", help="what the hooks would answer to an event (nothing is written)")
    s.add_argument("event", help="the event: in the engine's words (session_start, prompt, pre_tool, post_tool, "
                   "tool_failure, stop, pre_compact, session_end) or as the agent names it (PreToolUse ...)")
    s.add_argument("--agent", help="the agent whose event it is (default: claude-code)")
    s.add_argument("--tool", help="the agent's name of the tool called, for a tool event (default: its shell tool)")
    s.add_argument("--input", default="{}", metavar="JSON", help="the tool's input, as JSON")
    s.add_argument("--transcript", help="transcript JSONL for the context fill (Stop)")
    s.add_argument("--source", default="startup", help="SessionStart source (default: startup)")
    s.add_argument("--effort", choices=("low", "medium", "high"), help="instead of the profile's effort")
    s.add_argument("--cwd", type=folder, help="project folder (default: the working directory)")
    s.add_argument("--profile", metavar="NAME|PATH", help=PROFILE_HELP)


def _hooks(args, cwd=None):
    from engine.base.errors import UserError
    from engine.core.profile import load_profile

    profile = load_profile(args.profile, cwd=cwd)
    if "memory" not in profile.hooks:
        raise UserError("the profile has no hooks.memory (the tool memory's settings); extend the built-in "
                        "profile or add them", profile.sources[0][0] if profile.sources else None)
    return profile.hooks


def run(args):
    return {"list": _list, "clear": _clear, "preview": _preview}[args.memory_command](args)


def _store_error(exc):
    from engine.base.errors import UserError

    return UserError(f"{exc}; check hooks.memory.path in the profile")


def _list(args):
    import json

    from engine.memory import entries, store_path
    from engine.memory.store import StoreError

    hooks = _hooks(args)
    try:
        found = entries(hooks, tool=args.tool)
    except StoreError as exc:
        raise _store_error(exc) from None
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False))
        return 0
    if not found:
        print(f"no failures remembered{' for ' + args.tool if args.tool else ''} ({store_path(hooks)})")
        return 0
    for e in found:
        when = _when(e["last"])
        times = f" ({e['count']} times)" if e["count"] > 1 else ""
        print(f"[{when}] {e['tool']} -- {e['error']}{times}")
        examples = e.get("examples") or []
        if len(examples) > 1:  # one error met with several inputs: the latest different ones
            print(f"    inputs: {'; '.join(reversed(examples))}")
        elif e["input"]:
            print(f"    input: {e['input']}")
        if e["project"]:
            print(f"    project: {e['project']}")
    return 0


def _when(stamp):
    """A record's time, or `?` for one no clock can show (a damaged store)."""
    from engine.memory.store import when

    return when(stamp, "%Y-%m-%d %H:%M")


def _clear(args):
    from engine.memory import clear, store_path
    from engine.memory.store import StoreError

    hooks = _hooks(args)
    try:
        n = clear(hooks, args.tool)
    except StoreError as exc:
        raise _store_error(exc) from None
    print(f"{store_path(hooks)}: {n} entr{'y' if n == 1 else 'ies'} forgotten")
    return 0


class _MemoryState:
    """Session state for a preview: in memory, starts empty, never saved."""

    backend = "preview"

    def __init__(self):
        self.data = {}

    def get(self):
        return dict(self.data)

    def update(self, fields):
        self.data.update(fields)

    def add(self, amounts):
        for k, v in amounts.items():
            self.data[k] = self.data.get(k, 0) + v

    def bump_turn(self):
        self.data["turn"] = self.data.get("turn", 0) + 1
        return self.data["turn"]

    def clear(self):
        self.data.clear()


def _preview_event(args, cwd, tool_input):
    """The neutral event a preview feeds the handlers, as the agent would send it."""
    from engine.agents import DEFAULT_AGENT, table
    from engine.agents.event import make
    from engine.agents.table import neutral_name
    from engine.base.errors import UserError

    try:
        agent = table.get(args.agent or DEFAULT_AGENT)
    except KeyError:
        raise UserError(f"no agent named {args.agent!r}; agents: {', '.join(table.names())}") from None
    kind = neutral_name(args.event)
    if kind is None or not agent.agent_events(kind):
        raise UserError(f"{agent.name} sends no event {args.event!r}; its events: {', '.join(agent.data['events'])}")
    if args.transcript and not os.path.isfile(args.transcript):  # else previewed with no context fill, exit 0
        raise UserError("no transcript file here; give the path of a session's transcript file (.jsonl)",
                        args.transcript)
    fields = {"session": "preview", "cwd": cwd,
              "transcript": os.path.abspath(args.transcript) if args.transcript else None}
    if kind in ("pre_tool", "post_tool", "tool_failure"):
        fields.update(tool=args.tool or (agent.tool_names("shell") or [""])[0], tool_input=tool_input,
                      tool_use_id="preview")
    if kind == "session_start":
        fields["source"] = args.source
    if kind == "pre_compact":
        fields["trigger"] = "manual"
    return make(agent, kind, **fields)


def _tool_input(text):
    """--input as the tool's input: a JSON object, as every agent sends one
    (a string or a list was previewed as an input holding nothing, exit 0)."""
    import json

    from engine.base.errors import UserError

    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UserError(f"--input is not JSON ({exc}); give the tool input as a JSON object") from None
    if not isinstance(value, dict):
        raise UserError("""--input is JSON but not an object; give the tool input as a JSON object, e.g. '{"command": "ls"}'""")
    return value


def _preview(args):
    import json
    import os

    from engine.hooks.dispatch import merge
    from engine.hooks.handlers import Context, build

    cwd = os.path.abspath(args.cwd or os.getcwd())
    hooks = _hooks(args, cwd)
    if args.effort:
        hooks = dict(hooks, effort=args.effort)
    event = _preview_event(args, cwd, _tool_input(args.input))
    lines = []

    def log(message):
        lines.append(message)

    registry, by_event = build(hooks)
    ctx = Context(event, _MemoryState(), 0, args.profile, hooks, log)
    parts = []
    kinds = {spec["name"]: spec["kind"] for specs in hooks["events"].values() for spec in specs}
    for h in by_event.get(event.kind, []):
        if kinds.get(h.name) in RECORDING:
            print(f"# {h.name}: records only (skipped in a preview)")
            continue
        due = h.due(ctx)
        print(f"# {h.name}: {'due' if due else 'not due'}")
        if due:
            parts.extend(h.parts(ctx))
    fill = ctx.fill() if args.transcript else None
    if fill is not None:
        print(f"# context fill: {fill[0]:.1f}% ({fill[1]} of {fill[2]} tokens)")
    for line in lines:
        print(f"# log: {line}")
    from engine.hooks.source import labeller

    out = merge(parts, hooks["max_injection_chars"], log, labeller(hooks, event.kind)).output(event)
    if out is None:
        print("(nothing printed)")
    elif isinstance(out, str):
        sys.stdout.write(out + "\n")
    else:
        print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0
