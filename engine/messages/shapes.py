"""Reading chat messages of the common shapes, and rebuilding them with new text.

A message is a mapping with `role` and `content` (a string, or a list of
blocks).  Its text units are the strings a summary may replace: the string
content, `text` blocks, and the content of `tool_result` blocks (a string or
a list of `text` blocks).  Everything else (tool calls, images, thinking
blocks with their signatures, ids) is carried over untouched, and the input
is never modified: a rebuilt message is a new object.
"""

from dataclasses import dataclass

TOOL_CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
TOOL_RESULT_ROLES = ("tool", "function")


@dataclass
class View:
    """What the rules need to know of one message."""

    index: int  # position among the messages (not the lines of a transcript)
    role: str
    units: list  # [(path, text)]: path addresses a string inside the message
    has_tool_call: bool
    has_tool_result: bool

    @property
    def text(self):
        return "\n\n".join(t for _, t in self.units)


def view(message, index):
    """The View of one message; a value that is not a message has no units."""
    if not isinstance(message, dict):
        return View(index, "", [], False, False)
    role = message.get("role") if isinstance(message.get("role"), str) else ""
    units, call, result = [], bool(message.get("tool_calls")) or bool(message.get("function_call")), role in TOOL_RESULT_ROLES
    content = message.get("content")
    if isinstance(content, str):
        units.append((("content",), content))
    elif isinstance(content, list):
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                units.append((("content", i, "text"), block["text"]))
            elif kind in TOOL_CALL_BLOCKS:
                call = True
            elif kind == "tool_result":
                result = True
                inner = block.get("content")
                if isinstance(inner, str):
                    units.append((("content", i, "content"), inner))
                elif isinstance(inner, list):
                    for j, sub in enumerate(inner):
                        if isinstance(sub, dict) and sub.get("type") == "text" and isinstance(sub.get("text"), str):
                            units.append((("content", i, "content", j, "text"), sub["text"]))
    return View(index, role, units, call, result)


def replaced(message, changes):
    """A copy of message with the strings at the given paths replaced
    ({path: text}); only the containers on those paths are copied."""
    out = dict(message)
    for path, text in changes.items():
        node = out
        for depth, key in enumerate(path[:-1]):
            child = node[key]
            child = list(child) if isinstance(child, list) else dict(child)
            node[key] = child
            node = child
        node[path[-1]] = text
    return out


def transcript_messages(lines):
    """[(line index, message)] of the chat messages in parsed Claude Code
    transcript lines: `user` and `assistant` lines with a `message` mapping.
    Other lines (progress, system, summaries, snapshots) are not messages."""
    out = []
    for i, line in enumerate(lines):
        if isinstance(line, dict) and line.get("type") in ("user", "assistant") and isinstance(line.get("message"), dict):
            out.append((i, line["message"]))
    return out
