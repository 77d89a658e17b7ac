"""A neutral answer rendered in the agent's own shape.

Each answer kind an agent takes (`answers:` in its YAML) is a JSON template:
string values "{text}", "{event}", "{decision}", "{reason}", "{input}",
"{command}", "{original.KEY}" (a field of the tool output the agent
sent) and "{messages}" (request_context: the request's own messages and
the added one) are filled in (a value that is only a placeholder takes the value
whole, so "{input}" can stand for a mapping; the answer's `defaults` give
one the event lacks), and the kinds given for one event are merged into one
object.  An answer kind the agent lacks for
an event is dropped, so a handler never writes a field the agent would
misread (Codex discards a whole answer that holds a field it does not know).
"""


def fill(template, values):
    """The template with its placeholders filled in."""
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    if isinstance(template, str):
        if template.startswith("{") and template.endswith("}") and template[1:-1] in values:
            return values[template[1:-1]]
        out = template
        for key, value in values.items():
            if isinstance(value, str):
                out = out.replace("{" + key + "}", value)
        return out
    return template


def merge_into(target, extra):
    """Deep merge of two rendered templates (later keys win at the leaves)."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            merge_into(target[key], value)
        else:
            target[key] = value
    return target


class Rendered:
    """What one event prints: an object (JSON), a plain text, or nothing."""

    def __init__(self, obj=None, text=None, dropped=()):
        self.obj = obj
        self.text = text
        self.dropped = list(dropped)  # answer kinds the agent does not take at this event


def render(agent, event, context=None, user_message=None, decision=None, rewrite=None, tool_output=None,
           plain=None):
    """The agent's answer to `event` (event.Event) from neutral parts:
    context (text for the model), user_message, decision ({decision, reason}),
    rewrite (a new tool input), tool_output (the text the model reads instead
    of the tool's output), plain (text printed as it is, e.g. compaction
    instructions)."""
    kind, values = event.kind, {"event": event.agent_event}
    out, dropped = {}, []

    original = event.tool_output if isinstance(event.tool_output, dict) else {}
    values.update({f"original.{k}": v for k, v in original.items() if isinstance(v, (str, int, float, bool))})

    def add(what, extra):
        if not agent.renders(what, kind):
            dropped.append(what)
            return
        spec = agent.answer(what)
        given = dict(spec["defaults"], **values, **extra)
        merge_into(out, fill(spec["template"], given))

    if plain:
        if agent.answers_at("compaction_instructions", kind):
            return Rendered(text=plain)
        dropped.append("compaction_instructions")
    if context and agent.context_for_one_request(kind):
        _add_to_the_request(agent, event, context, add, dropped)
    elif context:
        add("context", {"text": context})
    if decision and agent.takes_decision(decision.get("decision", "")):
        add("decision", {"decision": decision["decision"], "reason": decision.get("reason", "")})
    elif decision:
        dropped.append("decision")
    if rewrite is not None:
        spec = agent.answer("decision")
        if agent.answers_at("decision", kind) and "rewrite" in spec:
            merge_into(out, fill(spec["rewrite"], dict(values, input=rewrite)))
        else:
            dropped.append("rewrite")
    if tool_output is not None:
        add("replace_output", {"text": tool_output.get("text", ""), "command": tool_output.get("command", "")})
    if user_message:
        add("user_message", {"text": user_message})
    return Rendered(obj=out or None, dropped=dropped)


def _add_to_the_request(agent, event, context, add, dropped):
    """Context for the request about to be sent (request_context): its own
    messages given back as they came, with one more after them.  Without
    the messages (a payload that lacks them) nothing can be given back."""
    messages = event.field("request_messages")
    if not isinstance(messages, list):
        dropped.append("request_context")
        return
    item = fill(agent.answer("request_context").get("item") or {}, {"text": context})
    add("request_context", {"text": context, "messages": [*messages, item]})

