"""The agent seam: everything the engine knows of one coding agent.

An agent is a YAML document (kind `agent`, pipelines/agents/): its events in
the engine's words, where its hook payload keeps each field, how an answer
adds context, replaces a tool output or decides on a tool call, where its
hook settings live, which instruction files it loads itself and when, and
which reader understands its transcript.  Python per agent only where YAML
cannot say it: the transcript readers (transcripts/).

The rule this package keeps: no module outside it names an agent's event,
payload field, transcript field, folder or tool.  Handlers see a neutral
Event (event.py) and give a neutral answer that answer.py renders in the
agent's own shape.
"""

# The built-in agent a hook serves when its command names none (the
# commands `engine install` wrote before agents had names).
DEFAULT_AGENT = "claude-code"
