"""`engine hook`: one agent event in (stdin JSON), one JSON object out.

A hook never breaks the agent: any internal problem is written as one line to
the hook log and the process exits 0 printing nothing, and so does a hook
that reaches its deadline (`hooks.deadline_ms`, see deadline.py).  One
event's output never exceeds `hooks.max_injection_chars`: the cap is applied
here, where handler outputs are merged, whatever the handlers are.  The path
of an event that injects nothing imports no YAML, JSON Schema, Jinja2 or
tokenizer: it reads the compiled profile from the cache, counts the turn and
leaves.

A hook always ends: before it loads or compiles anything it arms its
deadline and watchdog with the engine's own bound (hooks in
pipelines/settings/engine.yaml, read from a plain JSON copy when warm;
on a cold cache that built-in file is the one thing read before arming,
and the deadline counts from the process start all the same); the
profile may then only lower them.  A prompt whose deadline passes before
it was counted is counted in files on the way out (Deadline.on_expire).  A turn is counted first, from the
cheapest path: the cached hooks settings when warm, else the session's file
state (folded into Redis later, see state.py), so a cold cache, a slow
compile or a passed deadline never loses a turn.  On a cold cache one
process compiles while the others wait for it within their deadline, then
go on without the compiled profile (cache.compile_once).
"""

import os
import sys

from engine.base.paths import working_folder
from engine.core.log import Log

from .deadline import Deadline, Expired
from .handlers.part import agent_len, cut_to
from .handlers.part import as_int as _int


def read_payload(raw, log):
    """The agent's payload (a JSON object), or None with the reason logged."""
    if not raw.strip():
        log("empty stdin; nothing to do")
        return None
    from engine.base.fastjson import loads

    try:
        payload = loads(raw)
    except ValueError as exc:
        log(f"stdin is not JSON ({exc}); nothing to do")
        return None
    except RecursionError:
        log("stdin is JSON nested too deeply to read; nothing to do")
        return None
    if not isinstance(payload, dict):
        log("stdin is not a JSON object; nothing to do")
        return None
    return payload


def neutral_event(payload, agent=None, event_name=None):
    """The neutral Event (engine/agents/event.py) of one payload of `agent`
    (a built-in agent's name; the default agent when None)."""
    from engine.agents import DEFAULT_AGENT, table
    from engine.agents.event import Event

    event = Event(table.get(agent or DEFAULT_AGENT), payload, agent_event=event_name)
    if event.field("parent_session"):  # a subagent's event that names its parent
        from .lineage import settle

        settle(event)
    return event


def read_event(raw, log, agent=None, event_name=None):
    """The neutral Event of stdin, or None (logged) when it is none the agent sends."""
    payload = read_payload(raw, log)
    if payload is None:
        return None
    try:
        event = neutral_event(payload, agent, event_name)
    except KeyError:
        log(f"no built-in agent named {agent!r}; nothing to do")
        return None
    if not event.agent_event:
        key = event.agent.data.get("event_key")
        said = f"no {key} in the payload" if key else "the hook command names none (--event)"
        log(f"event has no name ({said}); nothing to do")
        return None
    from engine.agents.runner import other_runner

    runner = other_runner(event.agent)
    if runner:  # another agent runs this agent's hook in its words: not this agent's event
        log(f"{runner} runs this {event.agent.name} hook; nothing to do")
        return None
    return event


def settings_for(profile_ref, cwd, wait_until=None):
    from engine.core.profile import load_hooks

    return load_hooks(profile_ref, cwd=cwd or None, wait_until=wait_until)


def bound(log, deadline, hooks):
    """The one place a profile's hooks settings bound a hook: the log's size,
    and the deadline lowered to the profile's (never raised: Deadline.lower);
    `deadline` None (an event run inside another program) has none."""
    log.max_bytes = hooks["log"]["max_bytes"]
    if deadline is not None:
        deadline.lower(hooks["deadline_ms"], hooks["kill_after_ms"])


def bound_by_agent(deadline, event, bounds):
    """The deadline lowered before the agent's own timeout where it gives
    this event's hook less time than the engine would take (timeout_caps of
    its YAML), by the engine's margins (agent_cap_margin_ms)."""
    cap = event.agent.data["timeout_caps"].get(event.agent_event)
    if cap is not None and deadline is not None:
        margin, cap_ms = bounds["agent_cap_margin_ms"], int(cap * 1000)
        deadline.lower(cap_ms - margin["deadline"], cap_ms - margin["kill"])


def count_turn(event, hooks, bounds, log):
    """(state, turn) after counting a prompt, first thing once the event is
    read: with the cached hooks settings when there are some, else in the
    session's file state (expiry hooks.cold_ttl_hours of the engine's
    settings).  (None, 0) without a session or when no state can be kept."""
    from .state import FileState, StateError, open_state

    session = event.session
    if not session:
        return None, 0
    try:
        if hooks is None:
            files = FileState(session, int(bounds["cold_ttl_hours"] * 3600))
            return None, files.bump_turn()  # state is opened again once the profile is known
        state = open_state(session, hooks["state"], log)
        return state, state.bump_turn()
    except StateError as exc:
        ttl = hooks["state"]["ttl_hours"] if hooks is not None else bounds["cold_ttl_hours"]
        state_unavailable(session, exc, "this turn is not counted", ttl, log)
        return None, 0


def state_unavailable(session, exc, then, ttl_hours, log):
    """Log that the session's state failed (`exc`, a StateError) and what
    the event does without it (`then`); a folder in place of a state file,
    which stays until the user removes it, once per session."""
    from .state import StateBlocked, said_once

    said_once(exc if isinstance(exc, StateBlocked) else None, session, ttl_hours * 3600,
              f"state unavailable ({exc}); {then}", log)


def _open_state(event, hooks, counted, counting, log):
    """(state, turn) of the event's session: the turn this prompt counted
    (`counted`), else counted now (`counting`), else the current one."""
    from .state import StateError, open_state

    session = event.session
    if not session:
        field = event.agent.data["payload"].get("session")
        log(f"event has no session id ({field if isinstance(field, str) else 'session'}); state is not kept")
        return None, 0
    try:
        if counted is not None:
            state, turn = counted
            if state is None:  # counted in files before the profile was known
                state = open_state(session, hooks["state"], log)
                # Folds that count into Redis (when configured); the turn stays
                # the one this prompt counted: the count now is a later prompt's.
                state.current_turn()
            return state, turn
        state = open_state(session, hooks["state"], log)
        if event.kind == "session_start":
            from .state import FileState

            settings = hooks["state"]
            FileState(session, int(settings["ttl_hours"] * 3600)).prune(settings["prune_every_minutes"] * 60)
        return state, (state.bump_turn() if counting else _int(state.get().get("turn", 0)))
    except StateError as exc:
        # No counting this time, but an event that needs no count (after a
        # compaction) still re-injects.
        state_unavailable(session, exc, "this event runs without it", hooks["state"]["ttl_hours"], log)
        return None, 0


def _run_handlers(handlers, ctx, log):
    parts = []
    for h in handlers:
        if not _carried(h, ctx):
            continue
        try:
            if h.due(ctx):
                parts.extend(h.parts(ctx))
        except Exception as exc:  # one broken handler must not silence the others
            log(f"handler {h.name} failed: {type(exc).__name__}: {exc}")
    return parts


def _carried(handler, ctx):
    """Can the handler do anything at this event for this agent (its kind's
    `acts_for`: an answer the agent takes there, or the agent's way of
    compacting)?  One that cannot is not run: its work would be dropped."""
    return handler.acts_for(ctx.agent, ctx.name, handler.spec)


def handle(event, profile_ref, log, hooks=None, deadline=None, counted=None, trace=None, agent=None, chosen=None):
    """What to print for one event (a dict for JSON, a str as it is, None for
    nothing).  `event`: a neutral Event, or the agent's payload (a dict) of
    `agent`.  `counted`: (state, turn) when main() already counted this
    prompt.  `trace`: a list that receives the event's merged Answer, whose
    `origins` say which handler gave which part (engine replay reports them).
    `chosen`: the profile's Choice (engine/core/profile.py) when main()
    made it, else it is chosen here from `profile_ref` and the event's folder."""
    if isinstance(event, dict):
        event = neutral_event(event, agent)
    if chosen is None:
        from engine.core.profile import choice

        chosen = choice(profile_ref, event.cwd or None)
    if hooks is None:
        from engine.core.profile import hooks_of

        hooks = hooks_of(chosen)
    bound(log, deadline, hooks)
    name = event.kind
    if not name:
        log(f"unknown event {event.agent_event!r}; nothing to do")
        return None
    if name == "subagent_start":
        from .lineage import note

        note(event)
    if chosen.left_out:  # a project profile was left out: say why, once per session
        from .trust import note_unapproved

        note_unapproved(event, chosen, hooks, log)
    from .handlers import build

    handlers = build(hooks, name)[1].get(name, [])
    if not handlers:
        return None
    state, turn = _open_state(event, hooks, counted, name == "prompt", log)
    with _one_answer(event.session if state is not None else None, deadline, hooks, log):
        answer = _answer(event, handlers, state, turn, (profile_ref, chosen, hooks), log, trace)
    return answer.output(event, log)


def _one_answer(session, deadline, hooks, log):
    """The session's answer lock (state.OneAnswer), waited for until the
    engine's margin before the deadline; none without session state."""
    from engine.core.settings import hook_bounds

    from .state import OneAnswer

    bounds = hook_bounds()
    until = None if deadline is None else deadline.until(bounds["answer_wait_margin_ms"])
    return OneAnswer(session, until, bounds["answer_poll_ms"] / 1000.0, log,
                     ttl_seconds=hooks["state"]["ttl_hours"] * 3600)


def _answer(event, handlers, state, turn, profile, log, trace):
    """The merged Answer of the event's handlers, carried, traced, recorded
    and its marks saved in the session's state.  `profile`: (reference,
    Choice, hooks settings)."""
    from .handlers import Context

    profile_ref, chosen, hooks = profile
    ctx = Context(event, state, turn, profile_ref, hooks, log, chosen)
    parts = _run_handlers(handlers, ctx, log)
    ctx.say_nothing_found()
    source = None  # nothing to label: the quiet path does not import source.py
    if parts:
        from .source import labeller

        source = labeller(hooks, event.kind)
    answer = merge(parts, hooks["max_injection_chars"], log, source)
    if state is not None:
        _carry(event, answer, ctx)
    if trace is not None:
        trace.append(answer)
    if event.session and (answer.added or answer.tool_output):  # only an event that answered something is recorded
        record(event, answer)
    marks = answer.marks
    if marks and event.kind == "session_end":  # the state is cleared: only what outlives the session
        from .handlers.clear_state import survives

        marks = {k: v for k, v in marks.items() if survives(k)}
    if marks and state is not None:
        _save_marks(state, marks, (event.session, hooks["state"]["ttl_hours"]), log)
    return answer


def _save_marks(state, marks, session, log):
    """`session`: (its id, the state's ttl_hours), to say a lasting failure once."""
    from .state import StateError

    try:
        state.update(marks)
    except StateError as exc:
        state_unavailable(session[0], exc, "what this event changed is not saved", session[1], log)


CARRIED = "carried:context"  # the state's field of context waiting for an event that shows it


def _carry(event, answer, ctx):
    """Context said at an event whose added context the agent does not show
    (its YAML's answers.context.carry_from: Gemini's BeforeTool) waits in
    the session's state; the next event that shows context brings it first."""
    spec = event.agent.answer("context") or {}
    carry_from = spec.get("carry_from")
    if not carry_from:
        return
    if event.kind in carry_from and answer.texts:
        answer.marks[CARRIED] = "\n\n".join(t for t in [ctx.snapshot().get(CARRIED) or ""] + answer.texts if t)
        answer.texts = []
        answer.origins = [o for o in answer.origins if o[1] != "context"]
    elif event.agent.answers_at("context", event.kind):
        waiting = ctx.snapshot().get(CARRIED)
        if isinstance(waiting, str) and waiting:
            answer.texts.insert(0, waiting)
            answer.origins.insert(0, ("carried", "context", waiting))
            answer.marks[CARRIED] = ""


class Answer:
    """The merged parts of one event, and the output the agent reads."""

    def __init__(self):
        self.texts, self.marks, self.user_messages, self.stdout = [], {}, [], []
        self.decision = None
        self.tool_output = None
        self.origins = []  # (handler name, field, value) of every part kept, in order

    @property
    def added(self):
        """(handler, characters) of each text that went into the context."""
        return [(h, len(v)) for h, f, v in self.origins if f == "context"]

    @property
    def tool_output_by(self):
        return next((h for h, f, _ in self.origins if f == "tool_output"), None)

    def output(self, event, log=None):
        """A dict to print as JSON, a str to print as it is, or None: the
        parts in the agent's own answer shape (engine/agents/answer.py).  A
        part the agent does not take at this event is left out (logged)."""
        from engine.agents.answer import render

        if isinstance(event, str):  # the default agent's event of that name
            event = neutral_event({}, None, event)
        decision = rewrite = None
        if self.decision:
            rewrite = self.decision.get("input")
            decision = self.decision if self.decision.get("decision") else None
        out = render(event.agent, event, context="\n\n".join(self.texts) or None,
                     user_message="\n\n".join(self.user_messages) or None, decision=decision, rewrite=rewrite,
                     tool_output=self.tool_output, plain="\n\n".join(self.stdout) or None)
        if out.dropped and log is not None:
            log(f"{event.agent.name} takes no {', '.join(out.dropped)} at {event.agent_event}; left out")
        return out.text if out.text is not None else out.obj


def merge(parts, cap, log, source=None):
    """The Answer from handler parts (handlers/part.py), in order, such that
    the joined texts never exceed `cap` characters: a part that does not fit
    waits for the next event (pending), and a first part that is alone too
    long is cut.  The message to the user is capped the same way.
    `source(handler)`: the line that says where a part comes from
    (source.py), put before its text and its message to the user, and
    counted in the cap."""
    answer = Answer()
    texts, marks, used = answer.texts, answer.marks, 0
    for part in parts:
        name, text, m = part.name, part.text, part.marks
        label = source(name) if source else ""
        if text:
            text = label + text
        if part.user_message:
            answer.user_messages.append((label + part.user_message)[:cap])
            answer.origins.append((name, "user_message", answer.user_messages[-1]))
        if part.held:  # not sent: what the model already had in view (engine replay counts it)
            answer.origins.append((name, "in_view", part.held))
        if part.stdout:  # PreCompact's instructions to the compaction, not an injection: as written
            answer.stdout.append(part.stdout)
            answer.origins.append((name, "stdout", part.stdout))
        if part.tool_decision:
            if answer.decision is None:
                answer.decision = dict(part.tool_decision)
                answer.origins.append((name, "decision", answer.decision))
            else:
                log(f"handler {name}: a tool decision was already made this event; ignored")
        if part.tool_output and answer.tool_output is None:
            answer.tool_output = part.tool_output
            answer.origins.append((name, "tool_output", part.tool_output))
        if text:
            sep = 2 if texts else 0
            size = agent_len(text)  # as the agent counts it (UTF-16 units)
            if used + sep + size > cap:
                if texts:
                    marks[f"pending:{name}"] = 1  # no room in this event: inject on the next one
                    log(f"handler {name} deferred: this event already carries {used} characters")
                    continue
                log(f"handler {name} gave {size} characters; cut to {cap}")
                text = cut_to(text, cap)
            texts.append(text)
            answer.origins.append((name, "context", text))
            used += sep + agent_len(text)
        if m:
            marks.update(m)
    return answer


def record(event, answer):
    """One line in the session's records (engine/core/records.py): what this
    answer added to the model's context, by handler, and the tool output it
    kept out (the tool's output before, the replacement after).  Text counts
    as added only at events where the agent takes added context."""
    from engine.core import records

    conf = records.settings()
    takes = event.agent.reads_context_at(event.kind)
    added = [records.injection(h, n, conf) for h, n in answer.added] if takes else []
    kept = []
    if answer.tool_output and event.agent.answers_at("replace_output", event.kind):
        streams = event.output_streams() or ("", "")
        before = sum(len(v.encode("utf-8", "surrogatepass")) for v in streams)
        after = len(answer.tool_output.get("text", "").encode("utf-8", "surrogatepass"))
        kept.append(records.kept_out(answer.tool_output_by, before, after, conf))
    records.append(event.session, event.kind, added, kept, conf)


DRAIN_BLOCK = 65536


def _source(stdin):
    return stdin.buffer if hasattr(stdin, "buffer") else stdin


def _read_all(stdin, limit):
    """The event's payload (str), or None when it holds more than `limit`
    bytes (hooks.max_event_bytes), of which no more than that is held."""
    raw = _source(stdin).read(limit + 1)
    if len(raw) > limit:
        return None
    return raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw


def _drain(stdin):
    """Read the rest of stdin a block at a time, never held, so the agent's
    write completes."""
    src = _source(stdin)
    while src.read(DRAIN_BLOCK):
        pass


class _Run:
    """One hook process's event, as named steps (main runs them in order):
    arm the deadline, take the settings cached for the process's folder,
    read the event, take its settings, count the prompt, load the settings
    the cache lacked, handle, write."""

    def __init__(self, profile_ref, stdin, stdout, exit, agent, event_name, dropped=()):
        self.profile_ref, self.stdin, self.stdout = profile_ref, stdin, stdout
        self.agent, self.event_name = agent, event_name
        self.dropped = dropped  # the variables the project set, dropped before this ran (projectenv.py)
        self.log = Log()
        self.deadline = Deadline(self.log, exit)
        self.bounds = None  # the engine's own hooks bounds (settings.hook_bounds)
        self.raw = None  # stdin, once read
        self.said = []  # why stdin holds no event: logged once the log's bound is known
        self.counted = False  # the prompt was counted (or counting it was tried)

    def steps(self):
        self.arm()
        folder = working_folder()
        here = self.cached(folder) if folder else None  # a removed folder holds no project
        event = self.read()
        if event is None:
            return self.say_unread(here)
        self.log.about(event.agent_event, event.session)
        bound_by_agent(self.deadline, event, self.bounds)
        if self.dropped:
            from .projectenv import note

            note(self.dropped, self.log)
        if event.kind != "prompt":
            self.deadline.on_expire = None
        # The event's folder, else the process's: with neither (both gone or
        # unsaid) the root, where no project is, so the user's own profile.
        where = event.cwd or folder
        chosen, hooks = here if here and where == folder else self.cached(where or os.sep)
        counted = self.count(event, hooks) if event.kind == "prompt" else None  # before anything that could be slow
        if hooks is None:
            hooks = self.settings(chosen)
            if hooks is None:
                return None
        return self.write(handle(event, self.profile_ref, self.log, hooks, self.deadline, counted, chosen=chosen))

    def arm(self):
        """Bounded before anything is loaded: the engine's own deadline,
        lowered later by the profile's (never raised)."""
        from engine.core.settings import hook_bounds

        self.bounds = hook_bounds()
        self.deadline.on_expire = self.count_at_deadline
        self.deadline.arm(self.bounds["deadline_ms"], self.bounds["kill_after_ms"])

    def count_at_deadline(self):
        """The deadline passed before the prompt was counted (a machine so
        loaded that even reading the event took too long): count it in
        files, then leave."""
        if self.counted:
            return
        self.counted = True
        raw = self.raw if self.raw is not None else _read_all(self.stdin, self.bounds["max_event_bytes"])
        if raw is None:
            return
        ev = read_event(raw, lambda _line: None, self.agent, self.event_name)
        if ev is not None and ev.kind == "prompt":
            count_turn(ev, None, self.bounds, self.log)

    def cached(self, cwd):
        """(Choice, hooks settings from the cache or None) of the profile for
        `cwd` (first the process's folder, where the agent runs hooks, so
        almost always the event's): no compile; found, they bound the hook
        at once."""
        from engine.core.profile import cached_hooks, choice

        chosen = choice(self.profile_ref, cwd)
        hooks = cached_hooks(chosen)
        if hooks is not None:
            bound(self.log, self.deadline, hooks)
        return chosen, hooks

    def read(self):
        """The event on stdin, or None (why in self.said)."""
        limit = self.bounds["max_event_bytes"]
        raw = _read_all(self.stdin, limit)
        if raw is None:
            self.raw = ""  # no event: the deadline finds nothing to count, nor reads on
            self.said.append(f"stdin holds more than {limit} bytes (hooks.max_event_bytes); nothing to do")
            _drain(self.stdin)
            return None
        self.raw = raw
        return read_event(self.raw, self.said.append, self.agent, self.event_name)

    def say_unread(self, here):
        """Log why stdin held no event, within the profile's log bound: loaded
        (under the deadline) when it was not cached."""
        chosen, hooks = here or (None, None)
        if hooks is None and chosen is not None:
            from engine.core.profile import hooks_of

            try:
                bound(self.log, self.deadline, hooks_of(chosen, self.wait_until()))
            except Exception:  # noqa: BLE001 - the default bound then
                pass
        for line in self.said:
            self.log(line)

    def count(self, event, hooks):
        self.counted = True
        counted = count_turn(event, hooks, self.bounds, self.log)
        self.deadline.on_expire = None
        return counted

    def settings(self, chosen):
        """The hooks settings the cache lacked, loaded or compiled within the
        deadline (cache.compile_once); None when another hook is compiling
        them and did not finish in time (logged)."""
        from engine.core.cache import NotReady
        from engine.core.profile import hooks_of

        try:
            return hooks_of(chosen, self.wait_until())
        except NotReady:
            self.log("the compiled profile is not ready (another hook is compiling it); this event goes on without it")
            return None

    def wait_until(self):
        """How long a compile may be waited for: the deadline, less a margin
        to answer in."""
        return self.deadline.until(self.bounds["compile_wait_margin_ms"])

    def write(self, out):
        """Print the answer whole: the deadline cannot cut it once writing starts."""
        if out is None:
            return
        text = _as_text(out)
        self.deadline.disarm()
        self.stdout.write(text)
        self.stdout.flush()


def _as_text(out):
    """What to print for `out`: a str as it is (PreCompact), an object as JSON."""
    if isinstance(out, str):  # plain text the agent reads as it is (PreCompact)
        return out.encode("utf-8", errors="replace").decode("utf-8") + "\n"
    from engine.base.fastjson import dumps

    text = dumps(out) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (from the event): \u escapes are still JSON
        import json

        text = json.dumps(out) + "\n"
    return text


def _say_crash(log, exc):
    """One log line for what stopped the hook (the agent never sees it)."""
    try:
        from engine.base.errors import UserError  # here: an event that goes well never needs it

        if isinstance(exc, UserError):  # a profile the user must fix: say what, not "internal"
            log(f"profile not usable: {' | '.join(str(exc).splitlines())}")
        else:
            log(f"internal error: {type(exc).__name__}: {exc}")
    except Exception:
        pass


def main(profile_ref=None, stdin=None, stdout=None, exit=None, agent=None, event_name=None, dropped=()):
    """Run one event of `agent` (a built-in agent's name; the default agent
    when None), named `event_name` where the payload names none.  `exit` is
    for running inside another program (tests): called when the deadline
    passes, instead of ending the process.  `dropped`: the variables the
    project set that were dropped first (projectenv.py), for the log."""
    from . import deadline as deadline_module

    run = _Run(profile_ref, stdin or sys.stdin, stdout or sys.stdout, exit, agent, event_name, dropped)
    deadline_module.IN_HOOK = True
    try:
        run.steps()
    except Expired:
        pass  # logged by the deadline
    except BaseException as exc:  # noqa: BLE001 - the agent must never see a hook crash
        if not isinstance(exc, KeyboardInterrupt):
            _say_crash(run.log, exc)
    finally:
        run.deadline.disarm()
        deadline_module.IN_HOOK = False
    return 0


if __name__ == "__main__":
    os._exit(main())
