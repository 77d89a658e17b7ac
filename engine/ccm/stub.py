"""The text that replaces a cached output (templates from the settings),
and finding the keys stubs name wherever they sit."""

import re

# A key as a stub writes it.  JSON never escapes these characters, so the
# raw bytes of a transcript line hold it verbatim wherever the stub sits
# (a string, a list of blocks, toolUseResult, a progress line, a subagent).
KEY_IN_TEXT = re.compile(rb"sha256:([0-9a-f]{64})")
KEY_IN_STR = re.compile(r"sha256:([0-9a-f]{64})")


def render(settings, template_name, key, store, meta, exit_code="", command="", agent=None):
    """The stub of entry `key`, for `agent` (None: any).  It names only its
    own key: a key inside the command it shows is cut short (gc would keep
    what it names)."""
    stub = settings["stub"]
    show = show_command(settings, key, agent)
    return stub[template_name].format(
        key=key, path=store.blob_path(key), bytes=meta["bytes"], lines=meta["lines"], exit=exit_code,
        command=only_own_key(store.secrets.redact(command or ""), key), pinned=meta["pin"]["level"], show=show)


def only_own_key(text, key):
    """`text` with every key but `key` shortened to its first 12 digits."""
    if "sha256:" not in text:
        return text
    return KEY_IN_STR.sub(lambda m: m.group(0) if m.group(1) == key else f"sha256:{m.group(1)[:12]}...", text)


def show_command(settings, key, agent=None):
    """The command printing `key` back, naming this engine by absolute path
    (engine/ccm/selfcmd.py): it works where `engine` is not on PATH.  For an
    agent that refuses a program named by a path outside the project, by
    name where PATH finds this engine: the model can run it."""
    from .selfcmd import engine_shell

    by_name = bool(agent and agent.tools("shell").get("refuses_paths_outside_project"))
    return settings["stub"]["show_command"].format(key=key, engine=engine_shell(by_name))


def opening(settings, template_name):
    """The fixed text a stub of this template starts with (before its first field)."""
    return settings["stub"][template_name].split("{", 1)[0]


def is_stub(text, openings):
    return isinstance(text, str) and any(o and text.startswith(o) for o in openings)


def keys_in(raw):
    """Every key named in raw bytes."""
    return {m.decode() for m in KEY_IN_TEXT.findall(raw)}


def purged_size(settings):
    """growth(texts) -> (stubs, bytes): how many of a tool result's texts
    (its string, or its text blocks one by one) are stubs of `engine purge`
    and how many more bytes the outputs they replaced held, read from each
    stub's own `bytes` field as its template (stub.purge_template) lays it
    out.  The model read the outputs, not the stubs: a report of a purged
    transcript counts them.  Purge replaces a whole text, never part of
    one: stub-like lines inside an output (a file holding one, printed)
    are what the model read, counted as they are."""
    template = settings["stub"]["purge_template"]
    parts = re.split(r"\{(\w+)\}", template)  # literal, field, literal, field, ...
    body = "".join(re.escape(part) if i % 2 == 0 else ("(?P<bytes>[0-9]+)" if part == "bytes" else "[^\n]*")
                   for i, part in enumerate(parts))
    if "(?P<bytes>" not in body or not parts[0]:
        return lambda texts: (0, 0)
    stub = re.compile(body)
    opening = parts[0]

    def growth(texts):
        stubs = extra = 0
        for text in texts:
            m = stub.fullmatch(text) if text.startswith(opening) else None
            if m is not None:
                stubs += 1
                extra += int(m.group("bytes")) - len(text.encode("utf-8", "replace"))  # as ToolResult.size
        return stubs, extra

    return growth


def purge_reader():
    """purged_size under the content cache's settings; None when they cannot
    be read (the figures are then the stubs')."""
    from engine.base.errors import UserError

    from .config import load

    try:
        return purged_size(load())
    except UserError:
        return None

