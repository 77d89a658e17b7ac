"""Where an injection comes from: the one line (`hooks.source_line`) put
before each handler's text, so a user who reads it, or a model that quotes
it, can find the handler in `engine profile show`.  The profile's name is
filled in when the profile is compiled (engine/core/compile.py); the event
and the handler here, by plain replacement (no template engine on the hook
path).  The rule it keeps: the line counts in the event's cap like the
text it labels."""


def line(settings, event, handler):
    """The source line for one handler's part, with its newline; "" when the
    profile has none.  {event} is the event the profile lists the handler
    under (a reinject at SessionStart runs the rules handler of
    UserPromptSubmit: that is where `engine profile show` shows it)."""
    fmt = settings["source_line"]
    if not fmt:
        return ""
    for name, specs in settings["events"].items():
        if any(s.get("name") == handler for s in specs):
            event = name
            break
    return fmt.replace("{event}", event).replace("{handler}", handler) + "\n"


def labeller(settings, event):
    """A function handler name -> its source line (for dispatch.merge)."""
    return lambda handler: line(settings, event, handler)
