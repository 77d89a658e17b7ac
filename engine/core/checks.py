"""Semantic checks that belong to a subsystem, by the kind they check.

The core validates and compiles every document, but what a hook handler, a
message pipeline, a report style or the content cache's settings mean is
their subsystem's to say.  Each subsystem names its check here by module and
function, the way engine/text/transforms/__init__.py names transform kinds
and engine/hooks/handlers/__init__.py names handler kinds: the core imports
a check's module only when a document of that kind is checked, so nothing
in the core imports a subsystem, and a subsystem adds a kind with one line.

A compiler (COMPILERS) takes the resolved profile and returns the
subsystem's compiled part of it, as plain data.

A check takes the checked thing (a document, or a resolved profile for
"profile.hooks") and returns its problems (FILE:LINE:COL errors) or raises
them.
"""

CHECKS = {
    "messages": ("engine.messages.check", "check_pipeline"),
    "detector": ("engine.messages.check", "check_detector"),
    "report": ("engine.session.style", "problems"),
    "content_cache": ("engine.ccm.config", "semantic_errors"),
    "pricing": ("engine.replay.pricing", "problems"),
    "replay_report": ("engine.replay.render", "problems"),
    "profile.hooks": ("engine.hooks.check", "check_hooks"),
    "agent": ("engine.agents.check", "problems"),
}


# What a subsystem makes of its own part of a resolved profile when it
# compiles: the hooks settings as the hook reads them (plain data, its
# defaults filled in: engine/hooks/compiled.py).
COMPILERS = {
    "profile.hooks": ("engine.hooks.compiled", "compile_hooks"),
}


# What a subsystem calls things the core merges: a profile's event names (a
# profile may name an event in the engine's words or as an agent does; the
# agents layer knows each agent's names).  Merging by the one name makes
# `UserPromptSubmit: [{name: rules, ...}]` change the default's `prompt` handler.
NAMES = {
    "event": ("engine.agents.table", "neutral_name"),
}


def namer(kind):
    """The naming function registered for `kind` (name -> canonical name or None)."""
    module, name = NAMES[kind]
    return getattr(__import__(module, fromlist=[name]), name)


def checker(kind):
    """The check function registered for `kind`."""
    module, name = CHECKS[kind]
    return getattr(__import__(module, fromlist=[name]), name)


def compiler(kind):
    """The compile function registered for `kind` (resolved profile -> plain data)."""
    module, name = COMPILERS[kind]
    return getattr(__import__(module, fromlist=[name]), name)
